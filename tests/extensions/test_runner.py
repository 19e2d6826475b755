"""Dispatch rules of the ExtensionRunner."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import pytest

from pi_context.compaction.events import BeforeCompact
from pi_context.errors import ExtensionError
from pi_context.events import AgentEnd, ExtensionFailure
from pi_context.extensions import (
    ExtensionAPI,
    ExtensionContext,
    ExtensionRunner,
    load_extensions,
)
from pi_context.extensions.context import ToolInfo
from pi_context.extensions.events import (
    EVENT_TYPES,
    BeforeAgentStartEvent,
    BeforeAgentStartResult,
    BoundaryResult,
    CompactionDraft,
    CustomMessageDraft,
    InputEvent,
    MessageEndEvent,
    ResourcesDiscoverEvent,
    SessionBeforeCompactResult,
    SessionBeforeTreeEvent,
    SessionBeforeTreeResult,
    ToolCallEvent,
    ToolResultEvent,
    TreePreparation,
    TurnEndEvent,
)
from pi_context.messages import assistant_message, user_message


def runner_of(*registers: Any, cwd: Path = Path(".")) -> ExtensionRunner:
    return load_extensions(
        cwd=cwd,
        entry_points=False,
        include_discovered=False,
        registrations=[(f"ext{i}", r) for i, r in enumerate(registers)],
    )


def compact_event() -> BeforeCompact:
    return BeforeCompact(
        preparation=cast(Any, {"firstKeptEntryId": "a"}), branch_entries=[], reason="manual"
    )


async def test_notification_handlers_run_in_load_then_registration_order() -> None:
    seen: list[str] = []

    def first(pi: ExtensionAPI) -> None:
        pi.on("agent_end", lambda e, ctx: seen.append("1a"))
        pi.on("agent_end", lambda e, ctx: seen.append("1b"))

    def second(pi: ExtensionAPI) -> None:
        @pi.on("agent_end")
        async def handler(event: AgentEnd, ctx: ExtensionContext) -> str:
            seen.append(f"2:{event.will_retry}")
            return "ignored"

    await runner_of(first, second).emit(AgentEnd(will_retry=True))
    assert seen == ["1a", "1b", "2:True"]


async def test_a_raising_handler_is_reported_and_the_others_still_run() -> None:
    seen: list[str] = []
    reported: list[ExtensionFailure] = []

    def broken(pi: ExtensionAPI) -> None:
        def fail(event: Any, ctx: Any) -> None:
            raise ValueError("nope")

        pi.on("agent_end", fail)

    def fine(pi: ExtensionAPI) -> None:
        pi.on("agent_end", lambda e, ctx: seen.append("ok"))

    runner = runner_of(broken, fine)
    runner.on_error(reported.append)
    await runner.emit(AgentEnd())
    assert seen == ["ok"]
    assert len(reported) == 1
    assert (reported[0].extension, reported[0].event, reported[0].error) == (
        "ext0",
        "agent_end",
        "ValueError: nope",
    )
    assert "fail" in reported[0].traceback
    assert runner.failures == reported


async def test_before_compact_last_truthy_result_wins() -> None:
    draft = CompactionDraft(summary="mine", first_kept_entry_id="a", tokens_before=10)

    def give(pi: ExtensionAPI) -> None:
        pi.on("session_before_compact", lambda e, ctx: SessionBeforeCompactResult(compaction=draft))

    def nothing(pi: ExtensionAPI) -> None:
        pi.on("session_before_compact", lambda e, ctx: None)

    def empty_object(pi: ExtensionAPI) -> None:
        pi.on("session_before_compact", lambda e, ctx: {})

    result = await runner_of(give, nothing).emit_session_before_compact(compact_event())
    assert result is not None
    assert result.compaction is draft
    # A later handler returning any object (even an empty one) discards the earlier compaction.
    result = await runner_of(give, empty_object).emit_session_before_compact(compact_event())
    assert result == SessionBeforeCompactResult()


async def test_cancel_short_circuits() -> None:
    later: list[str] = []

    def cancel(pi: ExtensionAPI) -> None:
        pi.on("session_before_compact", lambda e, ctx: {"cancel": True})

    def after(pi: ExtensionAPI) -> None:
        pi.on("session_before_compact", lambda e, ctx: later.append("ran"))

    result = await runner_of(cancel, after).emit_session_before_compact(compact_event())
    assert result == SessionBeforeCompactResult(cancel=True)
    assert later == []


async def test_mapping_results_with_camel_case_keys() -> None:
    def custom(pi: ExtensionAPI) -> None:
        pi.on(
            "session_before_compact",
            lambda e, ctx: {
                "compaction": {
                    "summary": "S",
                    "firstKeptEntryId": None,
                    "tokensBefore": 5,
                    "details": {"k": 1},
                }
            },
        )

    result = await runner_of(custom).emit_session_before_compact(compact_event())
    assert result is not None
    assert result.compaction == CompactionDraft("S", None, 5, details={"k": 1})


async def test_before_tree_summary_and_overrides() -> None:
    def custom(pi: ExtensionAPI) -> None:
        @pi.on("session_before_tree")
        def handler(event: SessionBeforeTreeEvent, ctx: Any) -> dict[str, Any]:
            assert event.preparation.user_wants_summary
            return {
                "summary": {"summary": "branch"},
                "label": "tried X",
                "replaceInstructions": True,
            }

    prep = TreePreparation("t", "o", None, [], user_wants_summary=True)
    result = await runner_of(custom).emit_session_before_tree(SessionBeforeTreeEvent(prep))
    assert isinstance(result, SessionBeforeTreeResult)
    assert result.summary is not None
    assert result.summary.summary == "branch"
    assert result.label == "tried X"
    assert result.replace_instructions is True


async def test_before_agent_start_collects_messages_and_forces_prompt() -> None:
    def one(pi: ExtensionAPI) -> None:
        pi.on(
            "before_agent_start",
            lambda e, ctx: BeforeAgentStartResult(
                message=CustomMessageDraft("note", "first"), system_prompt="FORCED"
            ),
        )

    def two(pi: ExtensionAPI) -> None:
        @pi.on("before_agent_start")
        def handler(event: BeforeAgentStartEvent, ctx: Any) -> dict[str, Any]:
            assert event.system_prompt == "FORCED"  # later handlers see the forced prompt
            event.set_section("notes", "be brief")
            return {"message": {"customType": "note", "content": "second", "display": False}}

    options: dict[str, Any] = {"selectedTools": ["read"], "sections": None}
    event = BeforeAgentStartEvent("user", options, prompt="hi")
    outcome = await runner_of(one, two).emit_before_agent_start(event)
    assert [m.content for m in outcome.messages] == ["first", "second"]
    assert outcome.messages[1].display is False
    assert outcome.system_prompt == "FORCED"
    assert not outcome.selected_tools_changed
    assert options["forceSystemPrompt"] == "FORCED"
    assert options["sections"] == {"notes": "be brief"}


async def test_set_section_and_tools_on_attribute_options() -> None:
    class Options:
        def __init__(self) -> None:
            self.sections: dict[str, str] | None = {"old": "x"}
            self.selected_tools = ["read", "bash"]
            self.force_system_prompt: str | None = None

    opts = Options()
    event = BeforeAgentStartEvent("user", opts)
    event.set_section("old", None)
    event.set_section("new", "y")
    event.set_selected_tools(["read"])
    assert opts.sections == {"new": "y"}
    assert event.selected_tools == ["read"]


async def test_boundary_fields_replace_the_proposal() -> None:
    seen: list[Any] = []

    def add(pi: ExtensionAPI) -> None:
        pi.on(
            "turn_end",
            lambda e, ctx: BoundaryResult(entries=[{"type": "custom", "customType": "x"}]),
        )

    def cont(pi: ExtensionAPI) -> None:
        @pi.on("turn_end")
        def handler(event: TurnEndEvent, ctx: Any) -> dict[str, Any]:
            seen.append(list(event.entries))
            return {"continue": True}

    message = assistant_message([], api="a", provider="p", model="m")
    result = await runner_of(add, cont).emit_boundary(TurnEndEvent(0, message, []))
    assert result == BoundaryResult([{"type": "custom", "customType": "x"}], True)
    assert seen == [[{"type": "custom", "customType": "x"}]]


async def test_message_end_replacement_keeps_the_role() -> None:
    def rewrite(pi: ExtensionAPI) -> None:
        pi.on("message_end", lambda e, ctx: {"message": user_message("rewritten", timestamp=1)})

    def wrong_role(pi: ExtensionAPI) -> None:
        pi.on(
            "message_end",
            lambda e, ctx: {"message": assistant_message([], api="a", provider="p", model="m")},
        )

    runner = runner_of(rewrite, wrong_role)
    out = await runner.emit_message_end(MessageEndEvent(user_message("orig", timestamp=1)))
    assert out == user_message("rewritten", timestamp=1)
    assert len(runner.failures) == 1
    assert "role" in runner.failures[0].error


async def test_tool_call_block_and_tool_result_rewrite() -> None:
    def guard(pi: ExtensionAPI) -> None:
        pi.on("tool_call", lambda e, ctx: {"block": e.tool_name == "bash", "reason": "no shell"})
        pi.on("tool_result", lambda e, ctx: {"content": [{"type": "text", "text": "redacted"}]})

    runner = runner_of(guard)
    blocked = await runner.emit_tool_call(ToolCallEvent("c1", "bash", {"command": "ls"}))
    assert blocked is not None
    assert blocked.reason == "no shell"
    assert await runner.emit_tool_call(ToolCallEvent("c2", "read", {"path": "x"})) is None
    rewritten = await runner.emit_tool_result(
        ToolResultEvent("c2", "read", {}, [{"type": "text", "text": "secret"}], None, False)
    )
    assert rewritten.content == [{"type": "text", "text": "redacted"}]
    assert rewritten.is_error is False


async def test_input_transform_and_handled() -> None:
    def upper(pi: ExtensionAPI) -> None:
        pi.on("input", lambda e, ctx: {"text": e.text.upper()})

    def swallow(pi: ExtensionAPI) -> None:
        pi.on("input", lambda e, ctx: {"handled": e.text == "!QUIT"})

    result = await runner_of(upper, swallow).emit_input(InputEvent("hello"))
    assert (result.text, result.handled) == ("HELLO", False)
    result = await runner_of(upper, swallow).emit_input(InputEvent("!quit"))
    assert result.handled


async def test_resources_discover_paths_add_up() -> None:
    def a(pi: ExtensionAPI) -> None:
        pi.on("resources_discover", lambda e, ctx: {"skillPaths": ["/s1"]})

    def b(pi: ExtensionAPI) -> None:
        pi.on("resources_discover", lambda e, ctx: {"skillPaths": ["/s2"], "promptPaths": ["/p"]})

    result = await runner_of(a, b).emit_resources_discover(ResourcesDiscoverEvent("/", "startup"))
    assert result.skill_paths == ["/s1", "/s2"]
    assert result.prompt_paths == ["/p"]


async def test_bad_result_type_is_reported() -> None:
    def odd(pi: ExtensionAPI) -> None:
        pi.on("session_before_compact", lambda e, ctx: 42)

    runner = runner_of(odd)
    assert await runner.emit_session_before_compact(compact_event()) is None
    assert "bad result type int" in runner.failures[0].error


def test_unknown_event_is_refused_at_registration() -> None:
    def bad(pi: ExtensionAPI) -> None:
        pi.on("no_such_event", lambda e, ctx: None)

    runner = runner_of(bad)
    assert runner.extensions == []
    assert len(runner.load_errors) == 1
    assert isinstance(runner.load_errors[0], ExtensionError)
    assert "unknown event 'no_such_event'" in str(runner.load_errors[0])


def test_every_spec_event_is_known() -> None:
    for name in (
        "before_agent_start",
        "context",
        "context_with_system",
        "session_before_compact",
        "session_compact",
        "session_compact_failed",
        "session_before_tree",
        "session_tree",
        "turn_end",
        "agent_before_settle",
        "agent_start",
        "agent_end",
        "message_end",
        "resources_discover",
    ):
        assert name in EVENT_TYPES


class Host:
    def __init__(self) -> None:
        self.active = ["read", "bash"]
        self.sent: list[Any] = []
        self.entries: list[Any] = []

    def get_active_tools(self) -> list[str]:
        return list(self.active)

    def get_all_tools(self) -> list[ToolInfo]:
        return [ToolInfo(name, "", {}) for name in self.active]

    def set_active_tools(self, names: Any) -> None:
        self.active = list(names)

    def send_message(self, message: CustomMessageDraft, *, trigger_turn: bool = False) -> None:
        self.sent.append((message, trigger_turn))

    def append_entry(self, custom_type: str, data: Any = None) -> None:
        self.entries.append((custom_type, data))

    def set_session_name(self, name: str) -> None:
        self.entries.append(("name", name))

    def get_session_name(self) -> str | None:
        return None


async def test_host_actions_go_through_the_bound_host(tmp_path: Path) -> None:
    def ext(pi: ExtensionAPI) -> None:
        with pytest.raises(ExtensionError, match="only available once a session runs"):
            pi.get_active_tools()

        @pi.on("agent_start")
        def handler(event: Any, ctx: ExtensionContext) -> None:
            assert ctx.cwd == tmp_path
            pi.set_active_tools([*pi.get_active_tools(), "write"])
            pi.send_message("note", "hello", trigger_turn=True)
            pi.append_entry("state", {"n": 1})

    runner = runner_of(ext, cwd=tmp_path)
    assert runner.load_errors == []
    host = Host()
    runner.bind_host(host)
    from pi_context.events import AgentStart

    await runner.emit(AgentStart())
    assert runner.failures == []
    assert host.active == ["read", "bash", "write"]
    assert host.sent == [(CustomMessageDraft("note", "hello"), True)]
    assert host.entries == [("state", {"n": 1})]


async def test_extension_tools_are_collected_and_run(tmp_path: Path) -> None:
    from pi_context.errors import ToolError
    from pi_context.tools import FunctionTool, run_tool

    async def shout(args: dict[str, Any], cwd: Path) -> str:
        if not args["text"]:
            raise ToolError("nothing to shout")
        return str(args["text"]).upper()

    def ext(pi: ExtensionAPI) -> None:
        schema = {
            "type": "object",
            "required": ["text"],
            "properties": {"text": {"type": "string"}},
        }
        pi.register_tool(
            FunctionTool("shout", "Upper-case a text.", schema, shout, prompt_snippet="Shout")
        )
        pi.register_command("hello", lambda args, ctx: None, description="say hi")

    runner = runner_of(ext)
    (tool,) = runner.tools()
    assert tool.declaration()["name"] == "shout"
    assert (await run_tool(tool, "c", {"text": "hi"}, cwd=tmp_path)).text == "HI"
    failed = await run_tool(tool, "c", {"text": ""}, cwd=tmp_path)
    assert failed.is_error
    assert failed.text == "nothing to shout"
    assert [c.name for c in runner.commands()] == ["hello"]


async def test_before_agent_start_reports_a_changed_loadout() -> None:
    def narrow(pi: ExtensionAPI) -> None:
        pi.on("before_agent_start", lambda e, ctx: e.set_selected_tools(["read"]))

    options: dict[str, Any] = {"selectedTools": ["read", "bash"]}
    outcome = await runner_of(narrow).emit_before_agent_start(
        BeforeAgentStartEvent("user", options)
    )
    assert outcome.selected_tools_changed
    assert options["selectedTools"] == ["read"]
