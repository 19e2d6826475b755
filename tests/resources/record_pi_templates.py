"""Record what pi 1.6.0 sends for each prompt of the template scenario (run by hand; tests
never need pi).

::

    python -m tests.resources.record_pi_templates NODE PI_CLI_JS

runs ``pi --no-session -p PROMPT`` for every prompt of
:data:`~tests.resources.prompt_template_world.PROMPTS` against a local fake
OpenAI-compatible server and writes the user text of each request to
``tests/data/prompt_templates/pi-1.6.0-print.json``. ``benchmarks/economy/pi_install.py``
installs a Node and pi 1.6.0 to pass here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tests.resources.prompt_template_world import PROMPTS, build_world

OUT = Path(__file__).resolve().parents[1] / "data" / "prompt_templates" / "pi-1.6.0-print.json"


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
            for choice, usage in (
                ({"index": 0, "delta": {"role": "assistant", "content": "ok"}}, None),
                ({"index": 0, "delta": {}, "finish_reason": "stop"}, {"total_tokens": 2}),
            ):
                event = {**base, "choices": [choice], **({"usage": usage} if usage else {})}
                self.wfile.write(b"data: " + json.dumps(event).encode() + b"\n\n")
            self.wfile.write(b"data: [DONE]\n\n")

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def _user_text(request: dict[str, Any]) -> str:
    content = [m for m in request["messages"] if m["role"] == "user"][-1]["content"]
    return content if isinstance(content, str) else "".join(p.get("text", "") for p in content)


def main(node: str, cli_js: str) -> None:
    seen: list[dict[str, Any]] = []
    server = _server(seen)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        agent, project = build_world(root, f"http://127.0.0.1:{server.server_port}/v1")
        env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent), "HOME": str(root)}
        sent = []
        for prompt in PROMPTS:
            seen.clear()
            subprocess.run(
                [node, cli_js, "--no-session", "-p", prompt],
                cwd=project, env=env, capture_output=True, check=True, timeout=120,
            )  # fmt: skip
            sent.append({"prompt": prompt, "sent": _user_text(seen[-1])})
    server.shutdown()
    OUT.write_text(json.dumps({"piVersion": "1.6.0", "sent": sent}, indent=1) + "\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
