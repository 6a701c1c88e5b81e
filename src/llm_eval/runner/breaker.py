"""A per-model circuit breaker: an endpoint that refuses connection after connection is down.

Retrying a refused connection ten times per task makes a dead endpoint cost minutes per task,
and every task of that model holds a slot the other models' tasks wait for. Once a model's
endpoint has refused `threshold` connections in a row, the breaker opens: every later attempt
of that model fails at once as `endpoint_down` (not retried), so its remaining tasks become
error rows quickly and `--resume` runs them once the endpoint is back.
"""

from __future__ import annotations

from dataclasses import dataclass

from llm_eval.errors import ProviderError


def is_refused_connection(error: BaseException) -> bool:
    """Whether the failure's root is a refused connection (nothing listens at the address).

    Providers raise their `ProviderError` while handling the client's exception, so the
    client's chain (`ConnectionRefusedError` at its end, on both routes) is the error's
    context even where the traceback hides it.
    """
    seen: set[int] = set()
    cause: BaseException | None = error
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, ConnectionRefusedError):
            return True
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return False


@dataclass
class CircuitBreaker:
    """Counts one model's refused connections in a row; open once they reach `threshold`."""

    threshold: int = 5
    refused_in_a_row: int = 0
    is_open: bool = False

    def check(self) -> None:
        """Raise `endpoint_down` instead of sending anything once the breaker is open."""
        if self.is_open:
            raise ProviderError(
                "endpoint_down",
                f"the endpoint refused {self.threshold} connections in a row; this model's "
                "remaining tasks were not sent (run again with --resume once it is up)",
                transient=False,
            )

    def failed(self, error: ProviderError) -> None:
        """Count a refused connection; any other failure breaks the streak."""
        if not is_refused_connection(error):
            self.refused_in_a_row = 0
            return
        self.refused_in_a_row += 1
        if self.refused_in_a_row >= self.threshold:
            self.is_open = True

    def succeeded(self) -> None:
        self.refused_in_a_row = 0
