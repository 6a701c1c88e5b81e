"""Spending caps that hold with many calls in flight: reserve before sending, settle on return.

Adding up a call's cost only once it returns lets every call already sent run past the cap
(64 in flight at a $0.01 cap spent 12.8 times the cap). Instead each call reserves an estimate
of its cost and tokens before it is sent, and a call is sent only while what was spent plus
what is reserved stays under every cap. When it does not, the call waits for calls in flight
to return (their real spend may free room) or for the run to stop.

The guarantee, whatever the estimates: a call is sent only while the known spend is under the
cap, so the run spends past a cap at most what the calls in flight after the last send cost.
Their number is recorded (`Spend.calls_in_flight_at_cap`); their replies are kept.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from llm_eval.providers.base import ChatRequest
from llm_eval.providers.pricing import configured_cost
from llm_eval.runner.stopping import RunStopped, Spend
from llm_eval.schemas import Usage

CHARS_PER_TOKEN = 3
"""A prompt's first estimate: about 4 characters a token in English, fewer in Greek."""


@dataclass(frozen=True)
class Budget:
    """Caps on one run's spend; None means no cap."""

    max_cost_usd: float | None = None
    max_total_tokens: int | None = None

    @property
    def capped(self) -> bool:
        return self.max_cost_usd is not None or self.max_total_tokens is not None

    def reached(self, spend: Spend) -> str | None:
        """Which cap the known spend has reached, or None."""
        if self.max_cost_usd is not None and spend.cost_usd >= self.max_cost_usd:
            return f"the cost reached --max-cost ${self.max_cost_usd:g}"
        if self.max_total_tokens is not None and spend.total_tokens >= self.max_total_tokens:
            return f"the tokens reached --max-total-tokens {self.max_total_tokens:,}"
        return None

    def over_cost(self, spend: Spend) -> float:
        """USD spent past the cost cap (0 without one)."""
        if self.max_cost_usd is None:
            return 0.0
        return round(max(spend.cost_usd - self.max_cost_usd, 0.0), 6)  # no float dust

    def over_tokens(self, spend: Spend) -> int:
        """Tokens used past the token cap (0 without one)."""
        if self.max_total_tokens is None:
            return 0
        return max(spend.total_tokens - self.max_total_tokens, 0)

    def unknown(self, usage: Usage, model: str) -> str | None:
        """Why a real call's usage cannot be capped, or None when it can."""
        if self.max_cost_usd is not None and usage.cost_usd is None:
            return (
                f"--max-cost: the cost of model {model!r} is unknown (give it "
                "input_cost_per_mtok / output_cost_per_mtok, or it reported no usable "
                "usage), so the spend cannot be capped"
            )
        if self.max_total_tokens is not None and usage.total_tokens is None:
            return (
                f"--max-total-tokens: model {model!r} reported no usable token count, so "
                "its use cannot be capped"
            )
        return None

    def stated(self, why: str, spend: Spend) -> str:
        """`why`, then what was really spent, how far past a cap and why it could be."""
        text = f"{why}; spent ${spend.cost_usd:.4f} and {spend.total_tokens:,} tokens"
        over = []
        if self.over_cost(spend) > 0:
            over.append(f"${self.over_cost(spend):.4f}")
        if self.over_tokens(spend) > 0:
            over.append(f"{self.over_tokens(spend):,} tokens")
        if over:
            text += (
                f", {' and '.join(over)} over the cap: {_calls(spend.calls_in_flight_at_cap)} "
                "in flight when sending stopped, every reply kept"
            )
        if spend.unknown_cost_calls:
            text += f"; {_calls(spend.unknown_cost_calls)} of unknown cost"
        if spend.calls_cancelled:
            text += f"; {_calls(spend.calls_cancelled)} cancelled in flight, not counted"
        return text


def _calls(count: int) -> str:
    return f"{count:,} call{'s' * (count != 1)}"


@dataclass
class Reservation:
    """One call's reserved share of the caps, from sending to its return."""

    model: str
    simulated: bool
    cost_usd: float = 0.0
    tokens: int = 0
    counted: bool = False
    """Whether the gate holds the reservation (only when a cap is set)."""


class SpendGate:
    """Admits model calls against the caps and adds up what they spend."""

    def __init__(self, budget: Budget, spend: Spend, on_stop: Callable[[str], None]) -> None:
        self.budget = budget
        self.spend = spend
        self.on_stop = on_stop  # told once a cap is reached or cannot be held
        self.stopped = False
        self._reserved_cost = 0.0
        self._reserved_tokens = 0
        self._in_flight: Counter[str] = Counter()
        self._after_last_send = 0
        self._largest_cost: dict[str, float] = {}
        self._largest_tokens: dict[str, int] = {}
        self._changed: asyncio.Event | None = None

    async def reserve(self, request: ChatRequest, *, simulated: bool) -> Reservation:
        """Wait until the call fits under every cap, then hold its estimate; RunStopped once
        the run stops."""
        reservation = Reservation(request.model_name, simulated)
        if not self.budget.capped:
            return reservation
        while True:
            if self.stopped:
                raise RunStopped
            cost, tokens = self._estimate(request, simulated)
            if self._fits(request.model_name, cost, tokens):
                break
            if not self._in_flight.total():  # nothing will free room: the spend is at the cap
                self._stop(self.budget.reached(self.spend) or "a cap was reached")
                raise RunStopped
            await self._wait()
        reservation.cost_usd, reservation.tokens = cost or 0.0, tokens
        reservation.counted = True
        self._reserved_cost += reservation.cost_usd
        self._reserved_tokens += tokens
        self._in_flight[request.model_name] += 1
        self._after_last_send = self._in_flight.total()
        return reservation

    def settle(self, reservation: Reservation, usage: Usage) -> None:
        """A paid call returned: count its real usage in place of its estimate."""
        self._release(reservation)
        spend, model = self.spend, reservation.model
        if usage.cost_usd is not None:
            spend.cost_usd += usage.cost_usd
            self._largest_cost[model] = max(self._largest_cost.get(model, 0.0), usage.cost_usd)
        elif not reservation.simulated:
            spend.unknown_cost_calls += 1
        if usage.total_tokens is not None:
            spend.total_tokens += usage.total_tokens
            self._largest_tokens[model] = max(self._largest_tokens.get(model, 0),
                                              usage.total_tokens)  # fmt: skip
        elif not reservation.simulated:
            spend.unknown_token_calls += 1
        why = None if reservation.simulated else self.budget.unknown(usage, model)
        why = why or self.budget.reached(spend)
        if why is not None:
            self._stop(why)

    def release(self, reservation: Reservation) -> None:
        """The call cost nothing (replayed from the cache) or failed: free its estimate."""
        self._release(reservation)

    def cancelled(self, reservation: Reservation) -> None:
        """The call was cut off in flight: the provider may charge it; it is counted apart."""
        self._release(reservation)
        self.spend.calls_cancelled += 1

    def halt(self) -> None:
        """The run stops: no call is sent any more; waiting calls give up."""
        self.stopped = True
        self._wake()

    def stated(self, why: str) -> str:
        return self.budget.stated(why, self.spend)

    def _stop(self, why: str) -> None:
        if self.stopped:
            return
        self.spend.calls_in_flight_at_cap = self._after_last_send
        self.halt()
        self.on_stop(why)

    def _estimate(self, request: ChatRequest, simulated: bool) -> tuple[float | None, int]:
        """The call's likely cost (None: unknown) and tokens: the model's largest call so
        far, else the prompt's length and the whole completion budget at its prices."""
        model = request.model_name
        cost, tokens = self._largest_cost.get(model), self._largest_tokens.get(model)
        if cost is not None and tokens is not None:
            return cost, tokens
        text = json.dumps([request.messages, request.tools], ensure_ascii=False)
        prompt = len(text) // CHARS_PER_TOKEN + 1
        if tokens is None:
            tokens = prompt + request.max_tokens
        if cost is None:
            usage = Usage(prompt_tokens=prompt, completion_tokens=request.max_tokens)
            cost = configured_cost(request.model, usage)
            if cost is None and simulated:
                cost = 0.0  # a simulated model of unknown price costs nothing
        return cost, tokens

    def _fits(self, model: str, cost: float | None, tokens: int) -> bool:
        """Whether a call may be sent: the spend plus what calls in flight reserve is under
        every cap. A call of unknown cost goes alone for its model, to learn the cost."""
        cap, spend = self.budget.max_cost_usd, self.spend
        if cap is not None:
            if spend.cost_usd + self._reserved_cost >= cap:
                return False
            if cost is None and self._in_flight[model]:
                return False
        limit = self.budget.max_total_tokens
        return limit is None or spend.total_tokens + self._reserved_tokens < limit

    def _release(self, reservation: Reservation) -> None:
        if not reservation.counted:
            return
        reservation.counted = False
        self._reserved_cost = max(self._reserved_cost - reservation.cost_usd, 0.0)
        self._reserved_tokens -= reservation.tokens
        self._in_flight[reservation.model] -= 1
        if not self._in_flight.total():  # no float drift survives an empty flight
            self._reserved_cost, self._reserved_tokens = 0.0, 0
        self._wake()

    async def _wait(self) -> None:
        if self._changed is None:
            self._changed = asyncio.Event()
        await self._changed.wait()

    def _wake(self) -> None:
        """Let every waiting call look again (the reserved total or the run changed)."""
        if self._changed is not None:
            self._changed.set()
            self._changed = None
