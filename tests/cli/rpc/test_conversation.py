"""Full conversations through ``pictx --mode rpc`` (a subprocess) against a replay server."""

from __future__ import annotations

import json
import signal
from typing import Any

from .conftest import Record, RpcWorld, bash_call_reply, text_reply

GATE = "while [ ! -f gate ]; do sleep 0.02; done; echo through"
"""A tool command that blocks until the test creates ``gate`` (no timing in the tests)."""


def types(records: list[Record]) -> list[str]:
    return [str(r["type"]) for r in records]


def message_roles(records: list[Record], kind: str = "message_end") -> list[str]:
    return [r["message"]["role"] for r in records if r["type"] == kind]


def user_texts(records: list[Record]) -> list[str]:
    return [
        "".join(b["text"] for b in r["message"]["content"] if b["type"] == "text")
        for r in records
        if r["type"] == "message_start" and r["message"]["role"] == "user"
    ]


def last_user_text(body: dict[str, Any]) -> str:
    users = [m for m in body["messages"] if m["role"] == "user"]
    content = users[-1]["content"]
    return content if isinstance(content, str) else "".join(p.get("text", "") for p in content)


def test_a_running_commands_output_is_streamed_before_it_ends(rpc_world: RpcWorld) -> None:
    """Live tool output: what the command printed is a ``tool_execution_update`` while the
    command still runs (it waits for a file the test creates only after seeing the update)."""
    rpc_world.server.add(bash_call_reply(f"echo building; {GATE}"), text_reply("Built."))
    rpc = rpc_world.spawn()
    rpc.send({"id": "p", "type": "prompt", "message": "Build it"})
    before = rpc.until(
        lambda r: (
            r.get("type") == "tool_execution_update"
            and r["partialResult"]["content"] == [{"type": "text", "text": "building\n"}]
        )
    )
    assert "tool_execution_end" not in types(before)
    first = next(r for r in before if r["type"] == "tool_execution_update")
    assert first == {
        "type": "tool_execution_update",
        "toolCallId": "call_1",
        "toolName": "bash",
        "args": {"command": f"echo building; {GATE}"},
        "partialResult": {"content": []},
    }
    (rpc_world.project / "gate").touch()
    after = rpc.until_type("agent_settled")
    end = next(r for r in after if r["type"] == "tool_execution_end")
    assert end["result"]["content"] == [{"type": "text", "text": "building\nthrough\n"}]
    assert end["result"]["structuredContent"]["exit_code"] == 0
    last = [r for r in after if r["type"] == "tool_execution_update"][-1]
    assert last["partialResult"]["content"] == end["result"]["content"]


def test_sigterm_mid_run_aborts_and_leaves_the_whole_session_on_disk(rpc_world: RpcWorld) -> None:
    """SIGTERM while a tool runs: exit 143 after the run was aborted and every message of it,
    the aborted tool result included, is in the session file (the process then ends without
    the interpreter's slow teardown)."""
    rpc_world.server.add(bash_call_reply(GATE), text_reply("never asked"))
    rpc = rpc_world.spawn()
    rpc.send({"id": "p", "type": "prompt", "message": "Wait for the gate"})
    rpc.until_type("tool_execution_update")
    rpc.proc.send_signal(signal.SIGTERM)
    assert rpc.proc.wait(timeout=60) == 143
    (session,) = rpc_world.sessions()
    messages = [
        json.loads(line)["message"]
        for line in session.read_text(encoding="utf-8").splitlines()
        if json.loads(line).get("type") == "message"
    ]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "toolResult"]
    assert messages[-1]["isError"] is True
    assert messages[-1]["content"] == [{"type": "text", "text": "Operation aborted"}]
    assert len(rpc_world.server.requests) == 1


def test_startup_then_a_prompt_with_a_tool_call_streams_pi_events(rpc_world: RpcWorld) -> None:
    rpc_world.server.add(bash_call_reply("echo from-tool"), text_reply("All done."))
    rpc = rpc_world.spawn()
    response = rpc.call({"id": "s", "type": "get_state"})
    assert rpc.seen == [response]  # no header or ready record before it
    assert list(response) == ["id", "type", "command", "success", "data"]
    state = response["data"]
    assert list(state) == [
        "model",
        "thinkingLevel",
        "isStreaming",
        "isCompacting",
        "steeringMode",
        "followUpMode",
        "sessionFile",
        "sessionId",
        "autoCompactionEnabled",
        "messageCount",
        "pendingMessageCount",
    ]
    assert (state["model"]["provider"], state["model"]["id"]) == ("replay", "tiny")
    assert (state["isStreaming"], state["steeringMode"]) == (False, "one-at-a-time")

    rpc.send({"id": "a1", "type": "prompt", "message": "Run it"})
    records = rpc.until_type("agent_settled")
    assert records[0] == {
        "id": "a1",
        "type": "response",
        "command": "prompt",
        "success": True,
        "data": {"disposition": "started"},
    }
    assert records[1] == {"type": "agent_start"}
    assert records[2] == {"type": "turn_start"}
    assert message_roles(records) == ["system", "user", "assistant", "toolResult", "assistant"]
    kinds = types(records)
    assert kinds.index("tool_execution_start") < kinds.index("tool_execution_end")
    assert kinds.count("turn_end") == 2
    assert records[-2]["type"] == "agent_end"
    assert records[-2]["willRetry"] is False
    assert records[-1] == {"type": "agent_settled", "aborted": False}
    updates = [r for r in records if r["type"] == "message_update"]
    assert all("partial" not in u for u in updates)
    assert {"text_start", "text_delta", "text_end"} <= {
        u["assistantMessageEvent"]["type"] for u in updates
    }
    end = next(r for r in records if r["type"] == "tool_execution_end")
    assert "from-tool" in json.dumps(end["result"])
    second = rpc_world.server.requests[1].json()
    assert second["messages"][-1]["role"] == "tool"

    messages = rpc.call({"id": "m", "type": "get_messages"})["data"]["messages"]
    assert [m["role"] for m in messages] == [
        "system",
        "user",
        "assistant",
        "toolResult",
        "assistant",
    ]
    last = rpc.call({"id": "t", "type": "get_last_assistant_text"})
    assert last["data"] == {"text": "All done."}
    stats = rpc.call({"id": "st", "type": "get_session_stats"})["data"]
    assert (stats["userMessages"], stats["assistantMessages"]) == (1, 2)
    assert (stats["toolCalls"], stats["toolResults"]) == (1, 1)
    assert stats["tokens"]["input"] == 100
    forks = rpc.call({"id": "f", "type": "get_fork_messages"})["data"]["messages"]
    assert [m["text"] for m in forks] == ["Run it"]
    entries = rpc.call({"id": "e", "type": "get_entries"})["data"]
    assert entries["leafId"] == entries["entries"][-1]["id"]
    after = rpc.call({"id": "e2", "type": "get_entries", "since": entries["entries"][-2]["id"]})
    assert after["data"]["entries"] == entries["entries"][-1:]
    missing = rpc.call({"id": "e3", "type": "get_entries", "since": "nope"})
    assert missing["error"] == "Entry not found: nope"
    tree = rpc.call({"id": "tr", "type": "get_tree"})["data"]
    assert len(tree["tree"]) == 1
    assert tree["tree"][0]["entry"]["id"] == entries["entries"][0]["id"]
    assert rpc.close() == 0


def test_steering_mid_run_lands_after_the_tool_results(rpc_world: RpcWorld) -> None:
    rpc_world.server.add(bash_call_reply(GATE), text_reply("Switched to python."))
    rpc = rpc_world.spawn()
    rpc.send({"id": "p", "type": "prompt", "message": "Count lines"})
    rpc.until_type("tool_execution_start")
    rpc.send({"id": "b2", "type": "steer", "message": "use python instead"})
    steered = rpc.until(lambda r: r.get("id") == "b2")
    assert steered[-2:] == [
        {"type": "queue_update", "steering": ["use python instead"], "followUp": []},
        {
            "id": "b2",
            "type": "response",
            "command": "steer",
            "success": True,
            "data": {"disposition": "queued"},
        },
    ]
    state = rpc.call({"id": "s", "type": "get_state"})["data"]
    assert state["isStreaming"] is True
    assert state["pendingMessageCount"] == 1
    (rpc_world.project / "gate").touch()
    records = rpc.until_type("agent_settled")
    kinds = types(records)
    cleared = records.index({"type": "queue_update", "steering": [], "followUp": []})
    steer_start = next(
        i
        for i, r in enumerate(records)
        if r["type"] == "message_start" and r["message"]["role"] == "user"
    )
    assert kinds.index("tool_execution_end") < kinds.index("turn_end") < cleared < steer_start
    assert records[cleared + 1] is records[steer_start]
    assert message_roles(records) == ["toolResult", "user", "assistant"]
    second = rpc_world.server.requests[1].json()
    assert last_user_text(second) == "use python instead"
    assert second["messages"][-2]["role"] == "tool"  # the tool result first, then the steer
    assert rpc.close() == 0


def test_a_second_prompt_is_refused_and_follow_ups_wait_for_the_stop(rpc_world: RpcWorld) -> None:
    rpc_world.server.add(
        bash_call_reply(GATE), text_reply("first answer"), text_reply("two"), text_reply("three")
    )
    rpc = rpc_world.spawn()
    rpc.send({"id": "p1", "type": "prompt", "message": "first"})
    rpc.send({"id": "p2", "type": "prompt", "message": "second"})
    refused = rpc.response("p2")
    assert refused["success"] is False
    assert refused["error"] == (
        "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to "
        "queue the message."
    )
    rpc.until_type("tool_execution_start")
    queued = rpc.call(
        {"id": "p3", "type": "prompt", "message": "then this", "streamingBehavior": "followUp"}
    )
    assert queued["data"] == {"disposition": "queued"}
    assert rpc.call({"id": "f", "type": "follow_up", "message": "and that"})["success"]
    assert rpc.seen[-2] == {
        "type": "queue_update",
        "steering": [],
        "followUp": ["then this", "and that"],
    }
    (rpc_world.project / "gate").touch()
    records = rpc.until_type("agent_settled")
    # one at a time: each follow-up waits until the agent would stop again
    assert message_roles(records) == [
        "toolResult",
        "assistant",
        "user",
        "assistant",
        "user",
        "assistant",
    ]
    assert user_texts(records) == ["then this", "and that"]
    assert len(rpc_world.server.requests) == 4
    assert last_user_text(rpc_world.server.requests[2].json()) == "then this"
    assert rpc.close() == 0


def test_abort_during_a_tool_keeps_the_queues_and_clear_queue_empties_them(
    rpc_world: RpcWorld,
) -> None:
    rpc_world.server.add(bash_call_reply("sleep 60"), text_reply("after abort"))
    rpc = rpc_world.spawn()
    rpc.send({"id": "p", "type": "prompt", "message": "Slow"})
    rpc.until_type("tool_execution_start")
    assert rpc.call({"id": "f", "type": "follow_up", "message": "later please"})["success"]
    rpc.send({"id": "x", "type": "abort"})
    records = rpc.until(lambda r: r.get("id") == "x")
    assert records[-1] == {"id": "x", "type": "response", "command": "abort", "success": True}
    assert {"type": "agent_settled", "aborted": True} in records
    result = next(
        r for r in records if r["type"] == "message_end" and r["message"]["role"] == "toolResult"
    )
    assert "aborted" in json.dumps(result["message"]["content"]).lower()
    state = rpc.call({"id": "s", "type": "get_state"})["data"]
    assert state["isStreaming"] is False
    assert state["pendingMessageCount"] == 1
    cleared = rpc.call({"id": "c", "type": "clear_queue"})
    assert cleared["data"] == {"steering": [], "followUp": ["later please"]}
    assert rpc.seen[-2] == {"type": "queue_update", "steering": [], "followUp": []}
    assert rpc.call({"id": "s2", "type": "get_state"})["data"]["pendingMessageCount"] == 0
    assert rpc.close() == 0
