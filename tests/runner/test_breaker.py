"""`CircuitBreaker`: refused connections in a row open it; anything else breaks the streak."""

from __future__ import annotations

import pytest

from llm_eval.errors import ProviderError
from llm_eval.runner.breaker import CircuitBreaker, is_refused_connection


def _refused() -> ProviderError:
    try:
        raise ConnectionRefusedError(111, "Connect call failed")
    except ConnectionRefusedError:
        try:  # raised while handling the client's exception, as the providers do
            raise ProviderError("connection", "Connection error.", transient=True) from None
        except ProviderError as error:
            return error


def test_a_refused_connection_is_found_behind_the_providers_error() -> None:
    assert is_refused_connection(_refused())
    assert not is_refused_connection(ProviderError("connection", "reset", transient=True))


def test_only_refusals_in_a_row_open_the_breaker() -> None:
    breaker = CircuitBreaker(threshold=2)
    breaker.failed(_refused())
    breaker.failed(ProviderError("http_500", "oops", transient=True))
    breaker.failed(_refused())
    breaker.succeeded()
    breaker.failed(_refused())
    breaker.check()  # never two in a row: still closed
    breaker.failed(_refused())
    with pytest.raises(ProviderError) as raised:
        breaker.check()
    assert raised.value.kind == "endpoint_down" and not raised.value.transient
