"""Secrets never reach written text: known values, key shapes, and secret-looking names."""

from __future__ import annotations

import pytest

from llm_eval.redaction import REDACTED, is_secret_name, redact, redact_data


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


@pytest.mark.parametrize(
    ("text", "stored"),
    [("http://user:pw@host:8/v1", "http://***@host:8/v1"),
     ("base HTTPS://only-a-token@example.org/x", "base HTTPS://***@example.org/x"),
     ("mail bob@example.com, see http://host/a@b", "mail bob@example.com, see http://host/a@b")],
)  # fmt: skip
def test_url_credentials_are_redacted_and_other_at_signs_kept(text: str, stored: str) -> None:
    assert redact(text) == stored


def test_nested_data_is_redacted_everywhere_and_lone_surrogates_escaped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SERVICE_TOKEN", "plain-words-secret-7")
    data = {"label": "x plain-words-secret-7", "extra": [{"url": "http://u:p@h"}], "n": 3,
            "plain-words-secret-7": "key"}  # fmt: skip
    assert redact_data(data) == {"label": f"x {REDACTED}", "extra": [{"url": "http://***@h"}],
                                 "n": 3, REDACTED: "key"}  # fmt: skip
    assert redact("85 \ud83d") == "85 \\ud83d"
    assert redact("Ναι 😀") == "Ναι 😀"
