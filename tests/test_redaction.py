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


@pytest.mark.parametrize(
    ("name", "secret"),
    [("api_key", True), ("X-Api-Key", True), ("access_token", True), ("clientSecret", True),
     ("Authorization", True), ("Cookie", True), ("db_password", True), ("apikey", True),
     ("max_tokens", False), ("max_total_tokens", False), ("api_key_env", False),
     ("temperature", False), ("reasoning_effort", False), ("prompt_digest", False)],
)  # fmt: skip
def test_secret_keys_are_told_by_the_words_of_their_name(name: str, secret: bool) -> None:
    from llm_eval.redaction import is_secret_key

    assert is_secret_key(name) is secret


def test_settings_lose_every_header_value_and_every_secret_named_value() -> None:
    from llm_eval.redaction import redact_settings, secret_settings

    settings = {
        "max_tokens": 4096, "model": "openai/x",
        "extra_params": {"extra_headers": {"X-Team": "plain-team-value", "X-Api-Key": "k-1"},
                         "extra_body": {"session_token": "plain-token-value", "top_k": 5}},
    }  # fmt: skip
    assert redact_settings(settings) == {
        "max_tokens": 4096, "model": "openai/x",
        "extra_params": {"extra_headers": {"X-Team": REDACTED, "X-Api-Key": REDACTED},
                         "extra_body": {"session_token": REDACTED, "top_k": 5}},
    }  # fmt: skip
    assert sorted(secret_settings(settings)) == ["k-1", "plain-team-value", "plain-token-value"]


@pytest.mark.parametrize(
    "uri",
    ["postgresql://alice:pw-1@db.example:5432/mlflow", "http://bob:p@ss-w0rd@host:5000",
     "mysql+pymysql://token-only-9@host/db"],
)  # fmt: skip
def test_uris_are_printed_with_their_credentials_masked(uri: str) -> None:
    from llm_eval.redaction import mask_uri

    masked = mask_uri(uri)
    assert "***@" in masked and not any(s in masked for s in ("pw-1", "p@ss", "ss-w0rd", "-9@"))
    assert masked.split("@")[-1] == uri.split("@")[-1]  # the host is still shown
