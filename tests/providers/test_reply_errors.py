"""`reply_failure`: the errors a provider reports inside an HTTP 200 reply."""

from __future__ import annotations

import pytest

from llm_eval.providers.reply_errors import PARTIAL_CONTENT, reply_failure


def _choice(finish_reason: str, **extra: object) -> dict[str, object]:
    return {"choices": [{"message": {"content": "so far"}, "finish_reason": finish_reason,
                         **extra}]}  # fmt: skip


def test_an_ordinary_reply_is_no_failure() -> None:
    assert reply_failure(_choice("stop")) is None
    assert reply_failure({"choices": []}) is None


@pytest.mark.parametrize(
    ("error", "kind", "transient"),
    [
        ({"code": 429, "message": "slow down"}, "rate_limit", True),
        ({"code": "502", "message": "upstream"}, "http_502", True),
        ({"code": 400, "message": "bad"}, "http_400", False),
        ({"code": "rate_limit_exceeded", "message": "m"}, "rate_limit", True),
        ({"code": "context_length_exceeded", "message": "m"}, "context_length", False),
        ({"type": "insufficient_quota", "message": "m"}, "provider_error", False),
        ({"message": "Provider disconnected"}, "provider_error", True),
        ("plain text error", "provider_error", True),
    ],
)
def test_a_top_level_error_is_classified_by_its_code(
    error: object, kind: str, transient: bool
) -> None:
    failure = reply_failure({"error": error})
    assert failure is not None and (failure.kind, failure.transient) == (kind, transient)
    assert PARTIAL_CONTENT not in failure.extra


def test_an_error_after_generation_keeps_the_partial_text_and_the_upstream_name() -> None:
    error = {"code": 502, "message": "gone", "metadata": {"provider_name": "Acme"}}
    failure = reply_failure(_choice("error", error=error))
    assert failure is not None and failure.kind == "http_502" and failure.transient
    assert failure.message == "gone (provider: Acme)"
    assert failure.extra[PARTIAL_CONTENT] == "so far"


def test_finish_reason_error_without_details_is_still_a_failure() -> None:
    failure = reply_failure(_choice("error"))
    assert failure is not None and "finish_reason 'error'" in failure.message


def test_the_providers_words_are_redacted() -> None:
    failure = reply_failure({"error": {"message": "bad key sk-abcdefghijklmnop0123"}})
    assert failure is not None and "sk-abcdefghijklmnop0123" not in failure.message
