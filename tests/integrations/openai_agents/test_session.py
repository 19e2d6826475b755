"""PiSession on openai-agents' own ScriptedModel, offline: pi's promises for this framework."""

from __future__ import annotations

import asyncio
import itertools
import json
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from agents import Agent, RunConfig, Runner, function_tool, set_tracing_disabled
from agents.memory import Session as AgentsSession
from agents.testing import ModelStep, ScriptedModel, assistant_message, function_call
from agents.usage import Usage

from pi_context.integrations.openai_agents import PiSession
from pi_context.messages import text_of
from pi_context.session import Session
from pi_context.testing import FixedClock, SequentialIds, failure, reply
from pi_context.testing import ScriptedModel as PiModel

set_tracing_disabled(True)

FILES = {"read_file": ("read", "path"), "edit_file": ("edit", "path")}


def _session(tmp_path: Path, **kw: Any) -> PiSession:
    kw.setdefault("context_window", 4_000)
    kw.setdefault("file_tools", FILES)
    pi = Session.create(
        tmp_path / "s.jsonl", cwd=str(tmp_path), ids=SequentialIds(), clock=FixedClock()
    )
    return PiSession("s1", session=pi, **kw)


def orphans(items: Sequence[Any]) -> list[str]:
    """The pair invariant on Responses items, and reasoning staying before its item."""
    problems: list[str] = []
    called: set[str] = set()
    answered: set[str] = set()
    for index, item in enumerate(items):
        kind = item.get("type")
        if kind == "function_call_output":
            if item["call_id"] not in called:
                problems.append(f"output {item['call_id']} without its call")
            answered.add(item["call_id"])
        elif kind == "function_call":
            called.add(item["call_id"])
        elif kind == "reasoning":
            following = items[index + 1] if index + 1 < len(items) else None
            if (
                following is None
                or following.get("role") == "user"
                or following.get("type") == "function_call_output"
            ):
                problems.append(f"reasoning {index} not followed by its item")
    last_output = max(
        (
            i
            for i, it in enumerate(items)
            if it.get("role") == "user" or it.get("type") == "function_call_output"
        ),
        default=-1,
    )
    for index, item in enumerate(items):
        if (
            item.get("type") == "function_call"
            and item["call_id"] not in answered
            and index < last_output
        ):
            problems.append(f"call {item['call_id']} without output")
    return problems


def _dump(item: Any) -> dict[str, Any]:
    out: dict[str, Any] = item.model_dump(exclude_unset=True)
    return out


def _call(call_id: str, path: str, name: str = "read_file") -> dict[str, Any]:
    return _dump(function_call(name, json.dumps({"path": path}), call_id=call_id))


def _msg(text: str) -> dict[str, Any]:
    return _dump(assistant_message(text))


def _output(call_id: str, text: str) -> dict[str, Any]:
    return {"call_id": call_id, "output": text, "type": "function_call_output"}


def _history(turns: int = 4) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = [{"role": "user", "content": "fix the bug in src/app.py"}]
    for i in range(turns):
        items.append(_call(f"c{i}", f"src/f{i}.py"))
        items.append(_output(f"c{i}", "y" * 2_000))
    items.append(_msg("found it"))
    return items


@function_tool
def read_file(path: str) -> str:
    """Read a file of the project."""
    return f"contents of {path}\n" + "x = 1\n" * 300


def _agent(steps: list[Any]) -> tuple[Agent[Any], ScriptedModel]:
    model = ScriptedModel(steps)
    return Agent(name="coder", instructions="You fix code.", model=model, tools=[read_file]), model


def _reads(n: int, start: int = 0) -> list[Any]:
    steps: list[Any] = [
        [function_call("read_file", json.dumps({"path": f"src/f{i}.py"}), call_id=f"c{i}")]
        for i in range(start, start + n)
    ]
    return [*steps, [assistant_message("all read")]]


# -- the protocol ------------------------------------------------------------------------------


async def test_it_is_a_session_and_run_compaction_runs_once_per_run(tmp_path: Path) -> None:
    session = _session(tmp_path)
    assert isinstance(session, AgentsSession)
    calls: list[Any] = []
    original = session.run_compaction

    async def spy(args: Any = None, *, wrapper: Any = None) -> None:
        calls.append(args)
        await original(args, wrapper=wrapper)

    session.run_compaction = spy  # type: ignore[method-assign]
    for run in range(2):
        agent, _model = _agent(
            [
                [function_call("read_file", '{"path": "a.py"}', call_id=f"r{run}")],
                [assistant_message("done")],
            ]
        )
        await Runner.run(agent, f"task {run}", session=session)
    assert [c["response_id"] for c in calls] == ["resp-789", "resp-789"]


async def test_pop_and_clear_move_the_leaf_and_the_file_never_shrinks(tmp_path: Path) -> None:
    session = _session(tmp_path)
    path = tmp_path / "s.jsonl"
    await session.add_items(_history(2))
    sizes = [path.stat().st_size]
    popped = await session.pop_item()
    assert popped is not None
    assert popped["type"] == "message"
    sizes.append(path.stat().st_size)
    assert (await session.get_items())[-1]["type"] == "function_call_output"
    await session.clear_session()
    sizes.append(path.stat().st_size)
    assert await session.get_items() == []
    await session.add_items([{"role": "user", "content": "fresh start"}])
    sizes.append(path.stat().st_size)
    assert sizes == sorted(sizes)
    # reopened, the file says the same: the move is recorded, the old branch is still there
    reopened = PiSession(session_file=path, context_window=4_000)
    assert await reopened.get_items() == [{"role": "user", "content": "fresh start"}]
    assert len(reopened.engine.session.roots()) == 2


async def test_popping_one_item_of_a_response_keeps_the_rest_of_it(tmp_path: Path) -> None:
    session = _session(tmp_path)
    parallel = [{"role": "user", "content": "go"}, _call("a", "a.py"), _call("b", "b.py")]
    await session.add_items(parallel)
    assert (await session.pop_item())["call_id"] == "b"
    assert await session.get_items() == parallel[:2]


async def test_a_limited_history_never_starts_with_a_tool_output(tmp_path: Path) -> None:
    session = _session(tmp_path)
    await session.add_items(_history(3))
    for limit in range(1, 9):
        items = await session.get_items(limit)
        assert items
        assert items[0].get("type") != "function_call_output"


# -- 1. the pair invariant ---------------------------------------------------------------------


@pytest.mark.parametrize("keep", [1, 100, 400, 500, 600, 1_000, 1_100, 1_600, 2_100])
async def test_no_cut_leaves_an_output_without_its_call(tmp_path: Path, keep: int) -> None:
    session = _session(tmp_path, keep_recent_tokens=keep, reserve_tokens=3_500)
    parallel_split = [
        {"role": "user", "content": "read both"},
        {
            "type": "reasoning",
            "id": "rs_1",
            "summary": [{"type": "summary_text", "text": "both files"}],
        },
        _call("a", "a.py"),
        _call("b", "b.py"),
        _output("a", "line\n" * 400),
        _output("b", "line\n" * 400),
        _msg("both read"),
    ]
    await session.add_items(parallel_split)
    await session.add_items(_history(2)[1:])
    await session.run_compaction({"force": True})
    assert orphans(await session.get_items()) == []


async def test_a_history_with_an_orphan_output_is_repaired_in_what_the_model_gets(
    tmp_path: Path,
) -> None:
    session = _session(tmp_path, context_window=100_000)
    await session.add_items(
        [
            {"role": "user", "content": "go"},
            _output("gone", "stray"),
            _call("x", "a.py"),
            {"role": "user", "content": "stop"},
        ]
    )
    items = await session.get_items()
    assert orphans(items) == []
    assert [i.get("type") or i.get("role") for i in items] == [
        "user",
        "function_call",
        "function_call_output",
        "user",
    ]


async def test_the_input_filter_keeps_the_pairs_inside_a_tool_loop(tmp_path: Path) -> None:
    session = _session(tmp_path, keep_recent_tokens=300)
    agent, model = _agent(_reads(8))
    await Runner.run(
        agent,
        "read every module",
        session=session,
        run_config=RunConfig(call_model_input_filter=session.input_filter),
        max_turns=30,
    )
    assert any(e.type == "compaction" for e in session.engine.session.entries)
    for call in model.calls:
        assert orphans(list(call.input)) == []


# -- 2. no placeholder -------------------------------------------------------------------------


@pytest.mark.parametrize("answer", [failure("quota exhausted"), reply("")])
async def test_a_failing_or_empty_summarizer_leaves_the_history_unchanged(
    tmp_path: Path, answer: Any
) -> None:
    session = _session(tmp_path, summarizer=PiModel([answer] * 4), keep_recent_tokens=300)
    await session.add_items(_history())
    before = await session.get_items()
    await session.run_compaction({"force": True})
    assert await session.get_items() == before
    assert session.last_outcome is not None
    assert not session.last_outcome.compacted
    assert session.last_outcome.reason


# -- 3, 4, 5: file lists, iterative summaries, split turns --------------------------------------


async def test_file_lists_come_from_the_calls_whatever_the_summarizer_says(tmp_path: Path) -> None:
    session = _session(tmp_path, summarizer=PiModel([reply("OK")] * 2), keep_recent_tokens=100)
    history = _history()
    history.insert(1, _call("e", "src/a.py", "edit_file"))
    history.insert(2, _output("e", "edited"))
    await session.add_items(history)
    await session.run_compaction({"force": True})
    summary = (await session.get_items())[0]["content"]
    assert "OK" in summary
    assert "<modified-files>\nsrc/a.py\n</modified-files>" in summary
    assert "<read-files>\nsrc/f0.py" in summary


async def test_the_second_summary_updates_the_first(tmp_path: Path) -> None:
    summarizer = PiModel([reply(f"SUMMARY {i}") for i in range(8)])
    session = _session(tmp_path, summarizer=summarizer, keep_recent_tokens=100)
    await session.add_items(_history())
    await session.run_compaction({"force": True})
    await session.add_items([{"role": "user", "content": "next task"}, *_history()[1:]])
    await session.run_compaction({"force": True})
    updates = [
        text_of(r.messages[0]["content"])
        for r in summarizer.requests
        if "<previous-summary>" in text_of(r.messages[0]["content"])
    ]
    assert updates
    assert "SUMMARY" not in updates[0].partition("</conversation>")[0]


async def test_a_cut_inside_a_turn_adds_a_turn_prefix_summary(tmp_path: Path) -> None:
    summarizer = PiModel([reply("HISTORY"), reply("PREFIX")])
    session = _session(tmp_path, summarizer=summarizer, keep_recent_tokens=700)
    await session.add_items([{"role": "user", "content": "first task"}, _msg("ok"), *_history()])
    await session.run_compaction({"force": True})
    summary = (await session.get_items())[0]["content"]
    assert "HISTORY" in summary
    assert "PREFIX" in summary


# -- 6, 7: an offline run; each request extends the previous one between compactions ------------


async def test_an_offline_run_compacts_and_requests_only_grow_between_compactions(
    tmp_path: Path,
) -> None:
    session = _session(tmp_path, keep_recent_tokens=300)
    agent, model = _agent(_reads(10))
    result = await Runner.run(
        agent,
        "read every module",
        session=session,
        run_config=RunConfig(call_model_input_filter=session.input_filter),
        max_turns=30,
    )
    assert result.final_output == "all read"
    inputs = [json.dumps(list(call.input)) for call in model.calls]
    compactions = 0
    for previous, current in itertools.pairwise(inputs):
        if not current.startswith(previous[:-1]):
            compactions += 1
            assert "condensed" in current  # only a compaction rewrites what was sent
    assert compactions >= 1
    summary = (await session.get_items())[0]["content"]
    assert "read every module" in summary
    assert "src/f0.py" in summary


# -- 8. the trigger reads the reported usage ---------------------------------------------------


async def test_reported_usage_over_the_threshold_compacts_after_the_run(tmp_path: Path) -> None:
    session = _session(tmp_path, context_window=10_000, keep_recent_tokens=10)
    await session.add_items(
        [{"role": "user", "content": "please look at the parser " * 5}, _msg("looks fine " * 5)]
    )
    loud = Usage(requests=1, input_tokens=9_500, output_tokens=5, total_tokens=9_505)
    agent, _ = _agent([ModelStep(output=[assistant_message("ok " * 5)], usage=loud)])
    await Runner.run(agent, "then check the lexer " * 5, session=session)
    assert session.last_outcome is not None
    assert session.last_outcome.compacted, session.last_outcome.reason


# -- 10. lossless round trip -------------------------------------------------------------------


async def test_every_item_type_round_trips_through_pi_entries(tmp_path: Path) -> None:
    items: list[dict[str, Any]] = [
        {"role": "system", "content": "be brief"},
        {"role": "developer", "content": "use tools"},
        {"role": "user", "content": "plain"},
        {
            "type": "message",
            "role": "user",
            "content": [
                {"type": "input_text", "text": "parts"},
                {"type": "input_image", "image_url": "data:x", "detail": "auto"},
            ],
        },
        {
            "type": "reasoning",
            "id": "rs_1",
            "summary": [{"type": "summary_text", "text": "why"}],
            "encrypted_content": "enc",
        },
        {
            "arguments": '{"path":"a.py"}',
            "call_id": "c1",
            "name": "read_file",
            "type": "function_call",
            "id": "fc_1",
        },
        {"call_id": "c1", "output": "body", "type": "function_call_output"},
        {
            "id": "msg_1",
            "content": [{"annotations": [], "text": "done", "type": "output_text", "logprobs": []}],
            "role": "assistant",
            "status": "completed",
            "type": "message",
        },
        {"type": "compaction", "encrypted_content": "opaque", "id": "cmp_1"},
        {"role": "user", "content": "after"},
    ]
    session = _session(tmp_path, context_window=100_000)
    await session.add_items(items)
    reopened = PiSession(session_file=tmp_path / "s.jsonl", context_window=100_000)
    assert await reopened.get_items() == items
    assert reopened.provider_compaction  # a server compaction item: pi leaves compaction to it
    roles = [m["role"] for m in reopened.engine.session.messages()]
    assert roles == [
        "custom",
        "custom",
        "user",
        "user",
        "assistant",
        "toolResult",
        "assistant",
        "custom",
        "user",
    ]


async def test_a_provider_compaction_item_passes_through_and_pi_stops_compacting(
    tmp_path: Path,
) -> None:
    session = _session(tmp_path, keep_recent_tokens=100)
    await session.add_items(_history())
    await session.add_items([{"type": "compaction", "encrypted_content": "opaque"}])
    await session.run_compaction({"force": True})
    assert session.last_outcome is not None
    assert session.last_outcome.reason == "the provider's compaction owns this history"
    assert (await session.get_items())[-1] == {"type": "compaction", "encrypted_content": "opaque"}


# -- the record --------------------------------------------------------------------------------


async def test_pictx_shows_the_conversation_and_its_compactions(tmp_path: Path) -> None:
    from tests.integrations.record import pictx

    session = PiSession(
        session_file=tmp_path / "agent.jsonl",
        context_window=4_000,
        keep_recent_tokens=300,
        file_tools=FILES,
    )
    agent, _ = _agent(_reads(10))
    await Runner.run(
        agent,
        "read every module",
        session=session,
        run_config=RunConfig(call_model_input_filter=session.input_filter),
        max_turns=30,
    )
    tree = pictx("session", "tree", str(tmp_path / "agent.jsonl"))
    assert "user: read every module" in tree
    assert "[compaction]" in tree
    assert "toolResult: read_file" in tree
    assert "all read" in pictx("session", "context", str(tmp_path / "agent.jsonl"))


# -- 9. the originals stay recoverable ---------------------------------------------------------


async def test_the_recall_tool_returns_what_compaction_replaced_verbatim(tmp_path: Path) -> None:
    session = _session(tmp_path, keep_recent_tokens=300)
    steps = _reads(8)[:-1]
    steps.append(
        [function_call("recall", json.dumps({"query": "contents src/f0.py"}), call_id="r")]
    )
    steps.append([assistant_message("found it again")])
    model = ScriptedModel(steps)
    agent = Agent(
        name="coder",
        model=model,
        tools=[read_file, session.recall_tool(cache_dir=tmp_path / "cache")],
    )
    await Runner.run(
        agent,
        "read every module",
        session=session,
        run_config=RunConfig(call_model_input_filter=session.input_filter),
        max_turns=30,
    )
    assert any(e.type == "compaction" for e in session.engine.session.entries)
    answer = next(
        i
        for i in await session.get_items()
        if i.get("call_id") == "r" and i.get("type") == "function_call_output"
    )
    assert "contents of src/f0.py\nx = 1" in answer["output"]
    assert "summarized by compaction" in answer["output"]


async def test_instructions_and_tool_schemas_count_before_any_usage(tmp_path: Path) -> None:
    session = _session(tmp_path, context_window=3_000, keep_recent_tokens=100)
    await session.add_items(_history(1))
    assert not session.engine.needs_compaction()  # the messages alone are below the threshold
    model = ScriptedModel([[assistant_message("ok")]])
    agent = Agent(name="coder", instructions="rule " * 2_000, model=model, tools=[read_file])
    await Runner.run(
        agent,
        "go on",
        session=session,
        run_config=RunConfig(call_model_input_filter=session.input_filter),
    )
    assert session.overhead > 2_000
    assert any(e.type == "compaction" for e in session.engine.session.entries)


async def test_popping_a_kept_item_after_a_compaction_keeps_the_compaction(tmp_path: Path) -> None:
    session = _session(tmp_path, keep_recent_tokens=100)
    await session.add_items(_history())
    await session.run_compaction({"force": True})
    before = await session.get_items()
    popped = await session.pop_item()
    assert popped == before[-1]
    after = await session.get_items()
    assert after == before[:-1]
    assert "condensed" in after[0]["content"]


async def test_the_model_named_in_the_items_is_recorded(tmp_path: Path) -> None:
    """Models other than the Responses API's name themselves in each output item's
    ``provider_data``; the pi message records that model, not ``unknown``."""
    session = _session(tmp_path)
    items: list[Any] = [
        {"role": "user", "content": "hi"},
        {
            "id": "m1",
            "content": [{"annotations": [], "text": "hello", "type": "output_text"}],
            "role": "assistant",
            "status": "completed",
            "type": "message",
            "provider_data": {"model": "claude-sonnet-4", "response_id": "r1"},
        },
    ]
    await session.add_items(items)
    (assistant,) = [
        dict(e.message or {})
        for e in session.engine.session.entries
        if e.type == "message" and e.role == "assistant"
    ]
    assert assistant["model"] == "claude-sonnet-4"
    assert await session.get_items() == items  # the round trip still gives the items back


async def test_appends_run_off_the_event_loop_in_the_order_they_were_made(
    tmp_path: Path,
) -> None:
    """``add_items`` writes on the engine's worker thread, never on the runner's loop, and
    concurrent calls land in the file in the order they were made."""
    session = _session(tmp_path)
    threads: list[int] = []
    append = session.engine.append

    def spy(messages: Sequence[Any]) -> Any:
        threads.append(threading.get_ident())
        return append(messages)

    session.engine.append = spy  # type: ignore[method-assign]
    await asyncio.gather(
        *(session.add_items([{"role": "user", "content": f"m{i}"}]) for i in range(20))
    )
    assert threads
    assert threading.get_ident() not in threads
    assert [item["content"] for item in await session.get_items()] == [f"m{i}" for i in range(20)]


async def test_the_history_kept_between_calls_is_what_a_fresh_read_gives(tmp_path: Path) -> None:
    """``get_items`` converts only what was appended since its last call; after appends, a
    pop, an orphaned output, a compaction and a cleared session it says what the file, read
    afresh, says."""
    session = _session(tmp_path, keep_recent_tokens=300)

    async def fresh() -> list[Any]:
        return await PiSession(session_file=tmp_path / "s.jsonl", context_window=4_000).get_items()

    steps: list[Any] = [
        lambda: session.add_items(_history(2)),
        lambda: session.add_items([_call("c9", "src/z.py"), _output("c9", "z")]),
        session.pop_item,
        lambda: session.add_items([_output("gone", "stray"), {"role": "user", "content": "go"}]),
        lambda: session.add_items([_call("c10", "src/y.py")]),
        lambda: session.add_items([{"role": "user", "content": "and?"}]),
        lambda: session.run_compaction({"force": True}),
        lambda: session.add_items(_history(1)),
        session.clear_session,
        lambda: session.add_items([{"role": "user", "content": "anew"}]),
    ]
    for step in steps:
        await step()
        assert await session.get_items() == await fresh()
