"""The output limit clamped to what the window leaves (pi-ai's rule)."""

from __future__ import annotations

import math
from typing import Any

from pi_context.messages import (
    assistant_message,
    empty_usage,
    text_block,
    tool_result_message,
    user_message,
)
from pi_context.model import ModelInfo, ModelRequest, RequestOptions, complete
from pi_context.providers.anthropic import AnthropicModel
from pi_context.providers.output_cap import (
    clamp_output_to_context,
    estimate_request_tokens,
    output_cap,
)
from tests.providers.adapters import track
from tests.providers.replay_server import ReplayServer, json_reply


def info(window: int = 200_000, max_tokens: int = 64_000) -> ModelInfo:
    return ModelInfo(
        provider="anthropic",
        id="claude-x",
        api="anthropic-messages",
        context_window=window,
        max_tokens=max_tokens,
        reasoning=True,
    )


def test_room_rule() -> None:
    model = info()
    # plenty of room: the limit stands
    assert clamp_output_to_context(model, 10_000, 64_000) == 64_000
    # margin = 15% of the input: 200000 - 150000 - 22500 = 27500 < 32768,
    # so room = min(32768, 200000 - 150000 - 4096) = 32768
    assert clamp_output_to_context(model, 150_000, 64_000) == 32_768
    # nearly full: what is left after a 4096 margin
    assert clamp_output_to_context(model, 190_000, 64_000) == 5_904
    # overfull: still at least one token (the provider then reports the overflow)
    assert clamp_output_to_context(model, 250_000, 64_000) == 1
    assert clamp_output_to_context(info(window=0), 250_000, 64_000) == 64_000


def test_estimate_counts_system_messages_and_tools() -> None:
    request = ModelRequest(
        messages=[user_message("x" * 700, timestamp=1)],
        system_prompt="y" * 350,
        tools=[{"name": "t", "description": "d", "parameters": {}}],
    )
    tools_chars = len('[{"name":"t","description":"d","parameters":{}}]')
    assert estimate_request_tokens(request) == math.ceil((1050 + tools_chars) / 3.5)
    requested = ModelRequest(messages=request.messages, options=RequestOptions(max_tokens=500))
    assert output_cap(info(), requested) == 500


def reply(text: str, *, context_tokens: int, timestamp: int, stop: str = "stop") -> Any:
    usage = empty_usage()
    usage["input"] = context_tokens - 100
    usage["output"] = 100
    usage["totalTokens"] = context_tokens
    return assistant_message(
        [text_block(text)],
        api="anthropic-messages",
        provider="anthropic",
        model="claude-x",
        usage=usage,
        stop_reason=stop,  # type: ignore[arg-type]
        timestamp=timestamp,
    )


def test_estimate_trusts_the_last_reported_usage_and_adds_what_came_after() -> None:
    # the provider counted 30,000 tokens up to its reply; 3.5 chars a token would say far more
    messages = [
        user_message("x" * 140_000, timestamp=1),
        reply("ok", context_tokens=30_000, timestamp=2),
        tool_result_message("t1", "read", [text_block("y" * 700)], timestamp=3),
        user_message("z" * 351, timestamp=4),
    ]
    request = ModelRequest(messages=messages, system_prompt="s" * 7000)
    # the prefix measured 30,000 tokens over 147,002 characters: under 1 token per 4
    # characters, so what came after counts at 1 per 4 (3.5 would overstate code by ~30%)
    assert estimate_request_tokens(request) == 30_000 + 175 + math.ceil(351 / 4)


def test_estimate_counts_what_came_after_at_the_prefix_rate_when_it_is_denser() -> None:
    # dense text (CJK, minified data): 2 characters a token measured by the provider
    messages = [
        user_message("x" * 1_998, timestamp=1),
        reply("ok", context_tokens=1_000, timestamp=2),
        user_message("y" * 300, timestamp=3),
    ]
    assert estimate_request_tokens(ModelRequest(messages=messages)) == 1_000 + 150


def test_estimate_skips_usage_that_no_longer_describes_the_prefix() -> None:
    # a compaction summary (newer than the tail it keeps) stands before the kept reply, whose
    # usage counted the conversation the summary replaced
    summary = user_message("summary " * 100, timestamp=50)
    kept = reply("kept", context_tokens=40_000, timestamp=10)
    fresh_prompt = user_message("next", timestamp=60)
    stale = ModelRequest(messages=[summary, kept, fresh_prompt])
    pure = sum(math.ceil(len(t) / 3.5) for t in ("summary " * 100, "kept", "next"))
    assert estimate_request_tokens(stale) == pure
    # the first reply after the compaction describes the new prefix again
    new_reply = reply("after", context_tokens=1_500, timestamp=70)
    fresh = ModelRequest(messages=[summary, kept, fresh_prompt, new_reply])
    assert estimate_request_tokens(fresh) == 1_500


def test_estimate_ignores_failed_and_empty_usage() -> None:
    failed = reply("boom", context_tokens=90_000, timestamp=2, stop="error")
    empty = assistant_message(
        [text_block("")], api="a", provider="p", model="m", usage=empty_usage(), timestamp=3
    )
    request = ModelRequest(messages=[user_message("x" * 35, timestamp=1), failed, empty])
    assert estimate_request_tokens(request) == 10 + math.ceil(len("boom") / 3.5)


def test_estimate_trusts_only_usage_that_can_describe_this_request() -> None:
    model = info()
    by_chars = math.ceil(40_000 / 3.5) + math.ceil(2 / 3.5)
    prompt = user_message("x" * 40_000, timestamp=1)
    # another model's tokenizer counted the prefix (a model switch): not this model's count
    other = reply("ok", context_tokens=9_000, timestamp=2)
    other["model"] = "gpt-x"
    assert estimate_request_tokens(ModelRequest(messages=[prompt, other]), model) == by_chars
    mine = reply("ok", context_tokens=9_000, timestamp=2)
    assert estimate_request_tokens(ModelRequest(messages=[prompt, mine]), model) == 9_000
    # a server that reported only output tokens, or a prefix that grew where no timestamp
    # shows it (restored tool output): under 1 token per 8 characters is not a count of it
    output_only = reply("ok", context_tokens=60, timestamp=2)
    assert estimate_request_tokens(ModelRequest(messages=[prompt, output_only])) == by_chars
    # a usage that is not a finite number is no count at all
    endless = reply("ok", context_tokens=9_000, timestamp=2)
    endless["usage"]["totalTokens"] = math.inf
    assert estimate_request_tokens(ModelRequest(messages=[prompt, endless])) == by_chars


def test_output_cap_near_the_window_follows_the_reported_usage() -> None:
    # 48k window: by characters the context looks 40k (a clamp); the provider counted 30k
    model = info(window=48_000, max_tokens=8192)
    messages = [
        user_message("x" * 140_000, timestamp=1),
        reply("ok", context_tokens=30_000, timestamp=2),
        user_message("go on", timestamp=3),
    ]
    assert output_cap(model, ModelRequest(messages=messages)) == 8192
    assert output_cap(model, ModelRequest(messages=messages[:1])) == 48_000 - 40_000 - 4096


async def test_anthropic_budget_and_cap_fit_a_nearly_full_window(server: ReplayServer) -> None:
    server.add(json_reply(400, {"error": {"type": "invalid_request_error", "message": "stop"}}))
    m = track(AnthropicModel(info(), api_key="k", base_url=server.url))
    long_prompt = "word " * 133_000  # 665000 chars: about 190000 tokens at 3.5 chars a token
    request = ModelRequest(
        messages=[user_message(long_prompt, timestamp=1)],
        options=RequestOptions(thinking_level="high"),
    )
    await complete(m, request)
    body = server.requests[0].json()
    room = 200_000 - estimate_request_tokens(request) - 4096
    assert body["max_tokens"] == room
    # pi sends room - 1024; rounded down to 1024 x 8^k here (stable as the context grows)
    assert 1024 <= room - 1024 < 8192
    assert body["thinking"]["budget_tokens"] == 1024
    assert body["thinking"]["budget_tokens"] < body["max_tokens"]
