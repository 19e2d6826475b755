"""The other RPC commands: models and thinking, modes, compaction, bash, sessions, errors,
shutdown (each test one ``pictx --mode rpc`` subprocess)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

from .conftest import RpcWorld, text_reply


def test_models_thinking_levels_and_modes(rpc_world: RpcWorld) -> None:
    (rpc_world.agent_dir / "settings.json").write_text(
        '{"modelThinkingLevels": {"replay/thinker": "low"}}'
    )
    rpc = rpc_world.spawn()
    models = rpc.call({"id": "m", "type": "get_available_models"})["data"]["models"]
    keys = [(m["provider"], m["id"]) for m in models]
    assert keys[:2] == [("replay", "tiny"), ("replay", "thinker")]  # registry order
    assert list(models[0]) == [
        "id",
        "name",
        "api",
        "provider",
        "baseUrl",
        "reasoning",
        "input",
        "cost",
        "contextWindow",
        "maxTokens",
    ]
    assert models[0]["cost"] == {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}
    levels = rpc.call({"id": "l", "type": "get_available_thinking_levels"})
    assert levels["data"] == {"levels": ["off"]}
    assert rpc.call({"id": "c0", "type": "cycle_thinking_level"})["data"] is None

    missing = rpc.call({"id": "x", "type": "set_model", "provider": "x", "modelId": "y"})
    assert missing == {
        "id": "x",
        "type": "response",
        "command": "set_model",
        "success": False,
        "error": "Model not found: x/y",
    }
    wrong_case = rpc.call(
        {"id": "x2", "type": "set_model", "provider": "replay", "modelId": "TINY"}
    )
    assert wrong_case["error"] == "Model not found: replay/TINY"
    cycled_model = rpc.call({"id": "cm", "type": "cycle_model"})["data"]
    assert cycled_model["model"]["id"] == "thinker"
    assert cycled_model["thinkingLevel"] == "low"  # the settings' level for that model
    assert cycled_model["model"]["reasoning"] is True
    assert cycled_model["isScoped"] is False
    levels = rpc.call({"id": "l2", "type": "get_available_thinking_levels"})["data"]["levels"]
    assert levels == ["off", "minimal", "low", "medium", "high"]

    rpc.send({"id": "t", "type": "set_thinking_level", "level": "xhigh"})  # clamps down to high
    got = rpc.until(lambda r: r.get("id") == "t")
    assert {"type": "thinking_level_changed", "level": "high"} in got
    assert got[-1] == {
        "id": "t",
        "type": "response",
        "command": "set_thinking_level",
        "success": True,
    }
    rpc_world.server.add(text_reply("Thought about it."))
    rpc.send({"id": "p", "type": "prompt", "message": "think hard"})
    rpc.until_type("agent_settled")
    sent = rpc_world.server.requests[0].json()
    assert sent["model"] == "thinker"
    assert sent["reasoning_effort"] == "high"  # the level reaches the wire
    cycled = rpc.call({"id": "c1", "type": "cycle_thinking_level"})
    assert cycled["data"] == {"level": "off"}  # wraps around
    state = rpc.call({"id": "s", "type": "get_state"})["data"]
    assert state["thinkingLevel"] == "off"
    assert state["model"]["id"] == "thinker"

    rpc.call({"id": "t2", "type": "set_thinking_level", "level": "medium"})
    back = rpc.call({"id": "sm", "type": "set_model", "provider": "replay", "modelId": "tiny"})
    assert back["data"]["id"] == "tiny"
    assert back["data"]["reasoning"] is False
    assert rpc.seen[-2] == {"type": "thinking_level_changed", "level": "off"}  # clamped

    assert rpc.call({"id": "sm1", "type": "set_steering_mode", "mode": "all"})["success"]
    assert rpc.call({"id": "sm2", "type": "set_follow_up_mode", "mode": "all"})["success"]
    bad = rpc.call({"id": "sm3", "type": "set_follow_up_mode", "mode": "sometimes"})
    assert bad["success"] is False
    assert rpc.call({"id": "ac", "type": "set_auto_compaction", "enabled": False})["success"]
    assert rpc.call({"id": "ar", "type": "set_auto_retry", "enabled": False})["success"]
    assert rpc.call({"id": "ab", "type": "abort_retry"})["success"]
    state = rpc.call({"id": "s2", "type": "get_state"})["data"]
    assert (state["steeringMode"], state["followUpMode"]) == ("all", "all")
    assert state["autoCompactionEnabled"] is False
    settings = json.loads((rpc_world.agent_dir / "settings.json").read_text())
    assert settings == {
        "modelThinkingLevels": {"replay/thinker": "low"},  # kept
        "steeringMode": "all",
        "followUpMode": "all",
        "compaction": {"enabled": False},
        "retry": {"enabled": False},
    }
    assert len(rpc_world.server.requests) == 1  # only the prompt reached the model
    assert rpc.close() == 0


def test_compact_and_user_bash(rpc_world: RpcWorld) -> None:
    (rpc_world.agent_dir / "settings.json").write_text(
        '{"compaction": {"keepRecentTokens": 1, "guard": false}}'
    )
    rpc_world.server.add(
        text_reply("first answer"),
        text_reply("second answer"),
        text_reply("## Goal\nSay things."),
        text_reply("## Turn prefix\nEarlier in this turn."),  # the cut splits the last turn
        text_reply("third answer"),
    )
    rpc = rpc_world.spawn()
    for n, text in enumerate(("one", "two")):
        rpc.send({"id": f"p{n}", "type": "prompt", "message": text})
        rpc.until_type("agent_settled")
    compact = rpc.call({"id": "c", "type": "compact", "customInstructions": "be brief"})
    assert compact["success"] is True, compact
    data = compact["data"]
    assert data["summary"].startswith("## Goal")
    assert {"summary", "firstKeptEntryId", "tokensBefore", "details"} <= set(data)
    summary_request = rpc_world.server.requests[2].json()
    assert "be brief" in json.dumps(summary_request)

    rpc.send({"id": "b", "type": "bash", "command": "echo one; echo two >&2; exit 3"})
    records = rpc.until(lambda r: r.get("type") == "response" and r.get("id") == "b")
    deltas = "".join(r["delta"] for r in records if r["type"] == "bash_execution_update")
    assert {r.get("id") for r in records if r["type"] == "bash_execution_update"} == {"b"}
    assert deltas == "one\ntwo\n"
    assert records[-1]["data"] == {
        "output": "one\ntwo\n",
        "exitCode": 3,
        "cancelled": False,
        "truncated": False,
    }
    rpc.send({"id": "p3", "type": "prompt", "message": "three"})
    rpc.until_type("agent_settled")
    sent = json.dumps(rpc_world.server.requests[-1].json())
    assert "echo one; echo two" in sent  # the bash execution reaches the model as user text
    entries = rpc.call({"id": "e", "type": "get_entries"})["data"]["entries"]
    bash = [e for e in entries if e.get("message", {}).get("role") == "bashExecution"]
    assert len(bash) == 1
    assert bash[0]["message"]["exitCode"] == 3
    assert any(e["type"] == "compaction" for e in entries)
    assert rpc.close() == 0


def test_sessions_new_name_fork_clone_switch_and_export(
    rpc_world: RpcWorld, tmp_path: Path
) -> None:
    replies = tmp_path / "replies.json"
    replies.write_text(json.dumps(["first", "second"]))
    rpc = rpc_world.spawn("--model", f"scripted:{replies}")
    nothing = rpc.call({"id": "x0", "type": "export_html"})
    assert nothing["error"] == "Nothing to export yet - start a conversation first"
    unsaved = rpc.call({"id": "cl0", "type": "clone"})
    # a new session starts with its model_change and thinking_level_change entries (as in
    # pi), so there is a leaf, but nothing is saved before the first message
    assert unsaved["error"] == (
        "This session has not been saved yet. Send a message before cloning or forking it."
    )
    for n, text in enumerate(("hello", "again")):
        rpc.send({"id": f"p{n}", "type": "prompt", "message": text})
        rpc.until_type("agent_settled")
    first_state = rpc.call({"id": "s", "type": "get_state"})["data"]
    first_file = Path(first_state["sessionFile"])

    rpc.send({"id": "n", "type": "set_session_name", "name": "  my task  "})
    named = rpc.until(lambda r: r.get("id") == "n")
    assert {"type": "session_info_changed", "name": "my task"} in named
    empty = rpc.call({"id": "n2", "type": "set_session_name", "name": "   "})
    assert empty["error"] == "Session name cannot be empty"
    assert rpc.call({"id": "s1", "type": "get_state"})["data"]["sessionName"] == "my task"

    before = first_file.read_bytes()
    over = rpc.call({"id": "xs", "type": "export_html", "outputPath": str(first_file)})
    assert "refusing to write the export over the session it exports" in over["error"]
    assert first_file.read_bytes() == before
    out = tmp_path / "out.html"
    exported = rpc.call({"id": "x", "type": "export_html", "outputPath": str(out)})
    assert exported["data"] == {"path": str(out)}
    assert "hello" in out.read_text()

    forks = rpc.call({"id": "fm", "type": "get_fork_messages"})["data"]["messages"]
    assert [m["text"] for m in forks] == ["hello", "again"]
    bad = rpc.call({"id": "f0", "type": "fork", "entryId": "nope"})
    assert bad["error"] == "Invalid entry ID for forking"
    forked = rpc.call({"id": "f", "type": "fork", "entryId": forks[1]["entryId"]})
    assert forked["data"] == {"text": "again", "cancelled": False}
    state = rpc.call({"id": "s2", "type": "get_state"})["data"]
    assert state["sessionId"] != first_state["sessionId"]
    texts = [
        m["content"][0]["text"]
        for m in rpc.call({"id": "m", "type": "get_messages"})["data"]["messages"]
        if m["role"] == "user"
    ]
    assert texts == ["hello"]  # the fork holds the path before the chosen message

    cloned = rpc.call({"id": "cl", "type": "clone"})
    assert cloned["data"] == {"cancelled": False}
    assert rpc.call({"id": "s3", "type": "get_state"})["data"]["sessionId"] != state["sessionId"]

    switched = rpc.call({"id": "sw", "type": "switch_session", "sessionPath": str(first_file)})
    assert switched["data"] == {"cancelled": False}
    assert (
        rpc.call({"id": "s4", "type": "get_state"})["data"]["sessionId"] == first_state["sessionId"]
    )

    fresh = rpc.call({"id": "ns", "type": "new_session", "parentSession": str(first_file)})
    assert fresh["data"] == {"cancelled": False}
    state = rpc.call({"id": "s5", "type": "get_state"})["data"]
    assert state["sessionId"] != first_state["sessionId"]
    assert state["messageCount"] == 0
    rpc.send({"id": "p9", "type": "prompt", "message": "in the new one"})
    rpc.until_type("agent_settled")
    header = json.loads(Path(state["sessionFile"]).read_text().splitlines()[0])
    assert header["parentSession"] == str(first_file)
    assert rpc.close() == 0


EXTENSION = """
def register(pi):
    async def greet(args, ctx):
        pi.append_entry("greeted", {"who": args})

    pi.register_command("greet", greet, description="greet someone")

    async def deploy(args, ctx):
        ok = await ctx.ui.confirm("Deploy?", "Target " + args, timeout=60000)
        ctx.ui.notify(("deployed " if ok else "kept ") + ctx.mode, "info")

    pi.register_command("deploy", deploy, description="deploy it")

    def on_input(event, ctx):
        if event.text == "ping":
            pi.append_entry("pinged", {})
            return {"handled": True}
        return None

    pi.on("input", on_input)
"""


def test_protocol_errors_extension_commands_and_ui_responses(
    rpc_world: RpcWorld, tmp_path: Path
) -> None:
    (rpc_world.agent_dir / "extensions").mkdir()
    (rpc_world.agent_dir / "extensions" / "greeter.py").write_text(EXTENSION)
    replies = tmp_path / "replies.json"
    replies.write_text("[]")
    rpc = rpc_world.spawn("--model", f"scripted:{replies}")
    rpc.send_raw(b"not json\n")
    assert rpc.next() == {
        "type": "response",
        "command": "parse",
        "success": False,
        "error": "Failed to parse command: Unexpected token 'o', \"not json\" is not valid JSON",
    }
    rpc.send_raw(b"\r\n")  # an empty line (CRLF) is parsed too
    assert rpc.next()["error"] == "Failed to parse command: Unexpected end of JSON input"
    rpc.send({"id": "u", "type": "nope"})
    assert rpc.next() == {
        "id": "u",
        "type": "response",
        "command": "nope",
        "success": False,
        "error": "Unknown command: nope",
    }
    rpc.send({"id": "v"})
    assert rpc.next() == {
        "id": "v",
        "type": "response",
        "success": False,
        "error": "Unknown command: undefined",
    }
    rpc.send({"type": "extension_ui_response", "id": "whatever", "value": "x"})  # no response
    rpc.send({"type": "get_commands"})  # no id: the response has none either
    commands = rpc.next()
    assert list(commands) == ["type", "command", "success", "data"]
    # /mcp is the agent's own command, offered as pi offers its built-in one
    greet, deploy = [c for c in commands["data"]["commands"] if c["name"] != "mcp"]
    assert deploy["name"] == "deploy"
    assert (greet["name"], greet["description"], greet["source"]) == (
        "greet",
        "greet someone",
        "extension",
    )

    rpc.send({"id": "c1", "type": "prompt", "message": "/deploy prod"})
    ask = rpc.next()
    assert {k: v for k, v in ask.items() if k != "id"} == {
        "type": "extension_ui_request",
        "method": "confirm",
        "title": "Deploy?",
        "message": "Target prod",
        "timeout": 60000,
    }
    rpc.send({"type": "extension_ui_response", "id": ask["id"], "confirmed": True})
    told = rpc.next()
    assert told["method"] == "notify"
    assert (told["message"], told["notifyType"]) == ("deployed rpc", "info")
    assert rpc.next() == {
        "id": "c1",
        "type": "response",
        "command": "prompt",
        "success": True,
        "data": {"disposition": "handled"},
    }
    handled = rpc.call({"id": "g", "type": "prompt", "message": "/greet world"})
    assert handled["data"] == {"disposition": "handled"}
    pinged = rpc.call({"id": "i", "type": "prompt", "message": "ping"})
    assert pinged["data"] == {"disposition": "handled"}
    refused = rpc.call({"id": "q", "type": "steer", "message": "/greet later"})
    assert refused["error"] == (
        'Extension command "/greet" cannot be queued. Use prompt() or execute the command '
        "when not streaming."
    )
    entries = rpc.call({"id": "e", "type": "get_entries"})["data"]["entries"]
    assert [(e["customType"], e["data"]) for e in entries if e["type"] == "custom"] == [
        ("greeted", {"who": "world"}),
        ("pinged", {}),
    ]

    rpc.send_raw('{"id":"é","type":"get_last_assistant_text"}'.encode())  # last line, no LF
    assert rpc.close() == 0
    last = [json.loads(line) for line in rpc.raw][-1]
    assert last == {
        "id": "é",
        "type": "response",
        "command": "get_last_assistant_text",
        "success": True,
        "data": {},
    }


def test_at_file_arguments_are_refused_and_sigterm_exits_143(rpc_world: RpcWorld) -> None:
    refused = rpc_world.spawn("@notes.md")
    assert refused.proc.wait(timeout=60) == 1
    assert "pictx: error: @file arguments are not supported in RPC mode" in refused.stderr()
    rpc = rpc_world.spawn("ignored positional message")
    assert rpc.call({"id": "s", "type": "get_state"})["success"]
    rpc.proc.send_signal(signal.SIGTERM)
    assert rpc.proc.wait(timeout=60) == 143
    assert rpc_world.server.requests == []  # the positional message was not sent


def test_a_client_that_stops_reading_makes_pictx_exit_1(
    rpc_world: RpcWorld, tmp_path: Path
) -> None:
    replies = tmp_path / "replies.json"
    replies.write_text("[]")
    proc = subprocess.Popen(
        [sys.executable, "-m", "pi_context", "--mode", "rpc", "--model", f"scripted:{replies}"],
        cwd=rpc_world.project,
        env=rpc_world.env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdin is not None
    assert proc.stdout is not None
    proc.stdout.close()  # the client's end of pictx's stdout is gone
    proc.stdin.write(b'{"id":"s","type":"get_state"}\n')
    proc.stdin.flush()
    try:
        assert proc.wait(timeout=60) == 1
    finally:
        proc.stdin.close()
        if proc.poll() is None:
            proc.kill()
