"""AgentSession over a real SDK adapter: the request bodies on the wire extend each other.

The OpenAI-compatible adapter talks to the local replay server. Across tool turns, a ``/reload``
with no change, a skill added (a section patch at run start) and a compaction, every request's
``messages`` array starts with the previous request's messages byte for byte — except the first
request after the compaction, which starts a new prefix once. The cache accounting names the
compaction as the cause of the one miss.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pi_context.events import CacheUpdate
from pi_context.model import ModelInfo
from pi_context.providers.openai import OpenAIChatModel
from tests.providers.replay_server import ReplayServer, openai_sse, stream

from .conftest import MakeSession


def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "c",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def usage(prompt: int, cached: int) -> dict[str, Any]:
    return {
        "id": "c",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "m",
        "choices": [],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": 5,
            "total_tokens": prompt + 5,
            "prompt_tokens_details": {"cached_tokens": cached},
        },
    }


def text(answer: str, prompt: int = 100, cached: int = 0) -> Any:
    return stream(
        openai_sse(
            [
                chunk({"role": "assistant", "content": answer}),
                chunk({}, "stop"),
                usage(prompt, cached),
            ]
        )
    )


def call(name: str, args: dict[str, Any], prompt: int = 100, cached: int = 0) -> Any:
    fn = {"name": name, "arguments": json.dumps(args)}
    return stream(
        openai_sse(
            [
                chunk(
                    {
                        "role": "assistant",
                        "tool_calls": [
                            {"index": 0, "id": "call_1", "type": "function", "function": fn}
                        ],
                    }
                ),
                chunk({}, "tool_calls"),
                usage(prompt, cached),
            ]
        )
    )


def messages_end(body: bytes) -> int:
    text_ = body.decode("utf-8")
    start = text_.index('"messages":') + len('"messages":')
    _, end = json.JSONDecoder().raw_decode(text_, start)
    return len(text_[: end - 1].encode("utf-8"))


async def test_bodies_extend_across_turns_reload_skill_and_compaction(
    make_session: MakeSession, project_dir: Path, server: ReplayServer
) -> None:
    (project_dir / "notes.txt").write_text("remember the milk\n" * 50)
    info = ModelInfo(
        provider="local-vllm",
        id="m",
        api="openai-completions",
        context_window=100_000,
        max_tokens=1000,
    )
    model = OpenAIChatModel(info, api_key="k", base_url=server.url + "/v1")
    try:
        # recall off: the tool offered after the compaction would be the first cause of the
        # miss there; this test is about the skills patch the compaction's snapshot folds in
        sess = await make_session(
            model,
            settings={"compaction": {"keepRecentTokens": 1, "summarizer": "offline"}},
            recall="off",
        )
        server.add(
            call("read", {"path": "notes.txt"}, prompt=900),
            text("It says to remember the milk. " * 20, prompt=1200, cached=900),
        )
        events = await sess.run("What is in notes.txt? " * 20)
        await sess.reload()  # nothing changed: no system message
        server.add(text("Nothing new.", prompt=1300, cached=1200))
        events += await sess.run("Anything else?")
        skill = project_dir / ".pi" / "skills" / "shop"
        skill.mkdir(parents=True)
        (skill / "SKILL.md").write_text("---\nname: shop\ndescription: Buy groceries.\n---\nGo.\n")
        await sess.reload()
        server.add(text("A skill appeared.", prompt=1400, cached=1300))
        events += await sess.run("And now?")
        await sess.compact()
        server.add(text("Compacted.", prompt=500, cached=0), text("Again.", prompt=600, cached=500))
        events += await sess.run("After compaction")
        events += await sess.run("One more")
    finally:
        await model.aclose()

    bodies = server.bodies()
    assert len(bodies) == 6
    restart = 4  # the first request after the compaction
    for n in range(1, len(bodies)):
        if n == restart:
            continue
        prev, cur = bodies[n - 1], bodies[n]
        end = messages_end(prev)
        assert cur[:end] == prev[:end], f"request {n} does not extend request {n - 1}"
    # The skill arrived as a patch appended in place, not as a rewritten leading prompt.
    third = json.loads(bodies[3])["messages"]
    assert any("skills" in json.dumps(m) for m in third[-3:])
    assert "<skills>" not in json.dumps(third[0])
    updates = [e for e in events if isinstance(e, CacheUpdate)]
    assert [u.miss_cause is None for u in updates] == [True, True, True, True, False, True]
    # The compaction's snapshot folds the skills patch into the leading prompt.
    assert updates[4].miss_cause == "section:skills"
    assert updates[4].cache_read == 0
