"""The shared adapter plumbing: URLs shown in errors, JSON error bodies."""

from __future__ import annotations

import pytest

from pi_context.providers._sdk import error_body, public_url


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://api.openai.com/v1/", "https://api.openai.com/v1"),
        ("http://127.0.0.1:8080/v1", "http://127.0.0.1:8080/v1"),
        ("https://user:sk-secret@proxy.example.com/v1", "https://proxy.example.com/v1"),
        ("https://llm.example.com/v1?key=sk-secret#frag", "https://llm.example.com/v1"),
        ("http://[::1]:11434/v1", "http://[::1]:11434/v1"),
    ],
)
def test_public_url_drops_credentials_and_query(url: str, shown: str) -> None:
    assert public_url(url) == shown


def test_error_body_nested_flat_and_unusable() -> None:
    nested = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    assert error_body(nested) == ("overloaded_error", "Overloaded")
    assert error_body({"message": "bad request"}) == (None, "bad request")
    assert error_body({"error": {"message": ""}}) is None
    assert error_body("not json") is None
    assert error_body(None) is None
