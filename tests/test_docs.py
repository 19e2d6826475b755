"""Every code block of README.md and docs/*.md runs as written.

A fenced block's info string says what it is: ``python`` blocks run as scripts (one that defines
``register(pi)`` is also loaded as an extension), ``sh`` blocks run with ``bash -e``, ``json``
and ``toml`` blocks must parse (a ``models.json`` example through pictx's own parser). Each runs
in a fresh directory holding a copy of ``examples/``, with ``HOME`` and the agent directory
pointed into it, no provider key set, ``pictx`` first on ``PATH``, and ``LOCAL_LLM_URL`` naming a
stand-in OpenAI-compatible server on 127.0.0.1 (docs/library.md's local-server example).

A block that cannot run here (it needs an API key, a network, a GPU server or an interactive
terminal) says so in its info string: `` ```sh no-run `` (docs/architecture.md, "Documentation
examples"). Those few are counted below so that a new one is a deliberate change. Blocks with
no language are sample output and layouts, not code.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import threading
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from pi_context.providers import parse_models_json

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_FENCE = re.compile(r"^( *)```([^\n`]*)\n(.*?)^\1```[ \t]*$", re.MULTILINE | re.DOTALL)

NOT_RUN_LIMIT = 8
"""At most this many blocks are marked ``no-run``; raise it only for a block that cannot run."""


@dataclass(frozen=True)
class Block:
    page: str
    line: int
    language: str
    flags: tuple[str, ...]
    code: str

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}:{self.language}"


def _blocks() -> list[Block]:
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for match in _FENCE.finditer(text):
            indent, info, body = match.groups()
            language, *flags = info.split() or [""]
            code = "\n".join(line.removeprefix(indent) for line in body.splitlines()) + "\n"
            line = text.count("\n", 0, match.start()) + 1
            found.append(
                Block(page.relative_to(ROOT).as_posix(), line, language, tuple(flags), code)
            )
    return found


BLOCKS = _blocks()
RUNNABLE = [b for b in BLOCKS if b.language and "no-run" not in b.flags]


class _ChatServer(BaseHTTPRequestHandler):
    """A stand-in OpenAI-compatible server: every chat request gets one streamed answer."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        chunk = {"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": "m"}
        events = [
            {
                **chunk,
                "choices": [
                    {
                        "index": 0,
                        "delta": {"role": "assistant", "content": "Hello from your server."},
                        "finish_reason": None,
                    }
                ],
            },
            {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
            {
                **chunk,
                "choices": [],
                "usage": {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17},
            },
        ]
        body = b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events)
        body += b"data: [DONE]\n\n"
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        return


@pytest.fixture(scope="module")
def chat_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _ChatServer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture
def workdir(tmp_path: Path, chat_server: str) -> tuple[Path, dict[str, str]]:
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.endswith(("_API_KEY", "_AUTH_TOKEN", "_OAUTH_TOKEN"))
    }
    bin_dir = str(Path(sys.executable).parent)
    env.update(
        HOME=str(tmp_path),
        PI_CODING_AGENT_DIR=str(tmp_path / "agent"),
        PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}",
        PYTHONPATH=os.pathsep.join(p for p in sys.path if p and Path(p).is_dir()),
        NO_COLOR="1",
        LOCAL_LLM_URL=chat_server,
    )
    return tmp_path, env


_EXTENSION_CHECK = """
import sys
from pi_context.extensions import load_extensions
runner = load_extensions(cwd=".", entry_points=False, include_discovered=False,
                         registrations=[("doc", register)])
if runner.load_errors:
    sys.exit(f"register(pi) failed: {runner.load_errors}")
"""


def test_the_pages_have_code_and_few_blocks_are_not_run() -> None:
    assert len(RUNNABLE) >= 20
    not_run = [b.id for b in BLOCKS if "no-run" in b.flags]
    assert len(not_run) <= NOT_RUN_LIMIT, not_run
    unknown = {b.language for b in RUNNABLE} - {"python", "sh", "json", "toml"}
    assert unknown == set()


@pytest.mark.parametrize("block", RUNNABLE, ids=lambda b: b.id)
def test_block_runs(
    block: Block, workdir: tuple[Path, dict[str, str]], request: pytest.FixtureRequest
) -> None:
    where, env = workdir
    if block.page == "docs/store.md":  # its examples run against a real PostgreSQL
        env = {**env, "DATABASE_URL": request.getfixturevalue("pg_url")}
    if block.language == "json":
        data = json.loads(block.code)
        if isinstance(data, dict) and "providers" in data:
            _, errors = parse_models_json(block.code)
            assert errors == []
        return
    if block.language == "toml":
        tomllib.loads(block.code)
        return
    if block.language == "python":
        code = block.code
        if re.search(r"^def register\(", code, re.MULTILINE):
            code += _EXTENSION_CHECK
        command = [sys.executable, "-c", code]
    else:
        command = ["bash", "-e", "-o", "pipefail", "-c", block.code]
    done = subprocess.run(
        command, cwd=where, env=env, capture_output=True, text=True, timeout=180, check=False
    )
    assert done.returncode == 0, f"{block.id} failed:\n{done.stdout}\n{done.stderr}"
