"""Summary request helpers: retry classification, usage sums, output clamp, offline robustness."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_context.compaction import CompactionSettings, compact
from pi_context.compaction.offline import offline_history_summary, offline_turn_prefix_summary
from pi_context.compaction.prompts import SUMMARY_SYSTEM_PROMPT, history_prompt
from pi_context.compaction.summarize import (
    SMALL_WINDOW,
    combine_usage,
    fit_summary_prompt,
    summary_max_tokens,
)
from pi_context.errors import ProviderError
from pi_context.messages import empty_usage, text_of
from pi_context.model import ModelInfo, ModelRequest
from pi_context.model.retry import is_retryable
from pi_context.testing import ScriptedModel, ScriptedReply, reply
from tests.compaction.helpers import build_session


def error(text: str) -> dict[str, Any]:
    return {"role": "assistant", "stopReason": "error", "errorMessage": text}


def test_retry_classification() -> None:
    assert is_retryable(error("529 overloaded_error"))
    assert is_retryable(error("fetch failed: ECONNRESET"))
    assert not is_retryable(error("invalid x-api-key"))
    assert not is_retryable(error("You exceeded your current quota, check billing"))
    assert not is_retryable({"role": "assistant", "stopReason": "length"})
    assert is_retryable(error("odd"), ProviderError("odd", kind="transient"))
    assert not is_retryable(error("503"), ProviderError("503", kind="authentication"))


def test_combine_usage_sums_every_field() -> None:
    a = empty_usage()
    a["input"], a["totalTokens"] = 10, 10
    a["cost"]["total"] = 0.5
    b = dict(empty_usage(), reasoning=3)
    b["output"], b["totalTokens"] = 4, 4
    total = combine_usage(a, b)
    assert (total["input"], total["output"], total["totalTokens"]) == (10, 4, 14)
    assert total["reasoning"] == 3
    assert total["cost"]["total"] == 0.5


def test_combined_cost_is_the_providers_only_if_both_parts_are() -> None:
    a, b = empty_usage(), empty_usage()
    for first, second, expected in [
        (True, True, True),
        (True, False, False),
        (False, False, False),
    ]:
        a["cost"]["totalFromProvider"], b["cost"]["totalFromProvider"] = first, second
        assert combine_usage(a, b)["cost"]["totalFromProvider"] is expected


def test_output_limit_is_clamped_to_the_window() -> None:
    def model(window: int, max_tokens: int) -> ScriptedModel:
        return ScriptedModel([], model_info=ModelInfo("p", "m", "api", window, max_tokens))

    assert summary_max_tokens(model(200_000, 8192), 3500) == 8192
    small = summary_max_tokens(model(8000, 8192), 3500)
    assert small is not None
    assert small < 8000 - 1000
    assert summary_max_tokens(model(0, 8192), 10) is None
    assert summary_max_tokens(model(1000, 8192), 100_000) == 1


# a summary of at least this many tokens is worth asking for (the embedded model's limit is 512)
USEFUL_SUMMARY_TOKENS = 256


def window_checking_summarizer(window: int) -> ScriptedModel:
    """A model with ``window`` tokens that answers as a server would: a request whose output
    limit is too small for a useful summary, or whose input and output overflow the window,
    stops at ``length`` (a failed summary)."""

    def answer(request: ModelRequest) -> ScriptedReply:
        limit = request.options.max_tokens
        prompt = text_of(request.messages[0]["content"], "\n")
        estimated_input = math.ceil((len(prompt) + len(SUMMARY_SYSTEM_PROMPT)) / 3.5)
        if limit is None or limit < USEFUL_SUMMARY_TOKENS or estimated_input + limit > window:
            return reply("## Goal\ncut", stop_reason="length")
        return reply("## Goal\nKeep going.")

    return ScriptedModel(
        [answer, answer],
        model_info=ModelInfo("local", "small", "llama-cpp", window, 512),
    )


@pytest.mark.parametrize("window", [4096, 8192])
async def test_a_model_summary_fits_a_small_window(window: int) -> None:
    # 30 turns with 2000-character tool results: the transcript alone is larger than the window
    session = build_session(30)
    model = window_checking_summarizer(window)
    settings = CompactionSettings(keep_recent_tokens=527, summarizer="model")
    result = await compact(session, model, settings)
    assert result is not None
    assert result.summary.startswith("## Goal\nKeep going.")
    request = model.requests[0]
    assert request.options.max_tokens == 512
    prompt = text_of(request.messages[0]["content"], "\n")
    assert "characters of the conversation left out to fit the window]" in prompt
    # the newest summarized turn and the first request are both still there
    assert "Request 0:" in prompt
    assert "Request 28:" in prompt


def test_fitting_leaves_a_large_window_alone() -> None:
    big = "x" * 2_000_000
    model = ScriptedModel([], model_info=ModelInfo("p", "m", "api", SMALL_WINDOW, 8192))
    prompt = fit_summary_prompt(model, big, lambda text: history_prompt(text, None))
    assert prompt == history_prompt(big, None)


@given(st.integers(1000, SMALL_WINDOW - 1), st.integers(0, 300_000), st.integers(0, 4096))
@settings(max_examples=60, deadline=None)
def test_a_fitted_prompt_leaves_room_for_the_summary(
    window: int, transcript_chars: int, model_max: int
) -> None:
    model = ScriptedModel([], model_info=ModelInfo("p", "m", "api", window, model_max))
    prompt = fit_summary_prompt(model, "y" * transcript_chars, lambda t: history_prompt(t, None))
    limit = summary_max_tokens(model, len(prompt))
    assert limit is not None
    wanted = min(window // 4, model_max) if model_max > 0 else window // 4
    instructions_alone = math.ceil(
        (len(history_prompt("", None)) + 80 + len(SUMMARY_SYSTEM_PROMPT)) / 3.5
    )
    if instructions_alone + wanted + window // 8 <= window:
        assert limit >= wanted
    if len(prompt) < len(history_prompt("y" * transcript_chars, None)):
        assert "left out to fit the window" in prompt


text = st.text(max_size=200)
block = st.one_of(
    st.fixed_dictionaries({"type": st.just("text"), "text": text}),
    st.fixed_dictionaries(
        {
            "type": st.just("toolCall"),
            "id": text,
            "name": st.sampled_from(["read", "edit", "x"]),
            "arguments": st.dictionaries(st.sampled_from(["path", "a"]), text),
        }
    ),
    st.fixed_dictionaries({"type": st.just("thinking"), "thinking": text}),
)
message = st.one_of(
    st.fixed_dictionaries({"role": st.just("user"), "content": st.one_of(text, st.lists(block))}),
    st.fixed_dictionaries(
        {
            "role": st.just("assistant"),
            "content": st.lists(block),
            "stopReason": st.sampled_from(["stop", "toolUse", "error", "length"]),
        }
    ),
    st.fixed_dictionaries(
        {
            "role": st.just("toolResult"),
            "toolName": text,
            "isError": st.booleans(),
            "content": st.lists(block),
        }
    ),
    st.fixed_dictionaries(
        {
            "role": st.just("bashExecution"),
            "command": text,
            "output": text,
            "exitCode": st.integers(-1, 3),
            "cancelled": st.booleans(),
            "truncated": st.booleans(),
        }
    ),
    st.fixed_dictionaries({"role": st.just("compactionSummary"), "summary": text}),
)


@settings(deadline=None, max_examples=60)
@given(st.lists(message, max_size=12), st.one_of(st.none(), text), st.lists(text, max_size=3))
def test_offline_summary_always_has_every_section(
    messages: list[dict[str, Any]], previous: str | None, files: list[str]
) -> None:
    summary = offline_history_summary(messages, previous, files, [])
    lines = summary.split("\n")
    for heading in (
        "## Goal",
        "## Constraints & Preferences",
        "### Done",
        "### In Progress",
        "### Blocked",
        "## Key Decisions",
        "## Next Steps",
        "## Critical Context",
    ):
        assert lines.count(heading) == 1, heading
    prefix = offline_turn_prefix_summary(messages)
    assert prefix.startswith("## Original Request\n")
