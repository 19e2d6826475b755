"""Error classification and overflow detection (pi's isContextOverflow)."""

from __future__ import annotations

import email.utils

import pytest

from pi_context.messages import AssistantMessage, StopReason, assistant_message, empty_usage
from pi_context.model.classify import (
    classify_message,
    is_context_overflow,
    is_overflow_text,
    is_transient_text,
    make_error,
    parse_retry_after,
)


@pytest.mark.parametrize(
    "text",
    [
        "prompt is too long: 210000 tokens > 200000 maximum",
        "This model's maximum context length is 128000 tokens. However, you requested 130000",
        "Your input exceeds the context window of this model",
        "Input token count 2000000 exceeds the maximum number of tokens allowed",
        "context_length_exceeded",
        "the request exceeds the available context size, try increasing it",
        "prompt has 9000 tokens, but the configured context size is 8192",
        "OpenAI API error (413): request too large",
        "413 Payload Too Large",
        "model_context_window_exceeded",
        "Please reduce the length of the messages or completion.",
        "input (9000 tokens) is longer than the model's context length (8192 tokens)",
    ],
)
def test_overflow_phrases(text: str) -> None:
    assert is_overflow_text(text)
    assert classify_message(text, 400) == "context_overflow"


@pytest.mark.parametrize(
    "text",
    [
        "Rate limit reached: too many tokens per minute",
        "Throttling error: Too many tokens, please wait",
        "Too many requests",
        "invalid tool schema",
    ],
)
def test_not_overflow(text: str) -> None:
    assert not is_overflow_text(text)


def test_cerebras_bare_status_is_overflow_only_for_cerebras() -> None:
    assert is_overflow_text("400 status code (no body)", "cerebras")
    assert not is_overflow_text("400 status code (no body)", "openai")


@pytest.mark.parametrize(
    ("text", "status", "kind"),
    [
        ("Rate limit reached", 429, "transient"),
        ("You exceeded your current quota, check your billing details", 429, "other"),
        ("Internal server error", 500, "transient"),
        ("Overloaded", None, "transient"),
        ("connection error: peer closed connection", None, "transient"),
        ("Incorrect API key provided", 401, "authentication"),
        ("permission denied for this model", 403, "authentication"),
        ("invalid x-api-key", None, "authentication"),
        ("messages: field required", 400, "other"),
    ],
)
def test_classify(text: str, status: int | None, kind: str) -> None:
    assert classify_message(text, status) == kind


def test_transient_text_excludes_quota() -> None:
    assert is_transient_text("503 Service Unavailable")
    assert not is_transient_text("insufficient_quota: 429")
    assert not is_transient_text("")


def _msg(
    stop: StopReason, *, input: int = 0, read: int = 0, output: int = 0, error: str | None = None
) -> AssistantMessage:
    usage = empty_usage()
    usage["input"], usage["cacheRead"], usage["output"] = input, read, output
    return assistant_message(
        [],
        api="a",
        provider="p",
        model="m",
        usage=usage,
        stop_reason=stop,
        error_message=error,
    )


def test_silent_overflow_needs_the_window() -> None:
    msg = _msg("stop", input=90_000, read=40_000)
    assert not is_context_overflow(msg)
    assert is_context_overflow(msg, 128_000)
    assert not is_context_overflow(msg, 130_000)


def test_length_stop_overflow() -> None:
    assert is_context_overflow(_msg("length", input=99_000, output=0), 100_000)
    assert not is_context_overflow(_msg("length", input=99_000, output=5), 100_000)
    assert not is_context_overflow(_msg("length", input=50_000, output=0), 100_000)


def test_error_overflow_without_window() -> None:
    assert is_context_overflow(_msg("error", error="prompt is too long"))
    assert not is_context_overflow(_msg("error", error="rate limit: prompt is too long"))
    assert not is_context_overflow(_msg("toolUse", input=10**9), 1000)


def test_retry_after_forms() -> None:
    assert parse_retry_after({"Retry-After": "12"}) == 12.0
    assert parse_retry_after({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert parse_retry_after({}) is None
    assert parse_retry_after({"retry-after": "soon"}) is None
    when = email.utils.formatdate(1_000_030, usegmt=True)
    assert parse_retry_after({"retry-after": when}, now=1_000_000) == pytest.approx(30)


def test_make_error_carries_status_and_delay() -> None:
    err = make_error("slow down", status=429, headers={"retry-after": "2"})
    assert (err.kind, err.status, err.retry_after) == ("transient", 429, 2.0)
    assert make_error("x", kind="authentication").kind == "authentication"
