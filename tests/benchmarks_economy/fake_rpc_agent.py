"""A stand-in agent for the driver tests: pi's RPC protocol, a journal of what it was asked.

``python fake_rpc_agent.py [--mode rpc] [--model M] [--session FILE]``. Each process appends
``{"argv": [...]}`` and then every command it receives to ``$FAKE_JOURNAL`` (JSON lines). A
prompt containing ``$FAKE_CRASH`` makes it exit with 3 (after a line on stderr) the first time
(a marker file remembers), one containing ``$FAKE_HANG`` makes it start a child ``sleep`` (its
pid written to ``$FAKE_CHILD``) and never answer. Every prompt's events are preceded by a long
``message_update`` line (the client must skip it unparsed). Before each prompt it notes the
user's pauses so far that the driver wrote to ``$SIM_CLOCK_FILE``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any


def main() -> int:
    argv = sys.argv[1:]
    journal = Path(os.environ["FAKE_JOURNAL"])
    sessions = Path(os.environ["HOME"]) / "sessions"
    sessions.mkdir(parents=True, exist_ok=True)

    def note(record: dict[str, Any]) -> None:
        with journal.open("a") as f:
            f.write(json.dumps(record) + "\n")

    def new_file() -> Path:
        path = sessions / f"{len(list(sessions.iterdir())):03d}.jsonl"
        path.write_text("")
        return path

    note({"argv": argv})
    level = "medium"
    if "--model" in argv and ":" in argv[argv.index("--model") + 1]:
        level = argv[argv.index("--model") + 1].rsplit(":", 1)[1]
    session = Path(argv[argv.index("--session") + 1]) if "--session" in argv else new_file()

    def out(record: dict[str, Any]) -> None:
        sys.stdout.write(json.dumps(record) + "\n")
        sys.stdout.flush()

    for line in sys.stdin:
        command = json.loads(line)
        note(command)
        kind, ident = command["type"], command.get("id")
        data: Any = None
        if kind == "get_state":
            data = {"thinkingLevel": level, "sessionFile": str(session)}
        elif kind == "set_thinking_level":
            level = command["level"]
        elif kind == "new_session":
            session, data = new_file(), {"cancelled": False}
        elif kind == "switch_session":
            session, data = Path(command["sessionPath"]), {"cancelled": False}
        elif kind == "prompt":
            text = command["message"]
            if "SIM_CLOCK_FILE" in os.environ:
                note({"paused_ns": int(Path(os.environ["SIM_CLOCK_FILE"]).read_text())})
            crash, hang = os.environ.get("FAKE_CRASH"), os.environ.get("FAKE_HANG")
            marker = journal.with_suffix(".crashed")
            if crash and crash in text and not marker.exists():
                marker.write_text("")
                print("fake agent: out of cheese", file=sys.stderr, flush=True)
                return 3
            if hang and hang in text:
                child = subprocess.Popen(["sleep", "300"])
                pid_file = Path(os.environ["FAKE_CHILD"])
                pid_file.with_suffix(".tmp").write_text(str(child.pid))
                pid_file.with_suffix(".tmp").replace(pid_file)  # whole or absent, never torn
                time.sleep(300)
            out(
                {"type": "message_update", "delta": "x" * 100_000, "note": '"type":"agent_settled"'}
            )
            out({"type": "agent_settled", "aborted": False})  # before the response: out of order
            out({"id": ident, "type": "response", "command": kind, "success": True,
                 "data": {"disposition": "started"}})  # fmt: skip
            continue
        else:
            out({"id": ident, "type": "response", "command": kind, "success": False,
                 "error": f"Unknown command: {kind}"})  # fmt: skip
            continue
        response: dict[str, Any] = {"id": ident, "type": "response", "command": kind}
        response["success"] = True
        if data is not None:
            response["data"] = data
        out(response)
    return 0


if __name__ == "__main__":
    sys.exit(main())
