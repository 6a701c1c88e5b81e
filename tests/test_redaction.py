"""Secrets never reach written text: known values, key shapes, and secret-looking names."""

from __future__ import annotations

import pytest

from llm_eval.redaction import REDACTED, is_secret_name, redact


def test_values_of_secret_named_variables_are_redacted_whatever_their_shape(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PROVIDER_API_KEY", "plain-words-not-key-shaped-9")
    text = redact("the server echoed plain-words-not-key-shaped-9 back")
    assert "plain-words" not in text and REDACTED in text


@pytest.mark.parametrize(
    "leak",
    [
        "sk-abcdefghijklmnop",
        "Authorization: Bearer abc.def-ghi_jkl",
        'api_key="0123456789abcdef"',
        "token=zzzzzzzzzzzz",
    ],
)
def test_key_shaped_strings_are_redacted(leak: str) -> None:
    assert REDACTED in redact(f"error: {leak} rejected")


def test_extra_secrets_are_redacted_and_ordinary_text_is_kept() -> None:
    assert redact("hello tenant-42", ["tenant-42"]) == f"hello {REDACTED}"
    assert redact("Η απάντηση είναι 42.") == "Η απάντηση είναι 42."


@pytest.mark.parametrize(
    ("name", "secret"),
    [("OPENROUTER_API_KEY", True), ("GITHUB_TOKEN", True), ("DB_PASSWORD", True),
     ("AWS_SECRET_ACCESS_KEY", True), ("HOME", False), ("PATH", False)],
)  # fmt: skip
def test_one_rule_names_secrets(name: str, secret: bool) -> None:
    assert is_secret_name(name) is secret
