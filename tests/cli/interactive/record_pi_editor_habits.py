"""Record what pi 1.6.0 does with the editor habits of ``test_editor_habits_tmux`` (run by
hand; tests never need pi).

::

    python -m tests.cli.interactive.record_pi_editor_habits NODE PI_CLI_JS

starts pi in a tmux server of its own (``extended-keys on``, ``set-clipboard on``) against a
local fake OpenAI-compatible server, types the same keys as the pictx test (``draft``, Ctrl+G
with an ``$EDITOR`` that appends `` EDITED``, Shift+Enter, ``line two``, Ctrl+J, ``line
three``, Enter; then ``/copy``; then Ctrl+T) and writes what pi sent as the user message, what
its OSC 52 put in tmux's buffer and the ``hideThinkingBlock`` it saved to
``tests/data/editor_habits/pi-1.6.0.json``. ``benchmarks/economy/pi_install.py`` installs a
Node and pi 1.6.0 to pass here.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parents[2] / "data" / "editor_habits" / "pi-1.6.0.json"
ANSWER = "PI-ANSWER"


def _server(seen: list[dict[str, Any]]) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            seen.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            base = {"id": "x", "object": "chat.completion.chunk", "created": 0, "model": "m"}
            for choice in (
                {"index": 0, "delta": {"role": "assistant", "content": ANSWER}},
                {"index": 0, "delta": {}, "finish_reason": "stop"},
            ):
                event = {**base, "choices": [choice]}
                self.wfile.write(b"data: " + json.dumps(event).encode() + b"\n\n")
            self.wfile.write(b"data: [DONE]\n\n")

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def _world(root: Path, base_url: str) -> Path:
    agent = root / "agent"
    agent.mkdir()
    model = {
        "id": "m",
        "name": "m",
        "reasoning": False,
        "input": ["text"],
        "contextWindow": 100000,
        "maxTokens": 1000,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
    }
    provider = {"baseUrl": base_url, "api": "openai-completions", "apiKey": "k", "models": [model]}
    (agent / "models.json").write_text(json.dumps({"providers": {"sim": provider}}))
    settings = {"defaultProvider": "sim", "defaultModel": "m", "defaultProjectTrust": "always"}
    (agent / "settings.json").write_text(json.dumps(settings))
    return agent


def main(node: str, cli_js: str) -> None:
    seen: list[dict[str, Any]] = []
    server = _server(seen)
    socket = f"record-pi-{os.getpid()}"
    tmux = ["tmux", "-L", socket, "-f", os.devnull]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        agent = _world(root, f"http://127.0.0.1:{server.server_port}/v1")
        editor = root / "edit.sh"
        editor.write_text("#!/bin/sh\nprintf ' EDITED' >> \"$1\"\n")
        editor.chmod(0o755)
        env = {
            "HOME": str(root),
            "PI_CODING_AGENT_DIR": str(agent),
            "EDITOR": str(editor),
            "TERM": "xterm-256color",
            "LANG": "C.UTF-8",
        }
        words = [*(shlex.quote(f"{k}={v}") for k, v in env.items()), shlex.quote(node)]
        command = " ".join(["env", *words, shlex.quote(cli_js), "--no-session"])
        subprocess.run(
            [*tmux, "new-session", "-d", "-s", "pi", "-x", "120", "-y", "40"], check=True
        )
        try:
            for option, value in (("extended-keys", "on"), ("set-clipboard", "on")):
                subprocess.run([*tmux, "set-option", "-s", option, value], check=True)

            def keys(*k: str) -> None:
                subprocess.run([*tmux, "send-keys", "-t", "pi", *k], check=True)

            def wait(ok: Callable[[], bool]) -> None:
                end = time.monotonic() + 60
                while not ok():
                    if time.monotonic() > end:
                        raise SystemExit(f"pi did not get there:\n{screen()}")
                    time.sleep(0.2)

            def screen() -> str:
                return subprocess.run(
                    [*tmux, "capture-pane", "-p", "-t", "pi"], capture_output=True, text=True
                ).stdout

            keys(command, "Enter")
            time.sleep(5)  # pi's start-up (no screen text is stable across its versions)
            keys("-l", "draft")
            keys("C-g")
            wait(lambda: "draft EDITED" in screen())
            keys("S-Enter")
            keys("-l", "line two")
            keys("C-j")
            keys("-l", "line three")
            time.sleep(0.5)
            keys("Enter")
            wait(lambda: ANSWER in screen() and bool(seen))
            keys("-l", "/copy")
            time.sleep(0.5)
            keys("Enter")
            time.sleep(2)
            buffer = subprocess.run([*tmux, "show-buffer"], capture_output=True, text=True).stdout
            keys("C-t")
            time.sleep(2)
            saved = json.loads((agent / "settings.json").read_text()).get("hideThinkingBlock")
        finally:
            subprocess.run([*tmux, "kill-server"], check=False)
    server.shutdown()
    user = [m for m in seen[0]["messages"] if m["role"] == "user"][-1]["content"]
    text = user if isinstance(user, str) else "".join(p.get("text", "") for p in user)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    record = {"piVersion": "1.6.0", "sent": text, "copied": buffer, "hideThinkingBlock": saved}
    OUT.write_text(json.dumps(record, indent=1) + "\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
