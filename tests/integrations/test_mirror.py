"""Keeping the session in step with a framework's list: appends, branches, new roots."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pi_context.integrations import ContextEngine
from pi_context.integrations.mirror import sync
from pi_context.session import Session
from pi_context.testing import FixedClock, SequentialIds


class TextCodec:
    """A toy framework whose messages are strings: ``"u:..."`` user, ``"a:..."`` assistant."""

    def to_pi(self, items: Sequence[str]) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for item in items:
            role, text = item.split(":", 1)
            if role == "u":
                out.append({"role": "user", "content": text, "timestamp": 1})
            else:
                out.append(
                    {
                        "role": "assistant",
                        "content": [{"type": "text", "text": text}],
                        "api": "x",
                        "provider": "x",
                        "model": "x",
                        "usage": {
                            "input": 0,
                            "output": 0,
                            "cacheRead": 0,
                            "cacheWrite": 0,
                            "totalTokens": 0,
                        },
                        "stopReason": "stop",
                        "timestamp": 1,
                    }
                )
        return out

    def from_pi(self, messages: Sequence[dict[str, Any]]) -> list[tuple[str, int]]:
        out: list[tuple[str, int]] = []
        for index, message in enumerate(messages):
            if message["role"] == "user":
                out.append((f"u:{message['content']}", index))
            elif message["role"] == "assistant":
                out.append((f"a:{message['content'][0]['text']}", index))
            else:
                out.append((f"s:{message.get('summary', '')[:10]}", index))
        return out

    def same(self, a: str, b: str) -> bool:
        return a == b


def _engine(tmp_path: Path, keep: int | None = None) -> ContextEngine:
    session = Session.create(
        tmp_path / "s.jsonl", cwd=str(tmp_path), ids=SequentialIds(), clock=FixedClock()
    )
    return ContextEngine(session=session, context_window=100_000, keep_recent_tokens=keep)


def test_a_growing_list_appends_only_what_is_new(tmp_path: Path) -> None:
    engine, codec = _engine(tmp_path), TextCodec()
    assert sync(engine, ["u:hi", "a:hello"], codec).appended == 2
    report = sync(engine, ["u:hi", "a:hello", "u:more"], codec)
    assert (report.shared, report.appended, report.branched) == (2, 1, False)
    assert len(engine.session.entries) == 3


def test_an_edited_list_becomes_a_branch_and_nothing_is_rewritten(tmp_path: Path) -> None:
    engine, codec = _engine(tmp_path), TextCodec()
    sync(engine, ["u:hi", "a:hello", "u:fix a.py"], codec)
    size = (tmp_path / "s.jsonl").stat().st_size
    report = sync(engine, ["u:hi", "a:hello", "u:fix b.py instead"], codec)
    assert report.branched
    assert (tmp_path / "s.jsonl").stat().st_size > size
    first_assistant = engine.session.entries[1]
    assert len(engine.session.children(first_assistant.id)) == 2
    assert [m for m, _ in codec.from_pi([m for _, m in engine.projected()])] == [
        "u:hi",
        "a:hello",
        "u:fix b.py instead",
    ]


async def test_a_divergence_inside_what_a_compaction_kept_starts_a_new_root(tmp_path: Path) -> None:
    engine, codec = _engine(tmp_path, keep=600), TextCodec()
    history = [f"u:task {i}" if i % 2 == 0 else f"a:done {i} " + "x" * 2_000 for i in range(12)]
    sync(engine, history, codec)
    outcome = await engine.compact(force=True)
    assert outcome.compacted
    projected = [m for m, _ in codec.from_pi([m for _, m in engine.projected()])]
    assert projected[0].startswith("s:")
    edited = [*projected[:2], "a:something else"]
    sync(engine, edited, codec)
    assert len(engine.session.roots()) == 2  # the compacted branch is still in the file
    now = [m for m, _ in codec.from_pi([m for _, m in engine.projected()])]
    assert now[1:] == edited[1:]  # (the summary is recorded as an ordinary message there)
