"""The simulator over real HTTP on 127.0.0.1, driven by the official SDKs."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import anthropic
import openai
import pytest
from benchmarks.economy.responder import tool_call_id
from benchmarks.economy.server import Simulator, SimulatorServer
from benchmarks.economy.tokens import whitespace_tokenizer
from benchmarks.economy.workload import generate_workload

WORKLOAD = generate_workload(3, prompts=20)
PROMPT = next(p for p in WORKLOAD.prompts if len(p.steps) >= 2)
SYSTEM = "You are a coding assistant. " + "Follow the project rules carefully. " * 300
TOOLS: list[Any] = [
    {
        "name": "read",
        "description": "Read a file",
        "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}},
    }
]


def test_anthropic_stream_plays_the_workload_and_bills_cache_reads() -> None:
    sim = Simulator("anthropic", WORKLOAD, whitespace_tokenizer(), 100_000)
    with SimulatorServer(sim) as server:
        client = anthropic.Anthropic(api_key="k", base_url=server.base_url, max_retries=0)
        messages: list[Any] = [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": PROMPT.text, "cache_control": {"type": "ephemeral"}}
                ],
            }
        ]
        system: list[Any] = [
            {"type": "text", "text": SYSTEM, "cache_control": {"type": "ephemeral"}}
        ]
        with client.messages.stream(
            model="sim", max_tokens=100, system=system, tools=TOOLS, messages=messages
        ) as stream:
            first = stream.get_final_message()
        assert first.stop_reason == "tool_use"
        call = first.content[0]
        assert call.type == "tool_use"
        assert call.id == tool_call_id(PROMPT.index, 0)
        assert call.input == PROMPT.steps[0].arguments
        assert first.usage.cache_creation_input_tokens == sim.records[0].cache_write > 0
        messages += [
            {"role": "assistant", "content": [c.model_dump() for c in first.content]},
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": call.id,
                        "content": "file text",
                        "cache_control": {"type": "ephemeral"},
                    }
                ],
            },
        ]
        del messages[0]["content"][0]["cache_control"]
        with client.messages.stream(
            model="sim", max_tokens=100, system=system, tools=TOOLS, messages=messages
        ) as stream:
            second = stream.get_final_message()
    block = second.content[0]
    assert block.type == "tool_use"
    assert block.id == tool_call_id(PROMPT.index, 1)
    assert second.usage.cache_read_input_tokens == sim.records[0].cache_write
    assert sim.records[1].hit_from == 0
    assert sim.records[1].input == (
        sim.records[1].cache_read + sim.records[1].cache_write + sim.records[1].uncached
    )


def test_openai_stream_reports_cached_tokens() -> None:
    sim = Simulator("openai", WORKLOAD, whitespace_tokenizer(), 100_000)
    with SimulatorServer(sim) as server:
        client = openai.OpenAI(api_key="k", base_url=f"{server.base_url}/v1", max_retries=0)
        messages: list[Any] = [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": PROMPT.text},
        ]
        usages = []
        for _ in range(2):
            stream = client.chat.completions.create(
                model="sim",
                messages=messages,
                stream=True,
                stream_options={"include_usage": True},
            )
            calls = []
            for chunk in stream:
                if chunk.usage is not None:
                    usages.append(chunk.usage)
                for choice in chunk.choices:
                    calls += choice.delta.tool_calls or []
            assert calls
            assert calls[0].id == tool_call_id(PROMPT.index, 0)
    assert usages[0].prompt_tokens_details is not None
    assert usages[0].prompt_tokens_details.cached_tokens == 0
    assert usages[1].prompt_tokens_details is not None
    cached = usages[1].prompt_tokens_details.cached_tokens or 0
    assert cached > 1024
    assert (cached - 1024) % 128 == 0


def test_a_request_over_the_window_gets_the_providers_overflow_error() -> None:
    sim = Simulator("anthropic", WORKLOAD, whitespace_tokenizer(), 500)
    with SimulatorServer(sim) as server:
        body = json.dumps(
            {
                "model": "sim",
                "max_tokens": 10,
                "system": SYSTEM,
                "messages": [{"role": "user", "content": PROMPT.text}],
                "stream": True,
            }
        ).encode()
        request = urllib.request.Request(f"{server.base_url}/v1/messages", data=body, method="POST")
        with pytest.raises(urllib.error.HTTPError) as caught:
            urllib.request.urlopen(request, timeout=30)
        error = json.loads(caught.value.read())
    assert caught.value.code == 400
    assert error["error"]["message"].startswith("prompt is too long")
    assert [r.kind for r in sim.records] == ["overflow"]
    assert sim.records[0].cost == 0.0
