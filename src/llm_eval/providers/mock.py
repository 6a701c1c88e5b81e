"""The deterministic mock provider: simulated models that need no key and no network.

It is registered like any other provider and goes through the same runner, retry policy,
flows and tools. It reads the expected answer from the request's `TaskHint` (which real
providers never see), so its numbers are simulated and reports label them so.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import unicodedata
from collections import Counter
from typing import Any

from llm_eval.errors import ProviderError
from llm_eval.providers.base import ChatRequest, ChatResponse, Provider, TaskHint, ToolCall
from llm_eval.providers.mock_profiles import PROFILE_NAMES
from llm_eval.providers.pricing import configured_cost
from llm_eval.providers.registry import register_provider
from llm_eval.schemas import ModelConfig, Usage

WRONG_SHARE = {"easy": 0.08, "medium": 0.25, "hard": 0.5, None: 0.25}
"""flaky: share of tasks answered wrongly, by the task's difficulty (hard items fail most)."""
TRANSIENT_SHARE = 0.2  # flaky: share of first attempts that fail with a transient error
SECOND_THOUGHT_SHARE = 0.04
"""flaky: share of right Greek answers that first name a decoy, then the key with no explicit
correction cue («Πάτρα, ή μάλλον Βόλος»): replies the scorer cannot settle (`unsure`), so the
offline report shows a band and `review` has rows to walk."""
_GREEK_RE = re.compile(r"[\u0370-\u03ff\u1f00-\u1fff]")
"""Greek letters: a question written in Greek is answered in Greek, Greeklish, capitals or
without accents."""

_GREEKLISH = {
    "α": "a", "β": "v", "γ": "g", "δ": "d", "ε": "e", "ζ": "z", "η": "i", "θ": "th",
    "ι": "i", "κ": "k", "λ": "l", "μ": "m", "ν": "n", "ξ": "ks", "ο": "o", "π": "p",
    "ρ": "r", "σ": "s", "ς": "s", "τ": "t", "υ": "y", "φ": "f", "χ": "x", "ψ": "ps", "ω": "w",
}  # fmt: skip
_DIGRAPHS = (("ου", "ou"), ("αυ", "av"), ("ευ", "ev"), ("μπ", "mp"), ("ντ", "nt"))
_NUMBER = re.compile(r"^-?\d+(?:\.\d+)?$")


def unit_hash(*parts: object) -> float:
    """A deterministic number in [0, 1) from `parts` (stable across processes, unlike hash())."""
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def to_greeklish(text: str) -> str:
    """Greek to a common Greeklish spelling (accents dropped)."""
    folded = strip_accents(text.lower())
    for digraph, latin in _DIGRAPHS:
        folded = folded.replace(digraph, latin)
    return "".join(_GREEKLISH.get(ch, ch) for ch in folded)


def strip_accents(text: str) -> str:
    """Remove accents and diaeresis."""
    decomposed = unicodedata.normalize("NFD", text)
    return unicodedata.normalize(
        "NFC", "".join(c for c in decomposed if not unicodedata.combining(c))
    )


def surface_form(answer: str, hint: TaskHint, pick: float, *, greek: bool = False) -> str:
    """A correct answer written in one of several ways a real model might write it; `greek`:
    the question is written in Greek."""
    if _NUMBER.match(answer):
        forms = [f"\\boxed{{{answer}}}", f"Final answer: {answer}", f"The answer is **{answer}**.",
                 f"Απάντηση: {answer}"]  # fmt: skip
    elif hint.strict_form:
        forms = [f"Απάντηση: {answer}", f"Η απάντηση είναι: **{answer}**."]
    elif greek:
        plain = strip_accents(answer)
        forms = [f"Απάντηση: {answer}", f"Η απάντηση είναι: **{answer}**.",
                 to_greeklish(answer), plain.upper(), f"{plain}."]  # fmt: skip
    else:
        forms = [f"Final answer: {answer}", f"**{answer}**", f"The answer is {answer}."]
    return forms[int(pick * len(forms))]


def wrong_answer(answer: str) -> str:
    """A plausible near miss, so the scorer's precision is exercised too."""
    if _NUMBER.match(answer):
        return str(int(float(answer)) + 1)
    return "δεν είμαι σίγουρος" if any("α" <= c <= "ω" for c in answer.lower()) else "unknown"


@register_provider("mock")
class MockProvider(Provider):
    """Simulated model with a named behaviour profile; deterministic given its seed."""

    cacheable = False  # free and deterministic: nothing to save by caching
    simulated = True

    @classmethod
    def config_problems(cls, model: ModelConfig) -> list[tuple[str | None, str]]:
        if (model.profile or "varied") not in PROFILE_NAMES:
            known = ", ".join(PROFILE_NAMES)
            return [("profile", f"unknown mock profile {model.profile!r} (known: {known})")]
        return []

    def __init__(self, model: ModelConfig) -> None:
        super().__init__(model)
        self.profile = model.profile or "varied"
        self._attempts: Counter[str] = Counter()

    async def complete(self, request: ChatRequest) -> ChatResponse:
        hint = request.hint
        if hint is None:
            raise ProviderError(
                "bad_request",
                "the mock provider needs a task hint",
                transient=False,
                status_code=400,
            )
        await asyncio.sleep(0.002 + 0.004 * unit_hash(self.model.seed, hint.task_id, "latency"))
        self._maybe_fail(request, hint)
        answer = self._answer(hint, request.epoch)
        if request.tools and not any(m.get("role") == "tool" for m in request.messages):
            return self._tool_call(request, answer)
        content = self._content(request, hint, answer)
        return self._response(request, content)

    def _maybe_fail(self, request: ChatRequest, hint: TaskHint) -> None:
        key = json.dumps([hint.benchmark, hint.task_id, request.epoch, len(request.messages)])
        self._attempts[key] += 1
        first_attempt = self._attempts[key] == 1
        roll = unit_hash(self.model.seed, key, "transient")
        if self.profile == "flaky" and first_attempt and roll < TRANSIENT_SHARE:
            raise ProviderError(
                "rate_limit",
                "simulated 429 Too Many Requests",
                transient=True,
                status_code=429,
                retry_after_s=0.0,
            )

    def _answer(self, hint: TaskHint, epoch: int) -> str:
        wrong = unit_hash(self.model.seed, hint.benchmark, hint.task_id, epoch, "wrong")
        if self.profile == "flaky" and wrong < WRONG_SHARE.get(hint.difficulty, 0.25):
            # A weak model falls for the passage's decoy when there is one.
            if hint.distractors:
                return hint.distractors[int(wrong * 1000) % len(hint.distractors)]
            return wrong_answer(hint.answer)
        return hint.answer

    def _content(self, request: ChatRequest, hint: TaskHint, answer: str) -> str:
        tool_output = _last_tool_output(request)
        if tool_output is not None:
            # A failed tool call leaves the mock no answer but the error it read.
            said = tool_output if tool_output.startswith("error") else answer
            return f"The tool returned {tool_output}.\nFinal answer: {said}"
        pick = unit_hash(self.model.seed, hint.task_id, request.epoch, len(request.messages))
        greek = _asked_in_greek(request)
        if self._second_thought(hint, request.epoch, answer, greek):
            return f"Απάντηση: {hint.distractors[0]}, ή μάλλον {answer}."
        return surface_form(answer, hint, pick, greek=greek)

    def _second_thought(self, hint: TaskHint, epoch: int, answer: str, greek: bool) -> bool:
        """flaky: a right Greek answer given after a decoy, with no explicit correction cue."""
        return (
            self.profile == "flaky"
            and greek
            and answer == hint.answer
            and bool(hint.distractors)
            and not hint.strict_form
            and unit_hash(self.model.seed, hint.task_id, epoch, "second") < SECOND_THOUGHT_SHARE
        )

    def _tool_call(self, request: ChatRequest, answer: str) -> ChatResponse:
        """A call to the first tool the task offers, its arguments filled from its schema."""
        offered = (request.tools or [{}])[0].get("function", {})
        arguments = tool_arguments(offered.get("parameters", {}), answer)
        call = ToolCall(id="call_0", name=str(offered.get("name")), arguments=arguments)
        response = self._response(request, "")
        response.tool_calls = [call]
        response.finish_reason = "tool_calls"
        return response

    def _response(self, request: ChatRequest, content: str) -> ChatResponse:
        prompt_chars = sum(len(str(m.get("content") or "")) for m in request.messages)
        reasoning = "Simulated reasoning." if self.profile == "flaky" else None
        usage = Usage(
            prompt_tokens=max(1, prompt_chars // 4),
            completion_tokens=max(1, len(content) // 4),
            reasoning_tokens=4 if reasoning else 0,
        )
        usage.total_tokens = (usage.prompt_tokens or 0) + (usage.completion_tokens or 0)
        usage.cost_usd = configured_cost(self.model, usage)
        # A simulated latency, from the seed and the reply's length, never the wall clock: the
        # offline pipeline's outputs are then the same bytes on every machine and every run.
        hint = request.hint
        draw = unit_hash(self.model.seed, hint.task_id if hint else "", request.epoch,
                         len(request.messages), "latency")  # fmt: skip
        latency = round(0.3 + 0.9 * draw + 0.004 * len(content), 3)
        return ChatResponse(content=content, reasoning=reasoning, usage=usage,
                            finish_reason="stop", latency_s=latency)  # fmt: skip


def tool_arguments(parameters: dict[str, Any], answer: str) -> str:
    """JSON arguments for a tool's parameter schema: a `code` parameter gets a program that
    prints the answer, any other string the answer itself, a number the answer's value."""
    properties: dict[str, Any] = parameters.get("properties", {})
    literal = answer if _NUMBER.match(answer) else json.dumps(answer, ensure_ascii=False)
    values: dict[str, object] = {}
    for name in parameters.get("required", list(properties)):
        kind = properties.get(name, {}).get("type", "string")
        if name == "code":
            values[name] = f"result = {literal}\nprint(result)"
        elif kind in ("integer", "number"):
            number = float(answer) if _NUMBER.match(answer) else 0.0
            values[name] = int(number) if kind == "integer" else number
        else:
            values[name] = answer
    return json.dumps(values, ensure_ascii=False)


def _asked_in_greek(request: ChatRequest) -> bool:
    asked = (str(m.get("content") or "") for m in request.messages if m.get("role") == "user")
    return any(_GREEK_RE.search(text) for text in asked)


def _last_tool_output(request: ChatRequest) -> str | None:
    for message in reversed(request.messages):
        if message.get("role") == "tool":
            lines = str(message.get("content") or "").strip().splitlines()
            return lines[0].strip() if lines else ""
        if message.get("role") == "assistant":
            return None
    return None
