"""The integrations spec's defect cases, through each framework's own mechanism and through the
pi-context adapter, side by side. Offline: the frameworks' fake models, no network, no key.

    PYTHONPATH=src python benchmarks/integrations_defects.py

Prints one table per framework (case, the framework's own result, the adapter's result). The
assertions behind each adapter row are tests in tests/integrations/; this script shows the
framework's behaviour beside them.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import tempfile
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

warnings.filterwarnings("ignore")
logging.disable(logging.WARNING)

Row = tuple[str, str, str]


def _table(title: str, rows: Sequence[Row]) -> None:
    print(f"\n## {title}\n")
    print("| case | framework's own | pi-context adapter |")
    print("|---|---|---|")
    for case, theirs, ours in rows:
        print(f"| {case} | {theirs} | {ours} |")


def _tmp() -> Path:
    return Path(tempfile.mkdtemp(prefix="pictx-defects-"))


# -- LangChain -----------------------------------------------------------------------------------


def langchain_rows() -> list[Row]:
    from langchain.agents.middleware import SummarizationMiddleware
    from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

    from pi_context.integrations.langchain import FakeToolChatModel, PiSummarizationMiddleware
    from pi_context.testing import ScriptedModel, failure

    def call(cid: str, path: str) -> dict[str, Any]:
        return {"name": "read_file", "args": {"path": path}, "id": cid, "type": "tool_call"}

    def orphans(messages: Sequence[BaseMessage]) -> list[str]:
        called: set[str] = set()
        out = []
        for m in messages:
            if isinstance(m, AIMessage):
                called.update(c["id"] or "" for c in m.tool_calls)
            if isinstance(m, ToolMessage) and m.tool_call_id not in called:
                out.append(m.tool_call_id)
        return out

    def kept(update: Any) -> list[BaseMessage]:
        return list(update["messages"][1:]) if update else []

    def ours(**kw: Any) -> PiSummarizationMiddleware:
        kw.setdefault("context_window", 4_000)
        return PiSummarizationMiddleware(
            session_file=_tmp() / "s.jsonl", file_tools={"read_file": ("read", "path")}, **kw
        )

    big = "line\n" * 400
    h38352: list[BaseMessage] = [
        HumanMessage("please read both files"),
        AIMessage("", tool_calls=[call("a", "src/a.py")]),
        AIMessage("", tool_calls=[call("b", "src/b.py")]),
        ToolMessage(big, tool_call_id="a", name="read_file"),
        ToolMessage(big, tool_call_id="b", name="read_file"),
        AIMessage("both read"),
    ]
    h39261: list[BaseMessage] = [HumanMessage("fix the bug in src/app.py")]
    for i in range(4):
        h39261 += [
            AIMessage("", tool_calls=[call(f"c{i}", f"src/f{i}.py")]),
            ToolMessage("y" * 2_000, tool_call_id=f"c{i}", name="read_file"),
        ]
    h39261.append(AIMessage("found it"))
    fake = FakeToolChatModel(messages=iter([AIMessage("a model summary")] * 10))
    rows: list[Row] = []

    default = SummarizationMiddleware(fake)
    fired = default.before_model({"messages": h39261 * 20}, None)  # type: ignore[arg-type]
    mine = ours()
    rows.append(
        (
            "default trigger, history ~20x the window",
            "fires" if fired else "never fires (trigger=None)",
            "fires" if mine.before_model({"messages": h39261 * 2}, None) else "does not fire",
        )
    )

    theirs = SummarizationMiddleware(
        fake, trigger=("messages", 4), keep=("messages", 3), summarizer=lambda m: "summary"
    )
    rows.append(
        (
            "#38352 `[H, AI(a), AI(b), Tool(a), Tool(b), AI]`: orphaned results after the cut",
            str(orphans(kept(theirs.before_model({"messages": h38352}, None)))),  # type: ignore[arg-type]
            str(
                orphans(
                    kept(
                        ours(keep_recent_tokens=200, reserve_tokens=3_500).before_model(
                            {"messages": h38352}, None
                        )
                    )
                )
            ),
        )
    )

    theirs = SummarizationMiddleware(
        fake, trigger=("messages", 5), keep=("messages", 2), trim_tokens_to_summarize=100
    )
    their_summary = str(kept(theirs.before_model({"messages": h39261}, None))[0].content)  # type: ignore[arg-type]
    our_summary = str(
        kept(
            ours(keep_recent_tokens=100, reserve_tokens=2_000).before_model(
                {"messages": h39261}, None
            )
        )[0].content
    )

    def judge(text: str) -> str:
        paths = sum(f"src/f{i}.py" in text for i in range(4))
        task = "task kept" if "fix the bug in src/app.py" in text else "task lost"
        return f"{task}, {paths}/4 paths"

    rows.append(
        (
            "#39261 summary when the trim window holds no human message",
            f"{their_summary.splitlines()[-1][:60]!r}: {judge(their_summary)}",
            judge(our_summary),
        )
    )

    seen: list[list[BaseMessage]] = []

    def summarize(messages: list[BaseMessage]) -> str:
        seen.append(messages)
        return f"SUMMARY {len(seen)}"

    theirs = SummarizationMiddleware(
        fake, trigger=("messages", 6), keep=("messages", 3), summarizer=summarize
    )
    state = list(h39261)
    for _ in range(2):
        update = theirs.before_model({"messages": state}, None)  # type: ignore[arg-type]
        state = [
            *kept(update),
            HumanMessage("continue"),
            AIMessage("more"),
            HumanMessage("again"),
            AIMessage("ok"),
        ]
    again = any("SUMMARY 1" in str(m.content) for m in seen[-1]) if len(seen) > 1 else False
    model = ScriptedModel(
        [
            __import__("pi_context.testing", fromlist=["reply"]).reply(f"SUMMARY {i}")
            for i in range(8)
        ]
    )
    mine = ours(summarizer=model, keep_recent_tokens=100, reserve_tokens=3_000)
    out = kept(mine.before_model({"messages": h39261}, None))
    mine.before_model({"messages": out + h39261[1:]}, None)
    prompts = ["".join(b.get("text", "") for b in r.messages[0]["content"]) for r in model.requests]  # type: ignore[union-attr]
    update = [p for p in prompts if "<previous-summary>" in p]
    rows.append(
        (
            "second summary: what happens to the first",
            "re-summarized as a message" if again else "not seen again",
            "update slot (`<previous-summary>`), not in the transcript"
            if update and "SUMMARY" not in update[0].partition("</conversation>")[0]
            else "re-summarized",
        )
    )

    def boom(messages: list[BaseMessage]) -> str:
        raise RuntimeError("provider down")

    theirs = SummarizationMiddleware(
        fake, trigger=("messages", 5), keep=("messages", 2), summarizer=boom
    )
    try:
        result = kept(theirs.before_model({"messages": h39261}, None))  # type: ignore[arg-type]
        their_text = f"writes {str(result[0].content)[:50]!r}"
    except Exception as exc:
        their_text = f"raises {type(exc).__name__} into the agent run"
    mine = ours(
        summarizer=ScriptedModel([failure("provider down")] * 4),
        keep_recent_tokens=100,
        reserve_tokens=2_000,
    )
    update2 = mine.before_model({"messages": h39261}, None)
    rows.append(
        (
            "summarizer fails",
            their_text,
            "history unchanged, run continues; reason: "
            + repr((mine.last_outcome.reason or "")[:70] if mine.last_outcome else "")
            if update2 is None
            else "wrote something",
        )
    )
    return rows


# -- pydantic-ai ---------------------------------------------------------------------------------


def pydantic_rows() -> list[Row]:
    from pydantic_ai import Agent
    from pydantic_ai.capabilities import ProcessHistory
    from pydantic_ai.messages import (
        ModelMessage,
        ModelMessagesTypeAdapter,
        ModelRequest,
        ModelResponse,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
    )
    from pydantic_ai.models.function import AgentInfo, FunctionModel
    from pydantic_ai.models.test import TestModel

    from pi_context.integrations.pydantic_ai import PiContext

    def returns(messages: Sequence[ModelMessage]) -> int:
        return sum(
            isinstance(p, ToolReturnPart)
            for m in messages
            if isinstance(m, ModelRequest)
            for p in m.parts
        )

    def run(capability: Any) -> tuple[list[list[ModelMessage]], int]:
        seen: list[list[ModelMessage]] = []

        def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            seen.append(list(messages))
            if len(seen) <= 12:
                return ModelResponse(
                    parts=[
                        ToolCallPart(
                            "read_file",
                            {"path": f"src/f{len(seen)}.py"},
                            tool_call_id=f"c{len(seen)}",
                        )
                    ]
                )
            return ModelResponse(parts=[TextPart("done")])

        agent = Agent(FunctionModel(respond), capabilities=[capability])

        @agent.tool_plain
        def read_file(path: str) -> str:
            """Read a file."""
            return f"contents of {path}\n" + "x = 1\n" * 300

        asyncio.run(agent.run("read every module"))
        dumps = [ModelMessagesTypeAdapter.dump_json(m).decode() for m in seen]
        rewrites = sum(not b.startswith(a[:-1]) for a, b in itertools.pairwise(dumps))
        return seen, rewrites

    trimmed: list[list[ModelMessage]] = []

    def keep_last_three(messages: list[Any]) -> list[Any]:
        trimmed.append(messages[-3:])  # the shape of the docs' "keep recent messages" processor
        return messages[-3:]

    rows: list[Row] = []
    try:
        Agent(TestModel(), history_processors=[keep_last_three])  # type: ignore[call-overload]
        their = "accepted"
    except TypeError:
        their = "TypeError: removed in v2"
    rows.append(
        (
            "`history_processors=`",
            their,
            "`capabilities=[PiContext(...)]` or `ProcessHistory(pi.process)`",
        )
    )

    _seen, their_rewrites = run(ProcessHistory(keep_last_three))
    from pydantic_ai.messages import repair_messages

    dropped = sum(returns(m) - returns(repair_messages(m)) for m in trimmed)
    pi = PiContext(
        session_file=_tmp() / "s.jsonl",
        context_window=4_000,
        keep_recent_tokens=300,
        file_tools={"read_file": ("read", "path")},
    )
    original = pi.process
    ours_out: list[list[ModelMessage]] = []

    async def process(messages: list[ModelMessage]) -> list[ModelMessage]:
        out = await original(messages)
        ours_out.append(out)
        return out

    pi.process = process  # type: ignore[method-assign]
    mine, our_rewrites = run(pi)
    our_dropped = sum(returns(m) - returns(repair_messages(m)) for m in ours_out)
    rows.append(
        (
            "tool returns core's `repair_messages` drops silently (#2050, #4728) over a 12-read run",
            f"{dropped} (a keep-the-last-3 processor)",
            str(our_dropped),
        )
    )
    rows.append(
        (
            "requests that rewrite what the previous one sent (prompt-cache misses), 13 requests",
            str(their_rewrites),
            f"{our_rewrites} (the compactions)",
        )
    )
    biggest = max(len(ModelMessagesTypeAdapter.dump_json(m)) for m in mine)
    rows.append(
        (
            "summary of what was dropped",
            "none: the trimmed messages are gone from the run",
            f"pi summary with file lists; largest request {biggest // 4} tokens (est.) in a 4,000 window",
        )
    )
    rows.append(
        (
            "harness `SummarizingCompaction` (pydantic-ai-harness 0.62)",
            "not run here: the harness pins pydantic-ai-slim==2.62.0 exactly",
            "split turns get a turn-prefix summary (test)",
        )
    )
    return rows


# -- openai-agents -------------------------------------------------------------------------------


def openai_rows() -> list[Row]:
    from agents import Agent, RunConfig, Runner, SQLiteSession, function_tool, set_tracing_disabled
    from agents.memory import OpenAIResponsesCompactionSession
    from agents.testing import ScriptedModel, assistant_message, function_call

    from pi_context.integrations.openai_agents import PiSession

    set_tracing_disabled(True)

    @function_tool
    def read_file(path: str) -> str:
        """Read a file."""
        return f"contents of {path}\n" + "x = 1\n" * 300

    def steps(n: int) -> list[Any]:
        out: list[Any] = [
            [function_call("read_file", json.dumps({"path": f"src/f{i}.py"}), call_id=f"c{i}")]
            for i in range(n)
        ]
        return [*out, [assistant_message("done")]]

    class Offline(Exception):
        pass

    calls_at: list[int] = []
    current: list[Any] = []

    def largest(session: Any, config: RunConfig | None = None) -> tuple[int, int]:
        model = ScriptedModel(steps(24))
        current[:] = [model]
        agent = Agent(name="a", model=model, tools=[read_file])
        # the server compaction is called after the loop; offline here it raises Offline
        with contextlib.suppress(Offline):
            asyncio.run(
                Runner.run(
                    agent, "read every module", session=session, run_config=config, max_turns=40
                )
            )
        sizes = [len(json.dumps(list(c.input))) // 4 for c in model.calls]
        return max(sizes), len(model.calls)

    class CountingClient:
        class responses:
            @classmethod
            async def compact(cls, **kwargs: Any) -> Any:
                calls_at.append(len(current[0].calls))
                raise Offline

    rows: list[Row] = []
    try:
        OpenAIResponsesCompactionSession("s", SQLiteSession("s"), model="llama-3.1-8b")
        their = "accepted"
    except ValueError as exc:
        their = f"ValueError: {str(exc)[:55]}"
    rows.append(
        (
            "compaction with a non-OpenAI model",
            their,
            "any pi-context model, or the offline summarizer",
        )
    )

    server = OpenAIResponsesCompactionSession("s", SQLiteSession("s2"), client=CountingClient())  # type: ignore[arg-type]
    their_max, calls = largest(server)
    session = PiSession(
        session_file=_tmp() / "s.jsonl",
        context_window=4_000,
        keep_recent_tokens=300,
        file_tools={"read_file": ("read", "path")},
    )
    our_max, _ = largest(session, RunConfig(call_model_input_filter=session.input_filter))
    rows.append(
        (
            f"24-read tool loop ({calls} model calls): server compactions during the loop",
            f"{sum(c < calls for c in calls_at)} (deferred while turns run local tools; first call after model call {calls_at[0] if calls_at else '-'})",
            f"{sum(e.type == 'compaction' for e in session.engine.session.entries)} (the input filter)",
        )
    )
    rows.append(
        (
            "largest model input in that loop (est. tokens; window 4,000)",
            str(their_max),
            str(our_max),
        )
    )

    plain = SQLiteSession("limit")
    items = [{"role": "user", "content": "go"}]
    for i in range(3):
        items += [
            {"type": "function_call", "call_id": f"c{i}", "name": "read_file", "arguments": "{}"},
            {"type": "function_call_output", "call_id": f"c{i}", "output": "x"},
        ]
    asyncio.run(plain.add_items(items))  # type: ignore[arg-type]
    mine = PiSession(session_file=_tmp() / "l.jsonl", context_window=4_000)
    asyncio.run(mine.add_items(items))
    their_start = asyncio.run(plain.get_items(limit=3))[0].get("type")
    our_start = asyncio.run(mine.get_items(limit=3))[0].get("type")
    rows.append(
        (
            "`get_items(limit=3)` starts with",
            str(their_start) + " (the runner prunes it later)",
            str(our_start),
        )
    )
    return rows


def main(argv: Sequence[str] | None = None) -> None:
    sections: list[tuple[str, Callable[[], list[Row]]]] = [
        (
            "LangChain 1.5 (`SummarizationMiddleware`) vs `PiSummarizationMiddleware`",
            langchain_rows,
        ),
        ("pydantic-ai 2.6x (`ProcessHistory` trimming, core repair) vs `PiContext`", pydantic_rows),
        (
            "openai-agents 0.24 (`OpenAIResponsesCompactionSession`, `SQLiteSession`) vs `PiSession`",
            openai_rows,
        ),
    ]
    for title, rows in sections:
        _table(title, rows())


if __name__ == "__main__":
    main()
