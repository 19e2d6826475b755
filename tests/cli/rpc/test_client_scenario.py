"""pictx driven through pi's RPC protocol as a client drives pi, step by step against pi 1.6.0.

pi's side was recorded once with ``record_pi.py`` (same scenario, same scripted model) and is
kept in ``tests/data/rpc/``: every response's shape, the event sequence of every step, every
event's shape and the session file's keys must agree. The deliberate differences are named
here and in docs/compatibility.md.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from pi_context.messages import empty_usage
from tests.providers.replay_server import ReplayServer

from .client_scenario import (
    Client,
    Record,
    event_types,
    prepare,
    run_scenario,
    script,
    shape,
    shape_differences,
)

DATA = Path(__file__).resolve().parents[2] / "data" / "rpc"
PI = json.loads((DATA / "pi-1.6.0-scenario.json").read_text(encoding="utf-8"))

BEYOND_PI_EVENTS = frozenset({"cache_update"})
"""Events pictx adds to pi's stream (a client that only knows pi's ignores them)."""


def _offered(command: Record) -> bool:
    """Commands pictx offers too: all but pi's built-in ``llama`` extension command (``/mcp``
    is offered; prompt templates are listed as pi lists them)."""
    builtin = command["sourceInfo"].get("source") == "builtin" and command["name"] != "mcp"
    return not builtin


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """pictx run through the whole client scenario once for the module: its steps, exit code
    and session file."""
    root = tmp_path_factory.mktemp("scenario").resolve()
    with ReplayServer() as server:
        project, env = prepare(root, server)
        script(server)
        argv = [sys.executable, "-m", "pi_context", "--mode", "rpc", "--model", "replay/tiny"]
        client = Client(argv, cwd=project, env=env)
        try:
            steps = run_scenario(client, project)
        finally:
            code = client.close() if client.proc.poll() is None else client.proc.returncode
            client.kill()
    first = next(s for s in steps[1:] if s["step"] == "get_state")["response"]["data"]
    session = Path(first["sessionFile"]).read_text(encoding="utf-8")
    return {"steps": steps, "exit": code, "session": session}


def _pairs(scenario: dict[str, Any]) -> list[tuple[Record, Record]]:
    ours = scenario["steps"]
    assert [s["step"] for s in ours] == [s["step"] for s in PI["steps"]]
    return list(zip(PI["steps"], ours, strict=True))


def _without_beyond_pi(events: list[Record]) -> list[Record]:
    return [e for e in events if e.get("type") not in BEYOND_PI_EVENTS]


def test_every_response_has_pis_shape(scenario: dict[str, Any]) -> None:
    problems: dict[str, list[str]] = {}
    for theirs, ours in _pairs(scenario):
        expected, actual = theirs["response"], ours["response"]
        assert list(actual) == list(expected), f"{theirs['step']}: envelope key order"
        if theirs["step"] == "get_commands":
            expected = {**expected, "data": {"commands": [
                c for c in expected["data"]["commands"] if _offered(c)
            ]}}  # fmt: skip
            assert [c["name"] for c in actual["data"]["commands"]] == [
                c["name"] for c in expected["data"]["commands"]
            ]
        found = shape_differences(expected, actual)
        if found:
            problems[f"{len(problems)}:{theirs['step']}"] = found
    assert problems == {}


def test_get_state_keys_in_pis_order(scenario: dict[str, Any]) -> None:
    for theirs, ours in _pairs(scenario):
        if theirs["step"] == "get_state":
            assert list(ours["response"]["data"]) == list(theirs["response"]["data"])


def test_every_step_emits_pis_event_sequence(scenario: dict[str, Any]) -> None:
    for theirs, ours in _pairs(scenario):
        assert event_types(_without_beyond_pi(ours["events"])) == event_types(theirs["events"]), (
            theirs["step"]
        )


def _event_key(event: Record) -> str:
    """Events of one kind share a shape: type, stream-event type, message role, tool."""
    parts = [str(event["type"])]
    if "assistantMessageEvent" in event:
        stream_event = event["assistantMessageEvent"]
        parts.append(str(stream_event["type"]))
        parts.append(str(stream_event.get("contentIndex")))
    message = event.get("message")
    if isinstance(message, dict):
        parts.append(str(message.get("role")))
    if "toolName" in event:
        parts.append(str(event["toolName"]))
    if event["type"] == "tool_execution_update":
        parts.append("first" if not event["partialResult"]["content"] else "later")
    return ":".join(parts)


def test_every_event_has_pis_shape(scenario: dict[str, Any]) -> None:
    """Per step, the n-th event of each kind against pi's n-th (streaming records of one kind
    share a shape, so their number may differ). ``message_update.usage`` is the usage known
    when the record is written: pi writes records after the fact, so its early records may
    already show the final usage; either of pi's shapes is accepted."""
    usage_shapes = [shape(empty_usage())]
    problems: list[str] = []
    for theirs, ours in _pairs(scenario):
        mine: dict[str, list[Record]] = {}
        for event in _without_beyond_pi(ours["events"]):
            mine.setdefault(_event_key(event), []).append(event)
        counts: dict[str, int] = {}
        for event in theirs["events"]:
            if event["type"] == "message_update":
                usage_shapes.append(shape(event["usage"]))
            key = _event_key(event)
            index = counts[key] = counts.get(key, -1) + 1
            candidates = mine.get(key, [])
            if not candidates:
                problems.append(f"{theirs['step']}: no {key}")
                continue
            expected, actual = event, candidates[min(index, len(candidates) - 1)]
            if event["type"] == "message_update":
                assert shape(actual["usage"]) in usage_shapes, key
                expected = {k: v for k, v in expected.items() if k != "usage"}
                actual = {k: v for k, v in actual.items() if k != "usage"}
            problems.extend(f"{theirs['step']} {key}: {d}"
                            for d in shape_differences(expected, actual))  # fmt: skip
    assert problems == [], "\n".join(problems)


def test_live_bash_output_arrives_as_pi_sends_it(scenario: dict[str, Any]) -> None:
    prompt = next(s for s in scenario["steps"] if s["step"] == "prompt")
    updates = [
        e
        for e in prompt["events"]
        if e["type"] == "tool_execution_update" and e["toolName"] == "bash"
    ]
    assert updates[0]["partialResult"] == {"content": []}
    end = next(
        e for e in prompt["events"] if e["type"] == "tool_execution_end" and e["toolName"] == "bash"
    )
    final = end["result"]["content"][0]["text"]
    assert final == "tick 1\ntick 2\ntick 3\n"
    assert updates[-1]["partialResult"] == {
        "content": [{"type": "text", "text": final}],
        "details": {},
    }
    assert prompt["events"].index(updates[-1]) < prompt["events"].index(end)
    assert end["result"]["structuredContent"]["output"] == final


def _key_sets(text: str) -> dict[str, list[Any]]:
    """Per entry type (and message role): the keys of the entry and of its message, with the
    keys of nested usage records."""
    out: dict[str, list[Any]] = {}
    for line in text.splitlines():
        entry = json.loads(line)
        message = entry.get("message")
        kind = entry["type"] + (f":{message['role']}" if isinstance(message, dict) else "")
        nested = message if isinstance(message, dict) else entry
        usage = nested.get("usage")
        keys = [
            sorted(entry),
            sorted(message) if isinstance(message, dict) else None,
            sorted(usage) if isinstance(usage, dict) else None,
            sorted(usage["cost"]) if isinstance(usage, dict) else None,
        ]
        if keys not in out.setdefault(kind, []):
            out[kind].append(keys)
    return out


def test_the_session_file_has_the_keys_pi_writes(scenario: dict[str, Any]) -> None:
    """Session files are the contract between pi and pictx: for the same replies, every entry
    and message pictx writes has the keys pi writes, no more, no fewer (the key order inside a
    message is free: pi's reader ignores it)."""
    theirs = _key_sets((DATA / "pi-1.6.0-session.jsonl").read_text(encoding="utf-8"))
    ours = _key_sets(scenario["session"])
    assert ours == theirs


def test_exit_code_at_end_of_input(scenario: dict[str, Any]) -> None:
    assert scenario["exit"] == PI["exitCode"] == 0
