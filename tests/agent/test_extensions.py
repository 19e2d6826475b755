"""Extension events as the agent session dispatches them."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, cast

from pi_context.compaction.events import BeforeCompact, SessionCompact
from pi_context.events import CompactionEnd, ExtensionFailure, MessageUpdate, TurnStart
from pi_context.extensions import ExtensionAPI, load_extensions
from pi_context.extensions.events import (
    BeforeAgentStartResult,
    BranchSummaryDraft,
    CompactionDraft,
    ContextResult,
    SessionBeforeCompactResult,
    SessionBeforeTreeResult,
)
from pi_context.messages import text_of
from pi_context.testing import ScriptedModel, reply

from .conftest import MakeSession
from .fakes import key_of


def runner_with(project_dir: Path, register: Any) -> Any:
    return load_extensions(
        cwd=project_dir, include_discovered=False, registrations=[("test-ext", register)]
    )


async def test_before_agent_start_section_is_patched_and_stored(
    make_session: MakeSession, project_dir: Path
) -> None:
    def register(pi: ExtensionAPI) -> None:
        @pi.on("before_agent_start")
        def add(event: Any, ctx: Any) -> None:
            event.set_section("team_notes", "<team_notes>\nRun make check.\n</team_notes>")

    model = ScriptedModel([reply("ok"), reply("again")])
    sess = await make_session(model, extensions=runner_with(project_dir, register))
    await sess.run("hi")
    await sess.run("again")
    systems = [e.message for e in sess.session.entries if e.role == "system"]
    assert len(systems) == 1  # unchanged on the second run: no new patch
    sections = key_of(systems[0], "sections")
    assert "team_notes" in sections
    assert list(sections)[-1] == "team_notes"


async def test_forced_prompt_is_sent_but_never_stored(
    make_session: MakeSession, project_dir: Path
) -> None:
    def register(pi: ExtensionAPI) -> BeforeAgentStartResult | None:
        pi.on("before_agent_start", lambda e, c: BeforeAgentStartResult(system_prompt="FORCED"))
        return None

    model = ScriptedModel([reply("ok")])
    sess = await make_session(model, extensions=runner_with(project_dir, register))
    await sess.run("hi")
    sent = model.requests[0].messages
    assert sent[0]["role"] == "system"
    assert sent[0]["content"] == "FORCED"
    assert "sections" not in sent[0]
    assert [m["role"] for m in sent] == ["system", "user"]
    stored = sess.session.entries[0].message
    assert stored is not None
    assert "sections" in stored
    assert "FORCED" not in str(stored)


async def test_context_handler_prunes_without_losing_the_prompt(
    make_session: MakeSession, project_dir: Path
) -> None:
    def register(pi: ExtensionAPI) -> None:
        @pi.on("context")
        def last_only(event: Any, ctx: Any) -> ContextResult:
            assert all(m["role"] != "system" for m in event.messages)
            return ContextResult(messages=event.messages[-1:])

    model = ScriptedModel([reply("one"), reply("two")])
    sess = await make_session(model, extensions=runner_with(project_dir, register))
    await sess.run("first")
    await sess.run("second")
    sent = model.requests[1].messages
    assert [m["role"] for m in sent] == ["system", "user"]
    assert text_of(sent[1]["content"]) == "second"
    assert "sections" in sent[0]
    # The stored session still has everything.
    roles = [m["role"] for m in sess.session.projection().messages]
    assert roles == ["system", "user", "assistant", "user", "assistant"]


async def test_raising_handler_is_reported_and_the_run_goes_on(
    make_session: MakeSession, project_dir: Path
) -> None:
    def register(pi: ExtensionAPI) -> None:
        @pi.on("context")
        def broken(event: Any, ctx: Any) -> None:
            raise RuntimeError("kaput")

    model = ScriptedModel([reply("fine")])
    sess = await make_session(model, extensions=runner_with(project_dir, register))
    events = await sess.run("hi")
    errors = [e for e in events if isinstance(e, ExtensionFailure)]
    assert errors
    assert errors[0].event == "context"
    assert "kaput" in errors[0].error
    assert events[-1].type == "agent_settled"


async def test_custom_compaction_from_extension(
    make_session: MakeSession, project_dir: Path
) -> None:
    seen: list[str] = []

    def register(pi: ExtensionAPI) -> None:
        @pi.on("session_before_compact")
        def custom(event: Any, ctx: Any) -> SessionBeforeCompactResult:
            seen.append(event.reason)
            prep = event.preparation
            return SessionBeforeCompactResult(
                compaction=CompactionDraft(
                    summary="custom summary",
                    first_kept_entry_id=prep.first_kept_entry_id,
                    tokens_before=prep.tokens_before,
                )
            )

        @pi.on("session_compact")
        def done(event: Any, ctx: Any) -> None:
            seen.append(f"compact:{event.from_extension}")

    model = ScriptedModel([reply("a " * 200), reply("b " * 200)])
    sess = await make_session(
        model,
        extensions=runner_with(project_dir, register),
        settings={"compaction": {"keepRecentTokens": 1}},
    )
    await sess.run("q " * 200)
    await sess.run("r " * 200)
    result = await sess.compact()
    assert result["summary"] == "custom summary"
    entry = sess.session.entries[-1]
    assert entry.type == "compaction"
    assert entry.get("fromHook") is True
    assert seen == ["manual", "compact:True"]


async def test_tree_hooks(make_session: MakeSession, project_dir: Path) -> None:
    calls: list[str] = []

    def register(pi: ExtensionAPI) -> None:
        @pi.on("session_before_tree")
        def before(event: Any, ctx: Any) -> SessionBeforeTreeResult:
            calls.append(f"before:{event.preparation.user_wants_summary}")
            return SessionBeforeTreeResult(summary=BranchSummaryDraft(summary="from ext"))

        @pi.on("session_tree")
        def after(event: Any, ctx: Any) -> None:
            calls.append(f"tree:{event.from_extension}")

    model = ScriptedModel([reply("one"), reply("two")])
    sess = await make_session(model, extensions=runner_with(project_dir, register))
    await sess.run("first")
    await sess.run("second")
    first_assistant = next(e for e in sess.session.entries if e.role == "assistant")
    result = await sess.navigate(first_assistant.id, summarize=True)
    summary = sess.session.get(result.summary_entry_id)  # type: ignore[arg-type]
    assert summary is not None
    assert summary.get("summary") == "from ext"
    assert summary.get("fromHook") is True
    assert calls == ["before:True", "tree:True"]


async def test_turn_end_sees_each_turn(make_session: MakeSession, project_dir: Path) -> None:
    turns: list[tuple[int, int]] = []

    def register(pi: ExtensionAPI) -> None:
        @pi.on("turn_end")
        def end(event: Any, ctx: Any) -> None:
            turns.append((event.turn_index, len(event.tool_results)))

    model = ScriptedModel([reply(tool_calls=[("bash", {"command": "echo x"})]), reply("done")])
    sess = await make_session(model, extensions=runner_with(project_dir, register))
    await sess.run("go")
    assert turns == [(0, 1), (1, 0)]


async def test_extension_message_is_stored_as_custom_message(
    make_session: MakeSession, project_dir: Path
) -> None:
    from pi_context.extensions.events import CustomMessageDraft

    def register(pi: ExtensionAPI) -> None:
        @pi.on("before_agent_start")
        def note(event: Any, ctx: Any) -> BeforeAgentStartResult:
            return BeforeAgentStartResult(
                message=CustomMessageDraft(custom_type="note", content="remember X")
            )

    model = ScriptedModel([reply("ok")])
    sess = await make_session(model, extensions=runner_with(project_dir, register))
    await sess.run("hi")
    kinds = [e.type for e in sess.session.entries]
    assert kinds == ["message", "message", "custom_message", "message"]
    sent = model.requests[0].messages
    assert text_of(key_of(sent[-1], "content")) == "remember X"


async def test_lifecycle_notifications_in_order(
    make_session: MakeSession, project_dir: Path
) -> None:
    seen: list[str] = []

    def register(pi: ExtensionAPI) -> None:
        for name in (
            "agent_start",
            "turn_start",
            "tool_execution_start",
            "tool_execution_end",
            "agent_end",
        ):
            pi.on(name, lambda e, c: seen.append(e.type))

    model = ScriptedModel([reply(tool_calls=[("bash", {"command": "echo 1"})]), reply("done")])
    sess = await make_session(model, extensions=runner_with(project_dir, register))
    await sess.run("go")
    assert seen == [
        "agent_start",
        "turn_start",
        "tool_execution_start",
        "tool_execution_end",
        "turn_start",
        "agent_end",
    ]


async def test_bash_output_reaches_extension_update_handlers_before_the_end(
    make_session: MakeSession, project_dir: Path
) -> None:
    """The real bash tool's live output: the first, empty update, then the output so far."""
    seen: list[tuple[str, Any]] = []

    def register(pi: ExtensionAPI) -> None:
        @pi.on("tool_execution_update")
        def update(event: Any, ctx: Any) -> None:
            seen.append(("update", event.partial_result.to_json()))

        @pi.on("tool_execution_end")
        def end(event: Any, ctx: Any) -> None:
            seen.append(("end", event.to_json()["result"]))

    command = "printf 'one\\n'; printf 'two\\n'"
    model = ScriptedModel([reply(tool_calls=[("bash", {"command": command})]), reply("done")])
    sess = await make_session(model, extensions=runner_with(project_dir, register))
    await sess.run("go")
    kinds = [kind for kind, _ in seen]
    assert kinds[-1] == "end"
    assert kinds.count("end") == 1
    assert seen[0] == ("update", {"content": []})
    last_update = [value for kind, value in seen if kind == "update"][-1]
    assert last_update["content"] == [{"type": "text", "text": "one\ntwo\n"}]
    result = seen[-1][1]
    assert "details" not in result
    assert result["structuredContent"]["output"] == "one\ntwo\n"
    assert result["structuredContent"]["exit_code"] == 0


async def test_message_end_can_rewrite_the_assistant_message(
    make_session: MakeSession, project_dir: Path
) -> None:
    def register(pi: ExtensionAPI) -> None:
        @pi.on("message_end")
        def redact(event: Any, ctx: Any) -> dict[str, Any] | None:
            msg = event.message
            if msg["role"] != "assistant":
                return None
            return {"message": {**msg, "content": [{"type": "text", "text": "[redacted]"}]}}

    model = ScriptedModel([reply("secret")])
    sess = await make_session(model, extensions=runner_with(project_dir, register))
    await sess.run("hi")
    stored = sess.session.entries[-1].message
    assert stored is not None
    assert text_of(key_of(stored, "content")) == "[redacted]"


async def test_tool_call_block_and_tool_result_rewrite(
    make_session: MakeSession, project_dir: Path
) -> None:
    from pi_context.extensions.events import ToolCallResult, ToolResultResult

    def register(pi: ExtensionAPI) -> None:
        @pi.on("tool_call")
        def guard(event: Any, ctx: Any) -> ToolCallResult | None:
            if "rm " in event.input.get("command", ""):
                return ToolCallResult(block=True, reason="rm is not allowed here")
            return None

        @pi.on("tool_result")
        def shout(event: Any, ctx: Any) -> ToolResultResult:
            return ToolResultResult(content=[{"type": "text", "text": "REWRITTEN"}])

    model = ScriptedModel(
        [
            reply(tool_calls=[("bash", {"command": "rm -rf x"}), ("bash", {"command": "echo ok"})]),
            reply("done"),
        ]
    )
    sess = await make_session(model, extensions=runner_with(project_dir, register))
    await sess.run("go")
    results = [e.message for e in sess.session.entries if e.role == "toolResult"]
    assert text_of(key_of(results[0], "content")) == "rm is not allowed here"
    assert key_of(results[0], "isError") is True
    assert text_of(key_of(results[1], "content")) == "REWRITTEN"


async def test_turn_end_drafts_are_appended_and_continue_requests_one_more_turn(
    make_session: MakeSession, project_dir: Path
) -> None:
    calls = {"n": 0}

    def register(pi: ExtensionAPI) -> None:
        @pi.on("turn_end")
        def nudge(event: Any, ctx: Any) -> dict[str, Any] | None:
            calls["n"] += 1
            if calls["n"] > 1:
                return None
            return {
                "entries": [
                    {"type": "custom", "customType": "marker", "data": {"turn": event.turn_index}},
                    {"type": "custom_message", "customType": "nudge", "content": "Keep going."},
                ],
                "continue": True,
            }

    model = ScriptedModel([reply("first"), reply("second")])
    sess = await make_session(model, extensions=runner_with(project_dir, register))
    await sess.run("go")
    kinds = [e.type for e in sess.session.entries]
    assert kinds == ["message", "message", "message", "custom", "custom_message", "message"]
    assert text_of(model.requests[1].messages[-1]["content"]) == "Keep going."
    model.assert_complete()


async def test_invalid_turn_end_drafts_are_rejected_whole(
    make_session: MakeSession, project_dir: Path
) -> None:
    def register(pi: ExtensionAPI) -> None:
        @pi.on("turn_end")
        def bad(event: Any, ctx: Any) -> dict[str, Any]:
            return {
                "entries": [
                    {"type": "custom", "customType": "ok"},
                    {"type": "context_edit", "targetId": "missing", "replacement": None},
                ]
            }

    model = ScriptedModel([reply("first")])
    sess = await make_session(model, extensions=runner_with(project_dir, register))
    events = await sess.run("go")
    assert [e.type for e in sess.session.entries] == ["message", "message", "message"]
    errors = [e for e in events if isinstance(e, ExtensionFailure)]
    assert "not on the current branch" in errors[0].error


async def test_turn_end_draft_with_a_non_string_target_is_rejected(
    make_session: MakeSession, project_dir: Path
) -> None:
    def register(pi: ExtensionAPI) -> None:
        @pi.on("turn_end")
        def unhashable(event: Any, ctx: Any) -> dict[str, Any]:
            return {"entries": [{"type": "context_edit", "targetId": ["x"], "replacement": None}]}

    model = ScriptedModel([reply("first")])
    sess = await make_session(model, extensions=runner_with(project_dir, register))
    events = await sess.run("go")
    assert [e.type for e in sess.session.entries] == ["message", "message", "message"]
    errors = [e.error for e in events if isinstance(e, ExtensionFailure)]
    assert errors == [
        "turn_end drafts rejected: context_edit target ['x'] is not on the current branch"
    ]


async def test_turn_end_compaction_draft(make_session: MakeSession, project_dir: Path) -> None:
    def register(pi: ExtensionAPI) -> None:
        @pi.on("turn_end")
        def compact(event: Any, ctx: Any) -> dict[str, Any]:
            return {
                "entries": [
                    {"type": "compaction", "summary": "all of it", "firstKeptEntryId": None}
                ]
            }

    model = ScriptedModel([reply("first"), reply("second")])
    sess = await make_session(model, extensions=runner_with(project_dir, register))
    await sess.run("go")
    entry = sess.session.entries[-1]
    assert entry.type == "compaction"
    assert entry.get("fromHook") is True
    assert entry.get("firstKeptEntryId") == entry.id  # retain-none
    assert entry.get("systemMessage")["role"] == "system"
    await sess.run("next")
    sent = model.requests[-1].messages
    # the snapshot, the summary, the patch offering recall (the branch holds a compaction now),
    # the prompt
    assert [m["role"] for m in sent] == ["system", "user", "system", "user"]
    added = cast(list[dict[str, Any]], sent[2].get("toolsAdded") or [])
    assert [t["name"] for t in added] == ["recall"]


async def test_loadout_change_mid_run_is_patched_between_turns(
    make_session: MakeSession, project_dir: Path
) -> None:
    def register(pi: ExtensionAPI) -> None:
        @pi.on("tool_execution_end")
        def narrow(event: Any, ctx: Any) -> None:
            pi.set_active_tools(["read", "bash"])

    model = ScriptedModel([reply(tool_calls=[("bash", {"command": "echo 1"})]), reply("done")])
    sess = await make_session(model, extensions=runner_with(project_dir, register))
    await sess.run("go")
    systems = [e.message for e in sess.session.entries if e.role == "system"]
    assert len(systems) == 2
    patch: Any = systems[1]
    assert [t["name"] for t in patch["toolsRemoved"]] == ["edit", "write"]
    assert "tools" in patch["sections"]
    assert [t["name"] for t in model.requests[1].tools] == ["read", "bash"]
    # The patch is in the second request, after the tool result.
    assert [m["role"] for m in model.requests[1].messages][-2:] == ["toolResult", "system"]


async def test_session_start_discovers_skills_and_shutdown_is_announced(
    make_session: MakeSession, project_dir: Path, tmp_path: Path
) -> None:
    extra = tmp_path / "extra-skills" / "lint"
    extra.mkdir(parents=True)
    (extra / "SKILL.md").write_text("---\nname: lint\ndescription: Run the linter.\n---\nRun it.\n")
    seen: list[str] = []

    def register(pi: ExtensionAPI) -> None:
        @pi.on("resources_discover")
        def more(event: Any, ctx: Any) -> dict[str, Any]:
            seen.append(f"discover:{event.reason}")
            return {"skillPaths": [str(extra.parent)]}

        pi.on("session_start", lambda e, c: seen.append(f"start:{e.reason}"))
        pi.on("session_shutdown", lambda e, c: seen.append("shutdown"))

    model = ScriptedModel([reply("ok")])
    sess = await make_session(model, extensions=runner_with(project_dir, register))
    assert [s.name for s in sess.resources.skills] == ["lint"]
    await sess.run("hi")
    skills = key_of(model.requests[0].messages[0], "sections")["skills"]
    assert "lint" in skills
    await sess.aclose()
    assert seen == ["discover:startup", "start:startup", "shutdown"]


async def test_agent_before_settle_can_continue_once(
    make_session: MakeSession, project_dir: Path
) -> None:
    seen: list[str] = []

    def register(pi: ExtensionAPI) -> None:
        @pi.on("agent_before_settle")
        def settle(event: Any, ctx: Any) -> dict[str, Any]:
            seen.append(event.outcome)
            return {
                "entries": [
                    {"type": "custom_message", "customType": "check", "content": "Verify."}
                ],
                "continue": True,
            }

    model = ScriptedModel([reply("done"), reply("verified")])
    sess = await make_session(model, extensions=runner_with(project_dir, register))
    await sess.run("go")
    assert seen == ["completed"]
    assert text_of(model.requests[1].messages[-1]["content"]) == "Verify."
    model.assert_complete()


async def test_idle_triggering_message_starts_a_run(
    make_session: MakeSession, project_dir: Path
) -> None:
    import asyncio

    from pi_context.extensions.events import CustomMessageDraft

    kinds: list[str] = []

    def register(pi: ExtensionAPI) -> None:
        @pi.on("before_agent_start")
        def start(event: Any, ctx: Any) -> None:
            kinds.append(event.message_type)

    model = ScriptedModel([reply("reacting")])
    sess = await make_session(model, extensions=runner_with(project_dir, register))
    settled = asyncio.Event()
    sess.subscribe(lambda e: settled.set() if e.type == "agent_settled" else None)
    sess.send_message(CustomMessageDraft("alert", "The build broke."), trigger_turn=True)
    await settled.wait()
    assert kinds == ["custom"]
    assert text_of(model.requests[0].messages[-1]["content"]) == "The build broke."
    assert [e.type for e in sess.session.entries] == ["message", "custom_message", "message"]


async def test_waiting_extension_message_joins_the_next_prompt(
    make_session: MakeSession, project_dir: Path
) -> None:
    from pi_context.extensions.events import CustomMessageDraft

    model = ScriptedModel([reply("ok")])
    sess = await make_session(model)
    sess.send_message(CustomMessageDraft("note", "FYI: tests are slow."))
    await sess.run("hello")
    sent = [text_of(m["content"]) for m in model.requests[0].messages if m["role"] == "user"]
    assert sent == ["hello", "FYI: tests are slow."]


async def test_context_handlers_never_change_the_stored_session(
    make_session: MakeSession, project_dir: Path
) -> None:
    def register(pi: ExtensionAPI) -> None:
        @pi.on("context")
        def scribble(event: Any, ctx: Any) -> None:
            for message in event.messages:
                if message["role"] == "user":
                    message["content"] = [{"type": "text", "text": "SCRIBBLED"}]

        @pi.on("context_with_system")
        def strip(event: Any, ctx: Any) -> None:
            for message in event.messages:
                if message["role"] == "system":
                    message["sections"] = {"preamble": "tiny"}

    model = ScriptedModel([reply("one"), reply("two")])
    sess = await make_session(model, extensions=runner_with(project_dir, register))
    await sess.run("first")
    await sess.run("second")
    sent = model.requests[1].messages
    assert [text_of(m["content"]) for m in sent if m["role"] == "user"] == [
        "SCRIBBLED",
        "SCRIBBLED",
    ]
    assert key_of(sent[0], "sections") == {"preamble": "tiny"}
    stored = sess.session.projection().messages
    assert [text_of(key_of(m, "content")) for m in stored if m["role"] == "user"] == [
        "first",
        "second",
    ]
    assert "tools" in key_of(stored[0], "sections")


async def test_extensions_receive_the_very_events_the_agent_streams(
    make_session: MakeSession, project_dir: Path
) -> None:
    seen: list[object] = []

    def register(pi: ExtensionAPI) -> None:
        for name in ("agent_start", "turn_start", "tool_execution_end", "agent_end"):
            pi.on(name, lambda event, ctx: seen.append(event))
        pi.on("session_compact", lambda event, ctx: seen.append(event))

        @pi.on("session_before_compact")
        def own_summary(event: BeforeCompact, ctx: Any) -> dict[str, Any]:
            seen.append(event)
            kept = event.preparation.first_kept_entry_id
            return {"compaction": {"summary": "S", "firstKeptEntryId": kept, "tokensBefore": 9}}

    model = ScriptedModel([reply(tool_calls=[("read", {"path": "missing.txt"})]), reply("done")])
    keep_little = {"compaction": {"keepRecentTokens": 1}}
    sess = await make_session(
        model, extensions=runner_with(project_dir, register), settings=keep_little
    )
    streamed = await sess.run("look")
    # One vocabulary: the handlers got the streamed objects themselves, not translations.
    assert [type(e).__name__ for e in seen] == [
        "AgentStart",
        "TurnStart",
        "ToolExecutionEnd",
        "TurnStart",
        "AgentEnd",
    ]
    assert all(any(event is s for s in streamed) for event in seen)
    assert [e.turn_index for e in seen if isinstance(e, TurnStart)] == [0, 1]
    compaction_events: list[object] = []
    sess.subscribe(compaction_events.append)
    await sess.compact()
    [before] = [e for e in seen if isinstance(e, BeforeCompact)]
    assert before.reason == "manual"
    [compacted] = [e for e in seen if isinstance(e, SessionCompact)]
    [end] = [e for e in compaction_events if isinstance(e, CompactionEnd)]
    assert end.result is not None
    assert compacted.compaction_entry is end.result.entry


async def test_message_update_streams_each_step_with_the_answer_so_far(
    make_session: MakeSession, project_dir: Path
) -> None:
    seen: list[tuple[str, str | None, str, str]] = []

    def register(pi: ExtensionAPI) -> None:
        @pi.on("message_update")
        def update(event: Any, ctx: Any) -> None:
            text = "".join(b.get("text", "") for b in event.message["content"])
            step = event.assistant_message_event
            seen.append((step.kind, step.delta, text, event.message["stopReason"]))

    sess = await make_session(
        ScriptedModel([reply("hello")]), extensions=runner_with(project_dir, register)
    )
    streamed = await sess.run("hi")
    kinds = [e.event.kind for e in streamed if isinstance(e, MessageUpdate)]
    assert [kind for kind, _, _, _ in seen] == kinds
    assert kinds[0] == "text_start"
    assert kinds[-1] == "text_end"
    assert "text_delta" in kinds
    assert seen[-1][2] == "hello"
    assert {reason for _, _, _, reason in seen} == {"pending"}


async def test_agent_settled_reaches_extensions_once_the_run_is_over(
    make_session: MakeSession, project_dir: Path
) -> None:
    seen: list[tuple[str, bool]] = []

    def register(pi: ExtensionAPI) -> None:
        pi.on("agent_end", lambda event, ctx: seen.append((event.type, ctx.session.busy)))
        pi.on("agent_settled", lambda event, ctx: seen.append((event.type, event.aborted)))

    sess = await make_session(
        ScriptedModel([reply("ok")]), extensions=runner_with(project_dir, register)
    )
    streamed = await sess.run("hi")
    assert [name for name, _ in seen] == ["agent_end", "agent_settled"]
    assert seen[1] == ("agent_settled", False)
    assert any(e.type == "agent_settled" for e in streamed)


async def test_naming_the_session_tells_extensions_the_stored_name(
    make_session: MakeSession, project_dir: Path
) -> None:
    seen: list[str | None] = []

    def register(pi: ExtensionAPI) -> None:
        pi.on("session_info_changed", lambda event, ctx: seen.append(event.name))

    sess = await make_session(None, extensions=runner_with(project_dir, register))
    sess.set_session_name("  release notes ")
    await sess.settle_notices()
    assert sess.session.name == seen[0]
    assert seen == [sess.session.name]
    assert [e.type for e in sess.session.entries][-1] == "session_info"


async def test_before_provider_request_handlers_chain_over_the_payload(
    make_session: MakeSession, project_dir: Path
) -> None:
    def register(pi: ExtensionAPI) -> None:
        @pi.on("before_provider_request")
        def mutate(event: Any, ctx: Any) -> None:
            event.payload["seen_by"] = ["first"]

        @pi.on("before_provider_request")
        def replace(event: Any, ctx: Any) -> dict[str, Any]:
            return {**event.payload, "seen_by": [*event.payload["seen_by"], "second"]}

        @pi.on("before_provider_request")
        def wrong(event: Any, ctx: Any) -> str:
            return "not a payload"

    model = ScriptedModel([reply("ok")])
    failures: list[ExtensionFailure] = []
    runner = runner_with(project_dir, register)
    runner.on_error(failures.append)
    sess = await make_session(model, extensions=runner)
    await sess.run("hi")
    hook = model.requests[0].options.payload_hook
    assert hook is not None
    assert await hook({"model": "m"}) == {"model": "m", "seen_by": ["first", "second"]}
    assert [f.event for f in failures] == ["before_provider_request"]


async def test_no_payload_hook_without_handlers(make_session: MakeSession) -> None:
    model = ScriptedModel([reply("ok")])
    sess = await make_session(model)
    await sess.run("hi")
    assert model.requests[0].options.payload_hook is None


async def test_get_all_tools_lists_every_tool_with_its_owner(
    make_session: MakeSession, project_dir: Path
) -> None:
    from pi_context import FunctionTool

    found: list[Any] = []

    def register(pi: ExtensionAPI) -> None:
        pi.register_tool(
            FunctionTool(
                "count",
                "Count things.",
                {"type": "object", "properties": {}},
                lambda args, cwd: "1",
                prompt_guidelines=("Use count to count.",),
            )
        )

        @pi.on("agent_start")
        def look(event: Any, ctx: Any) -> None:
            found.extend(pi.get_all_tools())

    sess = await make_session(
        ScriptedModel([reply("ok")]), extensions=runner_with(project_dir, register)
    )
    await sess.run("hi")
    by_name = {tool.name: tool for tool in found}
    assert {"read", "bash", "edit", "write", "count"} <= set(by_name)
    assert by_name["count"].extension == "test-ext"
    assert by_name["count"].prompt_guidelines == ("Use count to count.",)
    assert by_name["read"].extension is None
    assert by_name["read"].parameters["type"] == "object"


async def test_context_says_whether_the_project_is_trusted(
    make_session: MakeSession, project_dir: Path
) -> None:
    answers: list[bool] = []

    def register(pi: ExtensionAPI) -> None:
        pi.on("agent_start", lambda event, ctx: answers.append(ctx.is_project_trusted()))

    for trusted in (True, False):
        sess = await make_session(
            ScriptedModel([reply("ok")]),
            extensions=runner_with(project_dir, register),
            trusted=trusted,
        )
        await sess.run("hi")
    assert answers == [True, False]


async def test_ctx_shutdown_reaches_the_listener_even_when_it_comes_later(
    make_session: MakeSession, project_dir: Path
) -> None:
    def register(pi: ExtensionAPI) -> None:
        pi.on("agent_end", lambda event, ctx: ctx.shutdown())

    sess = await make_session(
        ScriptedModel([reply("ok")]), extensions=runner_with(project_dir, register)
    )
    await sess.run("hi")  # no listener yet: nothing happens
    asked: list[str] = []
    sess.on_shutdown_request(lambda: asked.append("now"))
    assert asked == ["now"]


async def test_commands_get_session_control_and_handlers_do_not(
    make_session: MakeSession, project_dir: Path
) -> None:
    from pi_context.extensions import ExtensionCommandContext

    seen: dict[str, Any] = {}

    def register(pi: ExtensionAPI) -> None:
        pi.on("agent_start", lambda event, ctx: seen.setdefault("handler_ctx", ctx))

        async def checkpoint(args: str, ctx: ExtensionCommandContext) -> None:
            await ctx.wait_for_idle()
            options = ctx.get_system_prompt_options()
            seen["cwd"] = options.cwd
            seen["tools"] = list(options.tools)
            first_user = next(e for e in ctx.session.session.entries if e.role == "user")  # type: ignore[union-attr]
            seen["result"] = await ctx.navigate_tree(first_user.id, label=args)
            await ctx.reload()

        pi.register_command("checkpoint", checkpoint)

    sess = await make_session(
        ScriptedModel([reply("one"), reply("two")]), extensions=runner_with(project_dir, register)
    )
    await sess.run("first")
    await sess.run("second")
    assert await sess.run_extension_command("checkpoint", "start")
    assert sess.extensions is not None
    assert sess.extensions.failures == []
    assert not isinstance(seen["handler_ctx"], ExtensionCommandContext)
    assert seen["cwd"] == str(project_dir)
    assert seen["tools"][:4] == ["read", "bash", "edit", "write"]
    assert seen["result"].cancelled is False
    assert sess.session.leaf_id == seen["result"].new_leaf_id
    assert sess.session.labels


class _FakeUI:
    def __init__(self) -> None:
        self.asked: list[str] = []

    async def select(self, title: str, options: Any, *, timeout: float | None = None) -> Any:
        self.asked.append(title)
        await asyncio.sleep(0)
        return options[0]

    async def confirm(self, title: str, message: str, *, timeout: float | None = None) -> bool:
        self.asked.append(title)
        await asyncio.sleep(0)
        return True

    async def input(self, title: str, placeholder: Any = None, *, timeout: Any = None) -> Any:
        return None

    async def editor(self, title: str, prefill: str | None = None) -> str | None:
        return None

    def notify(self, message: str, notify_type: Any = None) -> None:
        pass

    def set_status(self, key: str, text: str | None = None) -> None:
        pass

    def set_title(self, title: str) -> None:
        pass

    def set_editor_text(self, text: str) -> None:
        pass


async def test_dialogs_are_announced_as_one_waiting_span(
    make_session: MakeSession, project_dir: Path
) -> None:
    seen: list[tuple[str, str, str | None]] = []
    answers: list[Any] = []

    def register(pi: ExtensionAPI) -> None:
        for name in ("ui_prompt_start", "ui_prompt_end"):
            pi.on(name, lambda e, c: seen.append((e.type, e.kind, e.title)))

        async def ask(args: str, ctx: Any) -> None:
            answers.extend(
                await asyncio.gather(
                    ctx.ui.confirm("Deploy?", "prod"), ctx.ui.select("Where?", ["eu", "us"])
                )
            )

        pi.register_command("ask", ask)

    sess = await make_session(None, extensions=runner_with(project_dir, register))
    fake = _FakeUI()
    sess.set_extension_ui(fake, "rpc")
    assert await sess.run_extension_command("ask", "")
    for _ in range(5):  # the announcements run as tasks: let them
        await asyncio.sleep(0)
    assert answers == [True, "eu"]
    assert fake.asked == ["Deploy?", "Where?"]
    assert seen == [
        ("ui_prompt_start", "confirm", "Deploy?"),
        ("ui_prompt_end", "confirm", "Deploy?"),
    ]


async def test_extensions_name_the_session_and_read_the_name(
    make_session: MakeSession, project_dir: Path
) -> None:
    names: list[str | None] = []

    def register(pi: ExtensionAPI) -> None:
        @pi.on("agent_start")
        def name(event: Any, ctx: Any) -> None:
            names.append(pi.get_session_name())
            pi.set_session_name("refactor")
            names.append(pi.get_session_name())

        pi.on("session_info_changed", lambda event, ctx: names.append(f"changed:{event.name}"))

    sess = await make_session(
        ScriptedModel([reply("ok")]), extensions=runner_with(project_dir, register)
    )
    await sess.run("hi")
    await sess.settle_notices()
    assert names == [None, "refactor", "changed:refactor"]
    assert sess.session.name == "refactor"


async def test_message_update_carries_tool_calls_as_they_stream(
    make_session: MakeSession, project_dir: Path
) -> None:
    calls: list[list[Any]] = []

    def register(pi: ExtensionAPI) -> None:
        @pi.on("message_update")
        def update(event: Any, ctx: Any) -> None:
            calls.append([b for b in event.message["content"] if b["type"] == "toolCall"])

    model = ScriptedModel([reply(tool_calls=[("bash", {"command": "echo 1"})]), reply("done")])
    sess = await make_session(model, extensions=runner_with(project_dir, register))
    await sess.run("go")
    assert calls
    final = [c for c in calls if c][-1]
    assert [(c["name"], c["arguments"]) for c in final] == [("bash", {"command": "echo 1"})]


async def test_before_provider_headers_handlers_change_the_headers_in_order(
    make_session: MakeSession, project_dir: Path
) -> None:
    def register(pi: ExtensionAPI) -> None:
        @pi.on("before_provider_headers")
        def add(event: Any, ctx: Any) -> None:
            event.headers["x-trace"] = "t1"

        @pi.on("before_provider_headers")
        def extend(event: Any, ctx: Any) -> None:
            event.headers["x-trace"] += "-seen"
            event.headers["x-drop"] = None

    model = ScriptedModel([reply("ok")])
    sess = await make_session(model, extensions=runner_with(project_dir, register))
    await sess.run("hi")
    hook = model.requests[0].options.headers_hook
    assert hook is not None
    headers: dict[str, str | None] = {"x-drop": "yes"}
    await hook(headers)
    assert headers == {"x-drop": None, "x-trace": "t1-seen"}
