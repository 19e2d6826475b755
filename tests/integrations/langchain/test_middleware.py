"""PiSummarizationMiddleware on LangChain's own fake model, offline: pi's ten promises."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
    message_to_dict,
)
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from pi_context.integrations.langchain import (
    FakeToolChatModel,
    LangChainCodec,
    PiSummarizationMiddleware,
)
from pi_context.messages import text_of
from pi_context.session import Session
from pi_context.testing import FixedClock, ScriptedModel, SequentialIds, failure, reply

FILES = {"read_file": ("read", "path"), "edit_file": ("edit", "path")}


def _session(tmp_path: Path) -> Session:
    return Session.create(
        tmp_path / "s.jsonl", cwd=str(tmp_path), ids=SequentialIds(), clock=FixedClock()
    )


def _mw(tmp_path: Path, **kw: Any) -> PiSummarizationMiddleware:
    kw.setdefault("context_window", 4_000)
    kw.setdefault("file_tools", FILES)
    return PiSummarizationMiddleware(session=_session(tmp_path), **kw)


def _call(call_id: str, path: str, name: str = "read_file") -> dict[str, Any]:
    return {"name": name, "args": {"path": path}, "id": call_id, "type": "tool_call"}


def orphans(messages: Sequence[BaseMessage]) -> list[str]:
    """The pair invariant in LangChain's terms: what breaks it."""
    problems: list[str] = []
    called: set[str] = set()
    answered: set[str] = set()
    last_ai = max((i for i, m in enumerate(messages) if isinstance(m, AIMessage)), default=-1)
    for message in messages:
        if isinstance(message, ToolMessage):
            if message.tool_call_id not in called:
                problems.append(f"result {message.tool_call_id} without its call")
            answered.add(message.tool_call_id)
        elif isinstance(message, AIMessage):
            called.update(c["id"] or "" for c in message.tool_calls)
    for index, message in enumerate(messages):
        if isinstance(message, AIMessage) and index != last_ai:
            problems += [
                f"call {c['id']} without result"
                for c in message.tool_calls
                if c["id"] not in answered
            ]
    return problems


def _replacement(update: dict[str, Any] | None) -> list[BaseMessage]:
    assert update is not None
    first, *rest = update["messages"]
    assert isinstance(first, RemoveMessage)
    return list(rest)


def _history_38352() -> list[BaseMessage]:
    big = "line\n" * 400
    return [
        HumanMessage("please read both files", id="h1"),
        AIMessage("", tool_calls=[_call("a", "src/a.py")], id="ai-a"),
        AIMessage("", tool_calls=[_call("b", "src/b.py")], id="ai-b"),
        ToolMessage(big, tool_call_id="a", name="read_file", id="t-a"),
        ToolMessage(big, tool_call_id="b", name="read_file", id="t-b"),
        AIMessage("both read", id="ai-done"),
    ]


# -- 1. the pair invariant ---------------------------------------------------------------------


@pytest.mark.parametrize("keep", [1, 50, 200, 400, 500, 600, 900, 1_000, 1_500])
def test_no_cut_orphans_a_tool_result_in_the_38352_shape(tmp_path: Path, keep: int) -> None:
    mw = _mw(tmp_path, keep_recent_tokens=keep, reserve_tokens=3_500)
    update = mw.before_model({"messages": _history_38352()}, None)
    assert mw.last_outcome is not None
    out = _replacement(update) if update else _history_38352()
    assert orphans(out) == []


def test_the_langchain_summarizer_orphans_that_result_and_ours_does_not(tmp_path: Path) -> None:
    from langchain.agents.middleware import SummarizationMiddleware

    theirs = SummarizationMiddleware(
        FakeToolChatModel(messages=iter([])),
        trigger=("messages", 4),
        keep=("messages", 3),
        summarizer=lambda messages: "summary",
    )
    kept = _replacement(theirs.before_model({"messages": _history_38352()}, None))  # type: ignore[typeddict-item, arg-type]
    assert orphans(kept) == ["result a without its call"]
    ours = _mw(tmp_path, keep_recent_tokens=200, reserve_tokens=3_500)
    assert orphans(_replacement(ours.before_model({"messages": _history_38352()}, None))) == []


def test_a_history_arriving_with_an_orphan_is_repaired_in_what_is_emitted(tmp_path: Path) -> None:
    mw = _mw(tmp_path, context_window=100_000)
    history = [
        HumanMessage("go", id="h"),
        ToolMessage("stray", tool_call_id="gone", name="read_file", id="t"),
        AIMessage("", tool_calls=[_call("x", "a.py")], id="ai"),
        HumanMessage("never mind", id="h2"),
    ]
    out = _replacement(mw.before_model({"messages": history}, None))
    assert orphans(out) == []
    assert [type(m).__name__ for m in out] == [
        "HumanMessage",
        "AIMessage",
        "ToolMessage",
        "HumanMessage",
    ]
    assert out[2].status == "error"  # type: ignore[attr-defined]
    # the record keeps what arrived
    roles = [
        e.get("message", {}).get("role") for e in mw.engine.session.entries if e.type == "message"
    ]
    assert roles.count("toolResult") == 1


# -- 2. no placeholder, no error text as a summary ---------------------------------------------


@pytest.mark.parametrize("answer", [failure("rate limited for good"), reply("")])
def test_a_failing_or_empty_summarizer_leaves_the_history_unchanged(
    tmp_path: Path, answer: Any
) -> None:
    mw = _mw(tmp_path, summarizer=ScriptedModel([answer] * 4), keep_recent_tokens=300)
    history = _history_38352()
    assert mw.before_model({"messages": history}, None) is None
    assert mw.last_outcome is not None
    assert not mw.last_outcome.compacted
    assert mw.last_outcome.reason
    assert all(e.type != "compaction" for e in mw.engine.session.entries)


def _history_39261() -> list[BaseMessage]:
    out: list[BaseMessage] = [HumanMessage("fix the bug in src/app.py", id="task")]
    for i in range(4):
        out.append(AIMessage("", tool_calls=[_call(f"c{i}", f"src/f{i}.py")], id=f"ai{i}"))
        out.append(ToolMessage("y" * 2_000, tool_call_id=f"c{i}", name="read_file", id=f"t{i}"))
    out.append(AIMessage("found it", id="end"))
    return out


def test_the_39261_history_keeps_the_task_and_every_path(tmp_path: Path) -> None:
    from langchain.agents.middleware import SummarizationMiddleware

    theirs = SummarizationMiddleware(
        FakeToolChatModel(messages=iter([AIMessage("never called")])),
        trigger=("messages", 5),
        keep=("messages", 2),
        trim_tokens_to_summarize=100,
    )
    their_summary = _replacement(theirs.before_model({"messages": _history_39261()}, None))[0]  # type: ignore[typeddict-item, arg-type]
    assert "too long to summarize" in str(their_summary.content)
    mw = _mw(tmp_path, keep_recent_tokens=100, reserve_tokens=2_000)
    summary = str(_replacement(mw.before_model({"messages": _history_39261()}, None))[0].content)
    assert "fix the bug in src/app.py" in summary
    for i in range(4):
        assert f"src/f{i}.py" in summary


# -- 3. file lists from the calls' arguments ---------------------------------------------------


def test_file_lists_survive_a_summarizer_that_says_ok(tmp_path: Path) -> None:
    mw = _mw(
        tmp_path,
        summarizer=ScriptedModel([reply("OK")] * 2),
        keep_recent_tokens=100,
        reserve_tokens=2_000,
    )
    task, *rest = _history_39261()
    history = [
        task,
        AIMessage("", tool_calls=[_call("e", "src/a.py", "edit_file")], id="ed"),
        ToolMessage("edited", tool_call_id="e", name="edit_file", id="te"),
        *rest,
    ]
    summary = str(_replacement(mw.before_model({"messages": history}, None))[0].content)
    assert "OK" in summary
    assert "<modified-files>\nsrc/a.py\n</modified-files>" in summary
    assert "<read-files>\nsrc/f0.py" in summary


# -- 4, 6, 7: an agent run: iterative summaries, offline, cache stability ------------------------


@tool
def read_file(path: str) -> str:
    """Read a file of the project."""
    return f"contents of {path}\n" + "x = 1\n" * 300


class Spy(AgentMiddleware):
    """Records the messages of every model request."""

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[list[dict[str, Any]]] = []

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> ModelResponse:
        dump = [message_to_dict(m) for m in request.messages]
        for d in dump:
            d["data"].pop("id", None)
        self.requests.append(dump)
        return handler(request)


def _run(mw: PiSummarizationMiddleware, turns: int, spy: Spy | None = None) -> dict[str, Any]:
    replies: list[AIMessage] = []
    for i in range(turns):
        replies.append(AIMessage("", tool_calls=[_call(f"c{i}", f"src/f{i}.py")]))
    replies.append(AIMessage("all read"))
    agent = create_agent(
        FakeToolChatModel(messages=iter(replies)),
        [read_file],
        middleware=[mw, *([spy] if spy else [])],
        checkpointer=InMemorySaver(),
    )
    config: Any = {"configurable": {"thread_id": "t"}}
    out: dict[str, Any] = agent.invoke({"messages": [HumanMessage("read every module")]}, config)
    out["_state"] = agent.get_state(config).values
    return out


def test_an_agent_run_compacts_repeatedly_and_each_summary_updates_the_last(tmp_path: Path) -> None:
    model = ScriptedModel([reply(f"SUMMARY {i}") for i in range(20)])
    mw = _mw(tmp_path, summarizer=model, keep_recent_tokens=300)
    out = _run(mw, 16)
    compactions = [e for e in mw.engine.session.entries if e.type == "compaction"]
    assert len(compactions) >= 2
    prompts = [text_of(r.messages[0]["content"]) for r in model.requests]
    updates = [p for p in prompts if "<previous-summary>" in p]
    assert updates
    for prompt in updates:
        conversation = prompt.partition("</conversation>")[0]
        assert "SUMMARY" not in conversation  # never re-summarized as a message
    # the checkpointed state is the pi projection
    state = out["_state"]["messages"]
    projected = [m for m, _ in mw.codec.from_pi([m for _, m in mw.engine.projected()])]
    assert [mw.codec.same(a, b) for a, b in zip(state, projected, strict=True)] == [True] * len(
        state
    )
    assert orphans(state) == []


def test_offline_run_needs_no_model_and_writes_a_real_summary(tmp_path: Path) -> None:
    mw = _mw(tmp_path, keep_recent_tokens=300)
    out = _run(mw, 8)
    assert out["messages"][-1].content == "all read"
    summary = str(out["messages"][0].content)
    assert "read every module" in summary
    assert "src/f0.py" in summary


def test_between_compactions_each_request_extends_the_previous_one(tmp_path: Path) -> None:
    spy = Spy()
    mw = _mw(tmp_path, keep_recent_tokens=300)
    _run(mw, 10, spy)
    compacted_at = {
        i
        for i, r in enumerate(spy.requests)
        if r
        and r[0]["data"].get("additional_kwargs", {}).get("lc_source")
        and (i == 0 or r[0] != spy.requests[i - 1][0])
    }
    assert compacted_at  # it did compact during the run
    for i in range(1, len(spy.requests)):
        if i in compacted_at:
            continue
        previous, current = spy.requests[i - 1], spy.requests[i]
        assert current[: len(previous)] == previous, (
            f"request {i} rewrote what request {i - 1} sent"
        )


# -- 5. split turns ----------------------------------------------------------------------------


def test_a_cut_inside_a_turn_adds_a_turn_prefix_summary(tmp_path: Path) -> None:
    model = ScriptedModel([reply("HISTORY"), reply("PREFIX")])
    mw = _mw(tmp_path, summarizer=model, keep_recent_tokens=400, reserve_tokens=2_000)
    history: list[BaseMessage] = [HumanMessage("first task", id="h0"), AIMessage("ok", id="a0")]
    history += _history_39261()
    summary = str(_replacement(mw.before_model({"messages": history}, None))[0].content)
    assert "HISTORY" in summary
    assert "PREFIX" in summary
    assert "first task" in text_of(model.requests[0].messages[0]["content"])
    assert "fix the bug in src/app.py" in text_of(model.requests[1].messages[0]["content"])


# -- 8. the threshold reads the reported usage -------------------------------------------------


def _short(usage: dict[str, Any] | None = None) -> list[BaseMessage]:
    return [
        HumanMessage("please look at the parser " * 5, id="h"),
        AIMessage("the parser looks fine " * 5, id="a", usage_metadata=usage),
        HumanMessage("then check the lexer " * 5, id="h2"),
    ]


def test_reported_usage_over_the_threshold_compacts_a_short_history(tmp_path: Path) -> None:
    quiet = _mw(tmp_path, context_window=10_000, keep_recent_tokens=10)
    assert quiet.before_model({"messages": _short()}, None) is None
    (tmp_path / "loud").mkdir()
    loud = _mw(tmp_path / "loud", context_window=10_000, keep_recent_tokens=10)
    usage = {"input_tokens": 9_500, "output_tokens": 5, "total_tokens": 9_505}
    assert loud.before_model({"messages": _short(usage)}, None) is not None


def test_system_prompt_and_tool_schemas_count_before_any_usage(tmp_path: Path) -> None:
    mw = _mw(tmp_path, context_window=2_000, keep_recent_tokens=10)
    request = ModelRequest(
        model=FakeToolChatModel(messages=iter([])),
        messages=[],
        system_message=SystemMessage("rules " * 2_000),
        tools=[read_file],
    )
    mw.wrap_model_call(request, lambda r: ModelResponse(result=[AIMessage("x")]))
    assert mw.overhead > 2_000
    mw.before_model({"messages": _short()}, None)
    assert mw.engine.context_tokens() < 200  # the messages alone are far below the threshold
    assert mw.engine.needs_compaction(mw.overhead)
    assert mw.last_outcome is not None
    assert mw.last_outcome.reason != "below the compaction threshold"  # it tried (the guard
    # then refused: a summary of so short a history would not shrink it)


# -- 10. lossless round trip -------------------------------------------------------------------


def test_every_message_type_round_trips_through_pi_entries(tmp_path: Path) -> None:
    messages: list[BaseMessage] = [
        SystemMessage("be brief", id="s"),
        HumanMessage("plain", id="h1"),
        HumanMessage(
            [
                {"type": "text", "text": "blocks"},
                {"type": "image_url", "image_url": {"url": "data:x"}},
            ],
            id="h2",
        ),
        AIMessage(
            [{"type": "reasoning", "reasoning": "think"}, {"type": "text", "text": "answer"}],
            tool_calls=[_call("c1", "a.py")],
            usage_metadata={
                "input_tokens": 10,
                "output_tokens": 2,
                "total_tokens": 12,
                "input_token_details": {"cache_read": 4},
            },
            response_metadata={"model_name": "m", "model_provider": "p"},
            id="a1",
        ),
        ToolMessage(
            "body", tool_call_id="c1", name="read_file", status="error", artifact={"k": 1}, id="t1"
        ),
        AIMessage("plain answer", id="a2"),
    ]
    mw = _mw(tmp_path)
    mw.before_model({"messages": messages}, None)
    reopened = Session.open(tmp_path / "s.jsonl")
    codec = LangChainCodec(reopened.now_ms)
    back = [m for m, _ in codec.from_pi(list(reopened.messages()))]
    assert [json.dumps(message_to_dict(m)) for m in back] == [
        json.dumps(message_to_dict(m)) for m in messages
    ]
    # pi sees real messages: roles, tool calls with their arguments, the usage
    roles = [m["role"] for m in reopened.messages()]
    assert roles == ["custom", "user", "user", "assistant", "toolResult", "assistant"]


# -- the record: pictx opens the file ----------------------------------------------------------


def test_pictx_shows_the_conversation_and_its_compactions(tmp_path: Path) -> None:
    from tests.integrations.record import pictx

    mw = PiSummarizationMiddleware(
        session_file=tmp_path / "agent.jsonl",
        context_window=4_000,
        keep_recent_tokens=300,
        file_tools=FILES,
    )
    _run(mw, 10)
    tree = pictx("session", "tree", str(tmp_path / "agent.jsonl"))
    assert "user: read every module" in tree
    assert "[compaction]" in tree
    assert "toolResult: read_file" in tree
    context = pictx("session", "context", str(tmp_path / "agent.jsonl"))
    assert "condensed" in context
    assert "all read" in context


# -- 9. the originals stay recoverable ---------------------------------------------------------


def test_the_recall_tool_returns_what_compaction_replaced_verbatim(tmp_path: Path) -> None:
    mw = _mw(tmp_path, keep_recent_tokens=300)
    recall = mw.recall_tool(cache_dir=tmp_path / "cache")
    replies = [AIMessage("", tool_calls=[_call(f"c{i}", f"src/f{i}.py")]) for i in range(8)]
    replies.append(
        AIMessage(
            "",
            tool_calls=[
                {
                    "name": "recall",
                    "args": {"query": "contents src/f0.py"},
                    "id": "r",
                    "type": "tool_call",
                }
            ],
        )
    )
    replies.append(AIMessage("found it again"))
    agent = create_agent(
        FakeToolChatModel(messages=iter(replies)), [read_file, recall], middleware=[mw]
    )
    out = agent.invoke({"messages": [HumanMessage("read every module")]})
    assert any(e.type == "compaction" for e in mw.engine.session.entries)
    answer = next(m for m in out["messages"] if isinstance(m, ToolMessage) and m.name == "recall")
    assert "contents of src/f0.py\nx = 1" in str(answer.content)
    assert "summarized by compaction" in str(answer.content)


def test_a_history_with_an_orphan_result_compacts_repeatedly_on_one_root(tmp_path: Path) -> None:
    """The repaired list the middleware hands back (the stray result left out) is what the
    session's branch holds: the next hooks append to it, never record it again from a new
    root where the summary would be a plain user message, re-summarized by the next
    compaction. pydantic-ai's capability handles the same history (see its tests)."""
    model = ScriptedModel([reply(f"SUMMARY {i}") for i in range(20)])
    mw = _mw(tmp_path, summarizer=model, keep_recent_tokens=300)
    replies: list[AIMessage] = [
        AIMessage("", tool_calls=[_call(f"c{i}", f"src/f{i}.py")]) for i in range(16)
    ]
    replies.append(AIMessage("all read"))
    agent = create_agent(
        FakeToolChatModel(messages=iter(replies)),
        [read_file],
        middleware=[mw],
        checkpointer=InMemorySaver(),
    )
    config: Any = {"configurable": {"thread_id": "t"}}
    history: list[BaseMessage] = [HumanMessage("read the old modules", id="h0")]
    for i in range(8):
        history.append(AIMessage("", tool_calls=[_call(f"o{i}", f"old/m{i}.py")], id=f"ai{i}"))
        history.append(
            ToolMessage("line\n" * 600, tool_call_id=f"o{i}", name="read_file", id=f"t{i}")
        )
    history += [
        AIMessage("read them", id="ai-done"),
        ToolMessage("stray", tool_call_id="gone", name="read_file", id="stray"),
        HumanMessage("read every module", id="h1"),
    ]
    state: Any = {"messages": history}
    agent.invoke(state, config)
    session = mw.engine.session
    compactions = [e for e in session.entries if e.type == "compaction"]
    assert len(compactions) >= 2
    assert len(session.roots()) == 1  # never recorded again from a new root
    user_texts = [
        str(dict(e.message or {}).get("content"))
        for e in session.entries
        if e.type == "message" and e.role == "user"
    ]
    assert not any("<summary>" in t or "SUMMARY" in t for t in user_texts)
    for request in model.requests:
        conversation = text_of(request.messages[0]["content"]).partition("</conversation>")[0]
        assert "SUMMARY" not in conversation  # a summary is never summarized as a message
