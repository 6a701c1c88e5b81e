"""A scriptable provider: replies are taken from queues, for tests and for trying a scorer.

Registered as `scripted`, so it runs the user's own code path end to end. Each call takes the
next output of the task's own queue, else of the shared queue, else the default reply (the
expected answer after "Final answer:"). An output is a reply text, a `ChatResponse`, or a
`ProviderError` to raise. In `configs/models.yaml`, `extra_params: {outputs: [...]}` gives
the shared queue as texts.
"""

from __future__ import annotations

import asyncio
from collections import Counter, deque
from collections.abc import Iterable, Mapping

from llm_eval.errors import ProviderError
from llm_eval.providers.base import ChatRequest, ChatResponse, Provider
from llm_eval.providers.registry import register_provider
from llm_eval.schemas import ModelConfig, Usage

Output = str | ChatResponse | ProviderError


@register_provider("scripted")
class ScriptedProvider(Provider):
    """Replies from queues of scripted outputs; counts calls and the peak in flight."""

    simulated = True  # the default reply needs the expected answer

    def __init__(
        self,
        model: ModelConfig,
        outputs: Iterable[Output] = (),
        *,
        per_task: Mapping[str, Iterable[Output]] | None = None,
        delay_s: float = 0.0,
        cacheable: bool = True,
    ) -> None:
        super().__init__(model)
        configured = model.extra_params.get("outputs", [])
        self.shared: deque[Output] = deque([*outputs, *map(str, configured)])
        self.per_task = {task: deque(queue) for task, queue in (per_task or {}).items()}
        self.delay_s = delay_s
        self.cacheable = cacheable
        self.calls: Counter[str] = Counter()
        self.requests: list[ChatRequest] = []
        self.in_flight = 0
        self.peak = 0

    async def complete(self, request: ChatRequest) -> ChatResponse:
        task_id = request.hint.task_id if request.hint else ""
        self.calls[task_id] += 1
        self.requests.append(request)
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        try:
            if self.delay_s:
                await asyncio.sleep(self.delay_s)
            return self._reply(self._next(task_id, request))
        finally:
            self.in_flight -= 1

    def _next(self, task_id: str, request: ChatRequest) -> Output:
        queue = self.per_task.get(task_id)
        if queue:
            return queue.popleft()
        if self.shared:
            return self.shared.popleft()
        answer = request.hint.answer if request.hint else ""
        return f"Final answer: {answer}"

    @staticmethod
    def _reply(output: Output) -> ChatResponse:
        if isinstance(output, ProviderError):
            raise output
        if isinstance(output, ChatResponse):
            return output
        usage = Usage(prompt_tokens=10, completion_tokens=2, total_tokens=12)
        return ChatResponse(content=output, usage=usage, finish_reason="stop")
