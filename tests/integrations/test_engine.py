"""The framework-free engine: trigger, file lists from mapped tools, failures, iteration."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pi_context.compaction import CompactionEvent
from pi_context.integrations import ContextEngine
from pi_context.messages import (
    assistant_message,
    empty_usage,
    text_block,
    text_of,
    tool_call,
    tool_result_message,
    user_message,
)
from pi_context.testing import FixedClock, ScriptedModel, SequentialIds, failure, reply

WINDOW = 4_000


def _engine(tmp_path: Path, summarizer: Any = "offline", **kw: Any) -> ContextEngine:
    from pi_context.session import Session

    session = Session.create(
        tmp_path / "s.jsonl", cwd=str(tmp_path), ids=SequentialIds(), clock=FixedClock()
    )
    kw.setdefault("keep_recent_tokens", 300)
    kw.setdefault("file_tools", {"read_file": ("read", "path"), "edit_file": ("edit", "file")})
    return ContextEngine(session=session, context_window=WINDOW, summarizer=summarizer, **kw)


def _turns(engine: ContextEngine, n: int, start: int = 0) -> None:
    for i in range(start, start + n):
        engine.append(
            [
                user_message(f"task {i}: fix module {i}", timestamp=1),
                assistant_message(
                    [tool_call(f"c{i}", "read_file", {"path": f"src/m{i}.py"})],
                    api="x",
                    provider="x",
                    model="x",
                    stop_reason="toolUse",
                    timestamp=1,
                ),
                tool_result_message(
                    f"c{i}", "read_file", [text_block("x = 1\n" * 150)], timestamp=1
                ),
                assistant_message(
                    [tool_call(f"e{i}", "edit_file", {"file": f"src/e{i}.py"})],
                    api="x",
                    provider="x",
                    model="x",
                    stop_reason="toolUse",
                    timestamp=1,
                ),
                tool_result_message(f"e{i}", "edit_file", [text_block("ok")], timestamp=1),
                assistant_message(
                    [text_block(f"done {i}")], api="x", provider="x", model="x", timestamp=1
                ),
            ]
        )


async def test_file_lists_come_from_the_mapped_tools_whatever_the_summarizer_says(
    tmp_path: Path,
) -> None:
    engine = _engine(tmp_path, ScriptedModel([reply("OK")] * 2))
    _turns(engine, 4)
    outcome = await engine.compact(force=True)
    assert outcome.compacted, outcome.reason
    summary = outcome.result.summary if outcome.result else ""
    assert summary.startswith("OK")
    assert "<read-files>\nsrc/m0.py" in summary
    assert "<modified-files>\nsrc/e0.py" in summary


@pytest.mark.parametrize("answer", [failure("server on fire"), reply(""), reply("   ")])
async def test_a_failing_or_empty_summarizer_writes_nothing_and_says_why(
    tmp_path: Path, answer: Any
) -> None:
    engine = _engine(tmp_path, ScriptedModel([answer] * 2))
    _turns(engine, 4)
    size = engine.session.file_path.stat().st_size if engine.session.file_path else 0
    before = [m for _, m in engine.projected()]
    outcome = await engine.compact(force=True)
    assert not outcome.compacted
    assert outcome.reason
    assert "server on fire" in outcome.reason or "empty summary" in outcome.reason
    assert [m for _, m in engine.projected()] == before
    assert engine.session.file_path is not None
    assert engine.session.file_path.stat().st_size == size
    assert all(e.type != "compaction" for e in engine.session.entries)


async def test_the_threshold_counts_reported_usage_and_the_overhead_without_it(
    tmp_path: Path,
) -> None:
    engine = _engine(tmp_path)
    engine.append([user_message("hi", timestamp=1)])
    small = engine.context_tokens()
    assert not engine.needs_compaction()
    assert engine.needs_compaction(overhead=WINDOW)  # a big system prompt + tool schemas
    usage = empty_usage()
    usage["input"] = WINDOW
    usage["totalTokens"] = WINDOW
    engine.append(
        [
            assistant_message(
                [text_block("short")], api="x", provider="x", model="x", usage=usage, timestamp=1
            )
        ]
    )
    assert engine.context_tokens() >= WINDOW > small
    assert engine.needs_compaction()


async def test_the_second_summary_updates_the_first_it_is_not_resummarized(tmp_path: Path) -> None:
    model = ScriptedModel([reply("FIRST SUMMARY"), reply("FIRST PREFIX"), reply("2"), reply("2")])
    engine = _engine(tmp_path, model)
    _turns(engine, 4)
    assert (await engine.compact(force=True)).compacted
    _turns(engine, 4, start=4)
    outcome = await engine.compact(force=True)
    assert outcome.compacted, outcome.reason
    prompt = text_of(model.requests[2].messages[0]["content"])
    conversation, _, rest = prompt.partition("</conversation>")
    assert "FIRST SUMMARY" not in conversation
    assert "<previous-summary>\nFIRST SUMMARY" in rest
    # file lists carried over from the first compaction's details
    assert outcome.result is not None
    assert "src/m0.py" in outcome.result.summary


async def test_offline_summarizer_needs_no_model(tmp_path: Path) -> None:
    events: list[CompactionEvent] = []
    engine = _engine(tmp_path, on_event=events.append)
    _turns(engine, 4)
    outcome = await engine.compact(force=True)
    assert outcome.compacted
    assert outcome.result is not None
    assert outcome.result.offline
    assert "task 0" in outcome.result.summary


def test_bad_arguments_are_refused_with_the_rule(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="context_window"):
        ContextEngine(tmp_path / "a.jsonl", context_window=0)
    with pytest.raises(ValueError, match="file_tools"):
        ContextEngine(tmp_path / "a.jsonl", context_window=10, file_tools={"r": ("open", "p")})
    with pytest.raises(TypeError, match="summarizer"):
        ContextEngine(tmp_path / "a.jsonl", context_window=10, summarizer="gpt")  # type: ignore[arg-type]


def _entry_count(engine: ContextEngine) -> int:
    return len(engine.session.entries)


async def test_engines_share_their_worker_threads(tmp_path: Path) -> None:
    """Every engine's session calls run on one shared pool: a service holding many
    conversations has a bounded number of threads, not one per conversation."""
    import asyncio
    import threading

    from pi_context.integrations import engine as engine_module

    engines = []
    for n in range(40):
        folder = tmp_path / f"c{n}"
        folder.mkdir()
        engines.append(_engine(folder))
    counts = await asyncio.gather(*(e.call(_entry_count, e) for e in engines))
    assert counts == [0] * 40
    # the pool's threads (some may be left from earlier tests: the pool lives as long as the
    # process), never one per engine
    workers = [t for t in threading.enumerate() if t.name.startswith("pi-context-session")]
    assert 0 < len(workers) <= engine_module._POOL._max_workers < len(engines)


async def test_one_engine_runs_its_calls_in_the_order_they_were_made(tmp_path: Path) -> None:
    import asyncio
    import time

    engine = _engine(tmp_path)
    done: list[int] = []

    def step(n: int) -> int:
        time.sleep(0.01 * (5 - n))  # the earlier calls take longer
        done.append(n)
        return n

    assert await asyncio.gather(*(engine.call(step, n) for n in range(5))) == [0, 1, 2, 3, 4]
    assert done == [0, 1, 2, 3, 4]
