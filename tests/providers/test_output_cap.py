"""The output limit clamped to what the window leaves (pi-ai's rule, spec §6.3)."""

from __future__ import annotations

import math

from pi_context.messages import user_message
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
