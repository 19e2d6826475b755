"""The JSON records of agent events: pi's camelCase keys, in order, ``undefined`` left out."""

from __future__ import annotations

import json
from typing import Any, cast

import msgspec
import pytest

from pi_context.events import (
    AgentEnd,
    AgentStart,
    AssistantStreamEvent,
    AutoRetryStart,
    CacheUpdate,
    ExtensionFailure,
    MessageEnd,
    MessageUpdate,
    SummarizationRetryScheduled,
    ToolExecutionEnd,
    ToolExecutionUpdate,
    ToolPartial,
    TreeNavigated,
)
from pi_context.messages import (
    AgentMessage,
    empty_usage,
    text_block,
    tool_result_message,
    user_message,
)


def keys(record: dict[str, Any]) -> list[str]:
    return list(record)


def test_fields_are_camel_case_in_order_and_none_is_left_out() -> None:
    record = CacheUpdate(3, 10, 20, 30, 0.5).to_json()
    assert keys(record) == ["type", "requestIndex", "input", "cacheRead", "cacheWrite", "hitRatio"]
    assert CacheUpdate(3, 10, 20, 30, 0.5, "tools").to_json()["missCause"] == "tools"
    assert TreeNavigated(None, None).to_json() == {"type": "tree_navigated"}


def test_stream_step_uses_its_kind_as_type_and_id_for_the_call() -> None:
    step = AssistantStreamEvent("toolcall_start", 2, tool_call_id="c1", tool_name="read")
    assert json.dumps(step.to_json()) == json.dumps(
        {"type": "toolcall_start", "contentIndex": 2, "id": "c1", "toolName": "read"}
    )
    update = MessageUpdate(AssistantStreamEvent("text_delta", 0, delta="hi"), usage=None)
    assert update.to_json() == {
        "type": "message_update",
        "assistantMessageEvent": {"type": "text_delta", "contentIndex": 0, "delta": "hi"},
    }
    with_usage = MessageUpdate(
        AssistantStreamEvent("text_delta", 0, delta="hi"), usage=empty_usage()
    )
    assert keys(with_usage.to_json()) == ["type", "usage", "assistantMessageEvent"]


def test_an_event_without_fields_is_its_type() -> None:
    assert AgentStart().to_json() == {"type": "agent_start"}


def test_events_are_frozen_values() -> None:
    event = CacheUpdate(3, 10, 20, 30, 0.5)
    with pytest.raises(AttributeError):
        event.input = 11  # type: ignore[misc]
    assert event == CacheUpdate(3, 10, 20, 30, 0.5)
    assert hash(event) == hash(CacheUpdate(3, 10, 20, 30, 0.5))
    changed = msgspec.structs.replace(event, miss_cause="tools")
    assert changed.to_json()["missCause"] == "tools"
    match changed:
        case CacheUpdate(request_index=3, miss_cause=cause):
            assert cause == "tools"
        case _:
            pytest.fail("a CacheUpdate did not match its own class pattern")


def test_special_fields() -> None:
    msg = cast(AgentMessage, user_message("x", timestamp=1))
    assert MessageEnd(msg, "entry-1").to_json() == {"type": "message_end", "message": msg}
    first = ToolExecutionUpdate("c", "bash", {"command": "ls"}, ToolPartial([])).to_json()
    assert first == {
        "type": "tool_execution_update",
        "toolCallId": "c",
        "toolName": "bash",
        "args": {"command": "ls"},
        "partialResult": {"content": []},  # pi's first, empty update has no details key
    }
    later = ToolExecutionUpdate("c", "bash", {}, ToolPartial([text_block("a\n")], {})).to_json()
    assert later["partialResult"] == {"content": [text_block("a\n")], "details": {}}
    result = tool_result_message("c", "bash", [], details={"exitCode": 0})
    end = ToolExecutionEnd("c", "bash", result, False).to_json()
    assert end["result"] == {"content": [], "details": {"exitCode": 0}}
    assert "durationMs" not in end

    assert AgentEnd((msg,), True).to_json() == {
        "type": "agent_end",
        "messages": [msg],
        "willRetry": True,
    }
    error = ExtensionFailure("context", "boom", extension="ext").to_json()
    assert keys(error) == ["type", "event", "extension", "error"]


def test_tool_execution_end_carries_the_tools_own_result_as_pi_sends_it() -> None:
    read = tool_result_message("c", "read", [text_block("hi")])
    record = ToolExecutionEnd("c", "read", read, False, 3, structured_content="hi").to_json()
    assert record["result"] == {"content": [text_block("hi")], "structuredContent": "hi"}
    assert "details" not in record["result"]  # pictx wrote ``details: null`` here before
    failed = tool_result_message("c", "bash", [text_block("x")], is_error=True)
    structured = {"output": "x", "truncated": False, "exit_code": 2, "wall_time_seconds": 0}
    record = ToolExecutionEnd("c", "bash", failed, True, structured_content=structured).to_json()
    assert record["result"] == {
        "content": [text_block("x")],
        "structuredContent": structured,
        "isError": True,
    }
    thrown = tool_result_message("c", "bash", [text_block("boom")], is_error=True, details={})
    record = ToolExecutionEnd("c", "bash", thrown, True).to_json()
    assert record["result"] == {"content": [text_block("boom")], "details": {}}


def test_retry_notices_share_fields_but_not_type() -> None:
    auto = AutoRetryStart(1, 3, 2000, "overloaded").to_json()
    summary = SummarizationRetryScheduled(1, 3, 2000, "overloaded").to_json()
    assert auto.pop("type") == "auto_retry_start"
    assert summary.pop("type") == "summarization_retry_scheduled"
    assert (
        auto
        == summary
        == {
            "attempt": 1,
            "maxAttempts": 3,
            "delayMs": 2000,
            "errorMessage": "overloaded",
        }
    )
    assert not isinstance(AutoRetryStart(1, 3, 0, ""), SummarizationRetryScheduled)


def test_agent_event_is_every_event_the_module_exports() -> None:
    """The union is built on first use (with the compaction events it re-exports); it must
    name every event class the module exports, and nothing else."""
    import typing

    from pi_context import events
    from pi_context._records import Event

    exported = {
        value
        for name in events.__all__
        if isinstance(value := getattr(events, name), type)
        and issubclass(value, Event)
        and value is not Event
    }
    assert set(typing.get_args(events.AgentEvent)) == exported
    assert events.CompactionStart.type == "compaction_start"


def test_an_unknown_name_is_an_attribute_error() -> None:
    import pytest

    from pi_context import events

    with pytest.raises(AttributeError, match="NoSuchEvent"):
        events.NoSuchEvent  # noqa: B018
