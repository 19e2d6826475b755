"""Start-up time of ``pictx`` commands, and of ``pictx -p`` up to its first request.

    .venv/bin/python benchmarks/bench_startup.py [--repeat 20] [--before <checkout>/src]

``pictx -p hi`` runs against a Messages API stub on 127.0.0.1 in this process (a throwaway
HOME and agent dir, ``models.json`` naming the stub); its row is the time from starting the
process to the stub receiving the request (the stub then answers with a one-word reply and
the process exits; its CPU column is the whole run's). Beside it, the same request sent by the
libraries the command needs and nothing of ours (the interpreter, click, asyncio, msgspec,
orjson and httpx2 posting one streamed request to the stub): what is left of ``-p`` above that
row is pictx's own start-up.

Each command runs as a fresh process, as the ``pictx`` console script runs it
(``from pi_context.cli.main import main``), ``--repeat`` times, interleaved with the baselines so
that drift on a shared machine hits all alike. Baselines in the same run: ``python -c pass``
(the interpreter alone) and ``import click`` (the CLI framework every command needs). With
``--before``, every command is also run against an older source tree (``PYTHONPATH``), as the
BEFORE numbers in benchmarks/README.md were. Reported: the median and minimum wall time, and
the median CPU time (user + system) of the process, which is the number to compare on a busy
machine, where wall time includes waiting for a core.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

ROOT = Path(__file__).resolve().parent.parent
ENTRY = "import sys; from pi_context.cli.main import main; sys.exit(main())"
SESSION = (
    '{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/tmp"}\n'
    '{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z",'
    '"message":{"role":"user","content":[{"type":"text","text":"hi"}],"timestamp":1}}\n'
)


# The floor under ``pictx -p``: the libraries it needs, importing and sending one request.
LIBRARIES_ONLY = """
import asyncio, sys
import click, httpx2, msgspec, orjson

async def send() -> None:
    async with httpx2.AsyncClient(verify=False) as client:
        async with client.stream("POST", sys.argv[1] + "/v1/messages", content=b"{}") as reply:
            await reply.aread()

asyncio.run(send())
"""


def _cpu_of_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run(argv: Sequence[str], pythonpath: str | None) -> tuple[float, float]:
    """Wall and CPU seconds of one run of ``argv``."""
    env = dict(os.environ)
    if pythonpath is None:
        env.pop("PYTHONPATH", None)
    else:
        env["PYTHONPATH"] = pythonpath
    cpu = _cpu_of_children()
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, check=False)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"bench_startup: {argv} failed: {done.stderr.decode()[-400:]}")
    return seconds, _cpu_of_children() - cpu


_REPLY = b"".join(
    f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode()
    for e in (
        {"type": "message_start", "message": {"id": "m1", "usage": {"input_tokens": 5}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "ok"}},
        {"type": "content_block_stop", "index": 0},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn"},
            "usage": {"output_tokens": 1},
        },
        {"type": "message_stop"},
    )
)


class _Stub(BaseHTTPRequestHandler):
    """A Messages API that notes when each request arrives and answers "ok"."""

    arrivals: ClassVar[list[float]] = []

    def do_POST(self) -> None:
        _Stub.arrivals.append(time.perf_counter())
        self.rfile.read(int(self.headers.get("content-length") or 0))
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(_REPLY)))
        self.end_headers()
        self.wfile.write(_REPLY)

    def log_message(self, *_: object) -> None:
        pass


def _first_request(argv: Sequence[str], env: dict[str, str]) -> tuple[float, float]:
    """Seconds from starting ``argv`` to the stub's first request, and the run's CPU."""
    _Stub.arrivals.clear()
    cpu = _cpu_of_children()
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, check=False)
    if done.returncode != 0 or not _Stub.arrivals:
        raise SystemExit(f"bench_startup: {argv} failed: {done.stderr.decode()[-400:]}")
    return _Stub.arrivals[0] - start, _cpu_of_children() - cpu


def _agent_env(tmp: Path, url: str, pythonpath: str) -> dict[str, str]:
    home, agent = tmp / "home", tmp / "agent"
    agent.mkdir(parents=True, exist_ok=True)
    home.mkdir(exist_ok=True)
    model = {"id": "stub", "reasoning": False, "input": ["text"], "contextWindow": 100_000,
             "maxTokens": 1000, "cost": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0}}  # fmt: skip
    providers = {"stub": {"baseUrl": url, "api": "anthropic-messages", "apiKey": "k",
                          "models": [model]}}  # fmt: skip
    (agent / "models.json").write_text(json.dumps({"providers": providers}))
    settings = {"defaultProvider": "stub", "defaultModel": "stub"}
    (agent / "settings.json").write_text(json.dumps(settings))
    return {"HOME": str(home), "PI_CODING_AGENT_DIR": str(agent), "PI_OFFLINE": "1",
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": pythonpath}  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--before", default=None, help="src/ of an older checkout to compare")
    args = parser.parse_args(argv)
    py = sys.executable
    current = str(ROOT / "src")
    stub = ThreadingHTTPServer(("127.0.0.1", 0), _Stub)
    threading.Thread(target=stub.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{stub.server_address[1]}"
    example = ROOT / "examples" / "session.jsonl"
    with tempfile.TemporaryDirectory() as tmp:
        session = Path(tmp) / "s.jsonl"
        session.write_text(SESSION, encoding="utf-8")
        commands: list[tuple[str, list[str], str | None]] = [
            ("python -c pass", [py, "-c", "pass"], None),
            ("python -c 'import click'", [py, "-c", "import click"], None),
            ("libraries only: one request", [py, "-c", LIBRARIES_ONLY, url], None),
        ]
        trees = [("", current)] + ([(" (before)", args.before)] if args.before else [])
        for suffix, tree in trees:
            commands += [
                (f"pictx --version{suffix}", [py, "-c", ENTRY, "--version"], tree),
                (f"pictx --help{suffix}", [py, "-c", ENTRY, "--help"], tree),
                (
                    f"pictx session info FILE{suffix}",
                    [py, "-c", ENTRY, "session", "info", str(session)],
                    tree,
                ),
                (
                    f"pictx session info examples/session.jsonl{suffix}",
                    [py, "-c", ENTRY, "session", "info", str(example)],
                    tree,
                ),
                (f"pictx -p hi: first request{suffix}", [py, "-c", ENTRY, "-p", "hi"], tree),
            ]
            if suffix:
                commands.append(
                    (
                        f"import pi_context.cli.main{suffix}",
                        [py, "-c", "import pi_context.cli.main"],
                        tree,
                    )
                )
        times: dict[str, list[tuple[float, float]]] = {name: [] for name, _, _ in commands}
        for _ in range(args.repeat):
            for name, cmd, tree in commands:
                if " -p " in name:
                    env = _agent_env(Path(tmp), url, tree or current)
                    times[name].append(_first_request(cmd, env))
                elif name.startswith("libraries only"):
                    times[name].append(_first_request(cmd, dict(os.environ)))
                else:
                    times[name].append(_run(cmd, tree))
    stub.shutdown()
    print("| command | wall, median | wall, min | CPU, median | runs |\n|---|---|---|---|---|")
    bare = statistics.median(w for w, _ in times["python -c pass"])
    for name, values in times.items():
        wall = [w for w, _ in values]
        cpu = [c for _, c in values]
        print(
            f"| `{name}` | {statistics.median(wall) * 1e3:.0f} ms "
            f"({statistics.median(wall) / bare:.1f}x bare python) | {min(wall) * 1e3:.0f} ms "
            f"| {statistics.median(cpu) * 1e3:.0f} ms | {len(values)} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
