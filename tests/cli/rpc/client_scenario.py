"""One client session through pi's RPC protocol, the way pi's own ``RpcClient`` drives it.

The same scenario runs against pi 1.6.0 (once, by ``record_pi.py``, whose transcript is kept in
``tests/data/rpc/``) and against pictx (``test_client_scenario.py``), both talking to the same
scripted model on 127.0.0.1. Each step is a command and what came back for it: its response and
the events written between sending it and the response (for a prompt: up to ``agent_settled``).
The comparison is by *shape* (:func:`shape`): the keys of every object and the JSON type of
every value, since ids, timestamps and paths differ between runs.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any

from tests.cli.rpc.chat_stream import chunk, text_reply, usage_chunk
from tests.providers.replay_server import ReplayServer, Reply, openai_sse, stream

HANG_GUARD = 60.0
"""Seconds before a step is treated as hung (a hang guard, not a speed check)."""

Record = dict[str, Any]

SLOW_COMMAND = "for i in 1 2 3; do echo tick $i; sleep 0.4; done"
"""The bash call of the scenario prints over more than a second, so live updates appear."""


def tools_reply(readme: str) -> Reply:
    """One answer calling ``bash`` (the slow command) and ``read`` (a file of the project)."""
    calls = [
        {
            "index": 0,
            "id": "call_bash",
            "type": "function",
            "function": {"name": "bash", "arguments": json.dumps({"command": SLOW_COMMAND})},
        },
        {
            "index": 1,
            "id": "call_read",
            "type": "function",
            "function": {"name": "read", "arguments": json.dumps({"path": readme})},
        },
    ]
    return stream(
        openai_sse(
            [
                chunk({"role": "assistant", "tool_calls": calls}),
                chunk({}, "tool_calls"),
                usage_chunk(100, 20),
            ]
        )
    )


def script(server: ReplayServer) -> None:
    """The model's answers, in request order: the prompt's two turns, then compaction (one
    summary request, or two when an implementation summarizes a split turn's parts apart)."""
    server.add(
        tools_reply("README.md"),
        text_reply("Ran it and read it.", prompt_tokens=5000, completion_tokens=6),
        text_reply(
            "## Goal\nRun a command and read a file.\n", prompt_tokens=300, completion_tokens=40
        ),
        text_reply(
            "## Goal\nRun a command and read a file.\n", prompt_tokens=300, completion_tokens=40
        ),
    )


def prepare(root: Path, server: ReplayServer) -> tuple[Path, dict[str, str]]:
    """A project, an agent dir (models.json, a prompt template, a skill) and the environment;
    returns ``(project, env)``."""
    project = root / "proj"
    agent = root / "agent"
    home = root / "home"
    for folder in (project, agent / "prompts", agent / "skills" / "greet", home):
        folder.mkdir(parents=True, exist_ok=True)
    (project / "README.md").write_text("# Demo\nA small project.\n", encoding="utf-8")
    models = {
        "providers": {
            "replay": {
                "baseUrl": server.url + "/v1",
                "api": "openai-completions",
                "apiKey": "test-key",
                "models": [{"id": "tiny", "contextWindow": 100000, "maxTokens": 1000}],
            }
        }
    }
    (agent / "models.json").write_text(json.dumps(models), encoding="utf-8")
    # a small kept tail, so that ``compact`` has something to summarize in a short session
    settings = {"compaction": {"keepRecentTokens": 1}}
    (agent / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    (agent / "prompts" / "review.md").write_text(
        "---\ndescription: Review the change\n---\nReview this change: $ARGUMENTS\n",
        encoding="utf-8",
    )
    (agent / "skills" / "greet" / "SKILL.md").write_text(
        "---\nname: greet\ndescription: Greets people politely.\n---\nSay hello.\n",
        encoding="utf-8",
    )
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "PI_CODING_AGENT_DIR": str(agent),
        "PI_OFFLINE": "1",
        "LANG": "C.UTF-8",
        "TZ": "UTC",
    }
    if "PYTHONPATH" in os.environ:
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return project, env


class Client:
    """A child in RPC mode; records are read on a thread as they arrive."""

    def __init__(self, argv: Sequence[str], *, cwd: Path, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self._records: queue.Queue[Record | None] = queue.Queue()
        self._next_id = 0
        assert self.proc.stdout is not None
        threading.Thread(target=self._pump, args=(self.proc.stdout,), daemon=True).start()

    def _pump(self, out: IO[bytes]) -> None:
        for line in out:
            self._records.put(json.loads(line))
        self._records.put(None)

    def next(self) -> Record:
        item = self._records.get(timeout=HANG_GUARD)
        if item is None:
            raise AssertionError(f"the RPC process exited; stderr: {self.stderr()}")
        return item

    def send(self, command: Record) -> str:
        self._next_id += 1
        ident = f"req_{self._next_id}"
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({**command, "id": ident}).encode() + b"\n")
        self.proc.stdin.flush()
        return ident

    def until(self, done: Callable[[Record], bool]) -> list[Record]:
        got: list[Record] = []
        while True:
            record = self.next()
            got.append(record)
            if done(record):
                return got

    def stderr(self) -> str:
        if self.proc.poll() is None:
            return "(running)"
        assert self.proc.stderr is not None
        return self.proc.stderr.read().decode(errors="replace")

    def close(self) -> int:
        """End of input: the orderly shutdown; returns the exit code."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        code = self.proc.wait(timeout=HANG_GUARD)
        for stream_ in (self.proc.stdout, self.proc.stderr):
            if stream_ is not None:
                stream_.close()
        return code

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=HANG_GUARD)


def _is_response(ident: str) -> Callable[[Record], bool]:
    return lambda r: r.get("type") == "response" and r.get("id") == ident


def run_scenario(client: Client, project: Path) -> list[Record]:
    """The steps; each is ``{"step", "command", "response", "events"}``."""
    steps: list[Record] = []

    def step(name: str, command: Record, *, settle: bool = False) -> Record:
        ident = client.send(command)
        records = client.until(_is_response(ident))
        response = records[-1]
        events = records[:-1]
        if settle and response.get("success") and response["data"]["disposition"] == "started":
            events += client.until(lambda r: r.get("type") == "agent_settled")
        out = {"step": name, "command": command, "response": response, "events": events}
        steps.append(out)
        return out

    step("get_state", {"type": "get_state"})
    step("set_thinking_level", {"type": "set_thinking_level", "level": "high"})
    step("prompt", {"type": "prompt", "message": "Run the slow command and read README.md"},
         settle=True)  # fmt: skip
    step("get_messages", {"type": "get_messages"})
    entries = step("get_entries", {"type": "get_entries"})["response"]["data"]["entries"]
    step("get_tree", {"type": "get_tree"})
    fork_messages = step("get_fork_messages", {"type": "get_fork_messages"})
    step("set_session_name", {"type": "set_session_name", "name": "scenario"})
    step("bash", {"type": "bash", "command": "echo from user; echo on stderr >&2"})
    step("get_commands", {"type": "get_commands"})
    step("get_last_assistant_text", {"type": "get_last_assistant_text"})
    step("get_session_stats", {"type": "get_session_stats"})
    step("compact", {"type": "compact"})
    step("export_html", {"type": "export_html", "outputPath": str(project / "out.html")})
    first_file = step("get_state", {"type": "get_state"})["response"]["data"]["sessionFile"]
    step("new_session", {"type": "new_session"})
    step("switch_session", {"type": "switch_session", "sessionPath": first_file})
    step("clone", {"type": "clone"})
    user_entry = fork_messages["response"]["data"]["messages"][0]["entryId"]
    assert any(e["id"] == user_entry for e in entries)
    step("fork", {"type": "fork", "entryId": user_entry})
    step("get_state", {"type": "get_state"})
    return steps


# -- shapes ----------------------------------------------------------------------------------


def shape(value: Any) -> Any:
    """What a client can rely on: object keys (in order) with the shapes of their values, the
    JSON type of scalars, and for an array the distinct shapes of its items."""
    if isinstance(value, dict):
        return {key: shape(item) for key, item in value.items()}
    if isinstance(value, list):
        out: list[Any] = []
        for item in value:
            s = shape(item)
            if s not in out:
                out.append(s)
        return out
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if value is None:
        return "null"
    return "string"


def event_types(records: Sequence[Record]) -> list[str]:
    """The event sequence with repeated streaming records collapsed (their number depends on
    chunking and timing): consecutive ``message_update``/``tool_execution_update``/
    ``bash_execution_update`` of one kind count once."""
    out: list[str] = []
    for record in records:
        kind = str(record.get("type"))
        if kind == "message_update":
            kind += ":" + str(record["assistantMessageEvent"]["type"])
        repeated = out and out[-1] == kind
        if repeated and kind.split(":")[0] in (
            "message_update",
            "tool_execution_update",
            "bash_execution_update",
        ):
            continue
        out.append(kind)
    return out


def shape_differences(expected: Any, actual: Any, path: str = "$") -> list[str]:
    """Where two values differ in shape: a key one has and the other lacks, or a different
    JSON type; one line per difference (key order is not compared: pi's readers ignore it)."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        out: list[str] = []
        for key in expected:
            if key not in actual:
                out.append(f"{path}.{key}: missing (expected {_kind(expected[key])})")
            else:
                out.extend(shape_differences(expected[key], actual[key], f"{path}.{key}"))
        out.extend(f"{path}.{key}: not expected ({_kind(actual[key])})" for key in actual
                   if key not in expected)  # fmt: skip
        return out
    if isinstance(expected, list) and isinstance(actual, list):
        out = []
        for index in range(min(len(expected), len(actual))):
            out.extend(shape_differences(expected[index], actual[index], f"{path}[{index}]"))
        return out
    if _kind(expected) != _kind(actual):
        return [f"{path}: {_kind(actual)} instead of {_kind(expected)}"]
    return []


def _kind(value: Any) -> str:
    shaped = shape(value)
    return shaped if isinstance(shaped, str) else ("object" if isinstance(value, dict) else "array")
