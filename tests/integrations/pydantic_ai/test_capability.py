"""PiContext on pydantic-ai's own FunctionModel/TestModel, offline: pi's promises."""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import Agent
from pydantic_ai.capabilities import ProcessHistory
from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
    repair_messages,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.test import TestModel
from pydantic_ai.usage import RequestUsage

from pi_context.integrations.pydantic_ai import PiContext, PydanticAICodec
from pi_context.messages import text_of
from pi_context.session import Session
from pi_context.testing import FixedClock, SequentialIds, failure, reply
from pi_context.testing import ScriptedModel as PiModel

FILES = {"read_file": ("read", "path"), "edit_file": ("edit", "path")}


def _pi(tmp_path: Path, **kw: Any) -> PiContext:
    kw.setdefault("context_window", 4_000)
    kw.setdefault("file_tools", FILES)
    session = Session.create(
        tmp_path / "s.jsonl", cwd=str(tmp_path), ids=SequentialIds(), clock=FixedClock()
    )
    return PiContext(session=session, **kw)


def _returns(messages: Sequence[ModelMessage]) -> int:
    return sum(
        isinstance(p, ToolReturnPart)
        for m in messages
        if isinstance(m, ModelRequest)
        for p in m.parts
    )


def orphans(messages: Sequence[ModelMessage]) -> list[str]:
    """The pair invariant on pydantic-ai messages; core's repair must have nothing to drop."""
    problems: list[str] = []
    called: set[str] = set()
    answered: set[str] = set()
    for message in messages:
        for part in message.parts:
            if isinstance(part, ToolCallPart):
                called.add(part.tool_call_id)
            elif isinstance(part, ToolReturnPart):
                if part.tool_call_id not in called:
                    problems.append(f"return {part.tool_call_id} without its call")
                answered.add(part.tool_call_id)
    last = max((i for i, m in enumerate(messages) if isinstance(m, ModelResponse)), default=-1)
    for index, message in enumerate(messages):
        if isinstance(message, ModelResponse) and index != last:
            problems += [
                f"call {p.tool_call_id} without return"
                for p in message.parts
                if isinstance(p, ToolCallPart) and p.tool_call_id not in answered
            ]
    if _returns(repair_messages(list(messages))) != _returns(messages):
        problems.append("core's repair would drop a tool return")
    return problems


def _history(turns: int = 4) -> list[ModelMessage]:
    out: list[ModelMessage] = [ModelRequest(parts=[UserPromptPart("fix the bug in src/app.py")])]
    for i in range(turns):
        out.append(
            ModelResponse(
                parts=[ToolCallPart("read_file", {"path": f"src/f{i}.py"}, tool_call_id=f"c{i}")]
            )
        )
        out.append(
            ModelRequest(parts=[ToolReturnPart("read_file", "y" * 2_000, tool_call_id=f"c{i}")])
        )
    out.append(ModelResponse(parts=[TextPart("found it")]))
    return out


def _reader(turns: int, seen: list[list[ModelMessage]]) -> FunctionModel:
    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(list(messages))
        n = len(seen)
        if n <= turns:
            return ModelResponse(
                parts=[ToolCallPart("read_file", {"path": f"src/f{n}.py"}, tool_call_id=f"c{n}")]
            )
        return ModelResponse(parts=[TextPart("all read")])

    return FunctionModel(respond)


def _agent(model: Any, pi: PiContext, tools: Sequence[Any] = ()) -> Agent[None, str]:
    agent = Agent(model, capabilities=[pi], tools=list(tools))

    @agent.tool_plain
    def read_file(path: str) -> str:
        """Read a file of the project."""
        return f"contents of {path}\n" + "x = 1\n" * 300

    return agent


# -- the v2 surface ----------------------------------------------------------------------------


def test_history_processors_is_gone_in_v2_and_the_capability_is_the_way() -> None:
    with pytest.raises(TypeError, match="history_processors"):
        Agent(TestModel(), history_processors=[])  # type: ignore[call-overload]


async def test_a_compacting_run_leaves_the_summary_and_the_kept_tail_in_all_messages(
    tmp_path: Path,
) -> None:
    pi = _pi(tmp_path, keep_recent_tokens=300)
    seen: list[list[ModelMessage]] = []
    result = await _agent(_reader(8, seen), pi).run("read every module")
    assert result.output == "all read"
    messages = result.all_messages()
    first = messages[0]
    assert isinstance(first, ModelRequest)
    assert isinstance(first.parts[0], UserPromptPart)
    assert "<summary>" in str(first.parts[0].content)
    assert orphans(messages) == []
    for request in seen:
        assert orphans(request) == []
    assert any(e.type == "compaction" for e in pi.engine.session.entries)


async def test_the_plain_function_works_with_process_history(tmp_path: Path) -> None:
    pi = _pi(tmp_path, keep_recent_tokens=300)
    seen: list[list[ModelMessage]] = []
    agent = Agent(_reader(8, seen), capabilities=[ProcessHistory(pi.process)])

    @agent.tool_plain
    def read_file(path: str) -> str:
        """Read a file of the project."""
        return "x = 1\n" * 300

    result = await agent.run("read every module")
    assert "<summary>" in str(result.all_messages()[0].parts[0].content)  # type: ignore[union-attr]


async def test_it_is_a_compaction_strategy_without_the_harness(tmp_path: Path) -> None:
    pi = _pi(tmp_path, keep_recent_tokens=100)
    out = await pi.compact(_history(), None)  # type: ignore[arg-type]
    assert "<summary>" in str(out[0].parts[0].content)  # type: ignore[union-attr]
    assert orphans(out) == []


# -- 1. the pair invariant ---------------------------------------------------------------------


@pytest.mark.parametrize("keep", [1, 100, 400, 500, 600, 1_000, 1_100, 1_600])
async def test_no_cut_orphans_a_tool_return(tmp_path: Path, keep: int) -> None:
    pi = _pi(tmp_path, keep_recent_tokens=keep, reserve_tokens=3_500)
    split: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart("read both")]),
        ModelResponse(parts=[ToolCallPart("read_file", {"path": "a.py"}, tool_call_id="a")]),
        ModelResponse(parts=[ToolCallPart("read_file", {"path": "b.py"}, tool_call_id="b")]),
        ModelRequest(
            parts=[
                ToolReturnPart("read_file", "line\n" * 400, tool_call_id="a"),
                ToolReturnPart("read_file", "line\n" * 400, tool_call_id="b"),
            ]
        ),
        ModelResponse(parts=[TextPart("both read")]),
        *_history(2),
    ]
    out = await pi.compact(split, None)  # type: ignore[arg-type]
    assert orphans(out) == []


async def test_a_history_with_an_orphan_return_is_repaired_and_said_so(tmp_path: Path) -> None:
    pi = _pi(tmp_path, context_window=100_000)
    history: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart("go")]),
        ModelRequest(parts=[ToolReturnPart("read_file", "stray", tool_call_id="gone")]),
        ModelResponse(parts=[TextPart("ok")]),
        ModelRequest(parts=[UserPromptPart("next")]),
    ]
    out = await pi.process(history)
    assert orphans(out) == []
    assert _returns(out) == 0


# -- 2. no placeholder -------------------------------------------------------------------------


@pytest.mark.parametrize("answer", [failure("model unavailable"), reply("")])
async def test_a_failing_or_empty_summarizer_leaves_the_history_unchanged(
    tmp_path: Path, answer: Any
) -> None:
    pi = _pi(tmp_path, summarizer=PiModel([answer] * 4), keep_recent_tokens=300)
    history = _history()
    out = await pi.compact(history, None)  # type: ignore[arg-type]
    assert out is history
    assert pi.last_outcome is not None
    assert pi.last_outcome.reason


# -- 3, 4, 5 -----------------------------------------------------------------------------------


async def test_file_lists_come_from_the_calls_whatever_the_summarizer_says(tmp_path: Path) -> None:
    pi = _pi(tmp_path, summarizer=PiModel([reply("OK")] * 2), keep_recent_tokens=100)
    first, *rest = _history()
    history = [
        first,
        ModelResponse(parts=[ToolCallPart("edit_file", {"path": "src/a.py"}, tool_call_id="e")]),
        ModelRequest(parts=[ToolReturnPart("edit_file", "edited", tool_call_id="e")]),
        *rest,
    ]
    out = await pi.compact(history, None)  # type: ignore[arg-type]
    summary = str(out[0].parts[0].content)  # type: ignore[union-attr]
    assert "OK" in summary
    assert "<modified-files>\nsrc/a.py\n</modified-files>" in summary
    assert "<read-files>\nsrc/f0.py" in summary


async def test_the_second_summary_updates_the_first(tmp_path: Path) -> None:
    summarizer = PiModel([reply(f"SUMMARY {i}") for i in range(8)])
    pi = _pi(tmp_path, summarizer=summarizer, keep_recent_tokens=100)
    once = await pi.compact(_history(), None)  # type: ignore[arg-type]
    await pi.compact([*once, ModelRequest(parts=[UserPromptPart("next")]), *_history()[1:]], None)  # type: ignore[arg-type]
    prompts = [text_of(r.messages[0]["content"]) for r in summarizer.requests]
    updates = [p for p in prompts if "<previous-summary>" in p]
    assert updates
    assert "SUMMARY" not in updates[0].partition("</conversation>")[0]


async def test_a_cut_inside_a_turn_adds_a_turn_prefix_summary(tmp_path: Path) -> None:
    summarizer = PiModel([reply("HISTORY"), reply("PREFIX")])
    pi = _pi(tmp_path, summarizer=summarizer, keep_recent_tokens=700)
    history = [
        ModelRequest(parts=[UserPromptPart("first task")]),
        ModelResponse(parts=[TextPart("ok")]),
        *_history(),
    ]
    out = await pi.compact(history, None)  # type: ignore[arg-type]
    summary = str(out[0].parts[0].content)  # type: ignore[union-attr]
    assert "HISTORY" in summary
    assert "PREFIX" in summary


# -- 7. each request extends the previous one between compactions -------------------------------


async def test_requests_only_grow_between_compactions(tmp_path: Path) -> None:
    pi = _pi(tmp_path, keep_recent_tokens=300)
    seen: list[list[ModelMessage]] = []
    await _agent(_reader(10, seen), pi).run("read every module")
    dumps = [ModelMessagesTypeAdapter.dump_json(m).decode() for m in seen]
    rewrites = 0
    for previous, current in itertools.pairwise(dumps):
        if not current.startswith(previous[:-1]):
            rewrites += 1
            assert "<summary>" in current
    assert rewrites >= 1


# -- 8. usage -----------------------------------------------------------------------------------


async def test_reported_usage_over_the_threshold_compacts_a_short_history(tmp_path: Path) -> None:
    pi = _pi(tmp_path, context_window=10_000, keep_recent_tokens=10)

    def short(usage: RequestUsage) -> list[ModelMessage]:
        return [
            ModelRequest(parts=[UserPromptPart("please look at the parser " * 5)]),
            ModelResponse(parts=[TextPart("looks fine " * 5)], usage=usage),
            ModelRequest(parts=[UserPromptPart("then check the lexer " * 5)]),
        ]

    quiet = await pi.process(short(RequestUsage(input_tokens=100, output_tokens=5)))
    assert pi.last_outcome is not None
    assert not pi.last_outcome.compacted
    (tmp_path / "loud").mkdir()
    loud_pi = _pi(tmp_path / "loud", context_window=10_000, keep_recent_tokens=10)
    loud = await loud_pi.process(short(RequestUsage(input_tokens=9_500, output_tokens=5)))
    assert loud_pi.last_outcome is not None
    assert loud_pi.last_outcome.compacted
    assert len(loud) < len(quiet) + 1


# -- 10. lossless round trip -------------------------------------------------------------------


async def test_every_part_type_round_trips_through_pi_entries(tmp_path: Path) -> None:
    messages: list[ModelMessage] = [
        ModelRequest(
            parts=[SystemPromptPart("be brief"), UserPromptPart("plain")], instructions="you code"
        ),
        ModelResponse(
            parts=[
                ThinkingPart("why", signature="sig"),
                TextPart("answer"),
                ToolCallPart("read_file", '{"path": "a.py"}', tool_call_id="c1"),
            ],
            usage=RequestUsage(input_tokens=10, output_tokens=2, cache_read_tokens=4),
            model_name="m",
            provider_name="p",
        ),
        ModelRequest(parts=[ToolReturnPart("read_file", {"lines": 3}, tool_call_id="c1")]),
        ModelResponse(parts=[TextPart("done")]),
        ModelRequest(parts=[UserPromptPart(["a", "b"])]),
    ]
    pi = _pi(tmp_path, context_window=100_000)
    await pi.process(messages)
    reopened = Session.open(tmp_path / "s.jsonl")
    codec = PydanticAICodec(reopened.now_ms)
    back = [m for m, _ in codec.from_pi(list(reopened.messages()))]
    assert ModelMessagesTypeAdapter.dump_json(back) == ModelMessagesTypeAdapter.dump_json(messages)
    roles = [m["role"] for m in reopened.messages()]
    assert roles == ["custom", "user", "assistant", "toolResult", "assistant", "user"]


# -- the record --------------------------------------------------------------------------------


async def test_pictx_shows_the_conversation_and_its_compactions(tmp_path: Path) -> None:
    from tests.integrations.record import pictx

    pi = PiContext(
        session_file=tmp_path / "agent.jsonl",
        context_window=4_000,
        keep_recent_tokens=300,
        file_tools=FILES,
    )
    await _agent(_reader(10, []), pi).run("read every module")
    tree = pictx("session", "tree", str(tmp_path / "agent.jsonl"))
    assert "user: read every module" in tree
    assert "[compaction]" in tree
    assert "toolResult: read_file" in tree
    assert "all read" in pictx("session", "context", str(tmp_path / "agent.jsonl"))
    assert json.loads((tmp_path / "agent.jsonl").read_text().splitlines()[0])["type"] == "session"


# -- 9. the originals stay recoverable ---------------------------------------------------------


async def test_the_recall_tool_returns_what_compaction_replaced_verbatim(tmp_path: Path) -> None:
    pi = _pi(tmp_path, keep_recent_tokens=300)
    seen: list[list[ModelMessage]] = []

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(list(messages))
        n = len(seen)
        if n <= 8:
            return ModelResponse(
                parts=[ToolCallPart("read_file", {"path": f"src/f{n}.py"}, tool_call_id=f"c{n}")]
            )
        if n == 9:
            return ModelResponse(
                parts=[ToolCallPart("recall", {"query": "contents src/f1.py"}, tool_call_id="r")]
            )
        return ModelResponse(parts=[TextPart("found it again")])

    agent = _agent(FunctionModel(respond), pi, [pi.recall_tool(cache_dir=tmp_path / "cache")])
    result = await agent.run("read every module")
    assert any(e.type == "compaction" for e in pi.engine.session.entries)
    answer = next(
        p
        for m in result.all_messages()
        for p in m.parts
        if isinstance(p, ToolReturnPart) and p.tool_call_id == "r"
    )
    assert "contents of src/f1.py\nx = 1" in str(answer.content)
    assert "summarized by compaction" in str(answer.content)


async def test_instructions_and_tool_schemas_count_before_any_usage(tmp_path: Path) -> None:
    pi = _pi(tmp_path, context_window=3_000, keep_recent_tokens=100)
    history = _history(1)
    await pi.process(history)
    assert not pi.engine.needs_compaction()  # the messages alone are below the threshold

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart("ok")])

    agent = Agent(FunctionModel(respond), capabilities=[pi], instructions="rule " * 2_000)
    await agent.run("go on", message_history=history)
    assert pi.overhead > 2_000
    assert any(e.type == "compaction" for e in pi.engine.session.entries)
