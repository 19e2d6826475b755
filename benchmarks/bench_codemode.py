"""The cost of a ``codemode`` script: engine start-up and host calls, V8 beside QuickJS.

Each measure runs in a fresh process, because the first isolate of a process pays the engine's
start-up. ``v8`` is what pictx uses (``mini-racer``, :func:`pi_context.mcp.script.run_script`);
the baseline, same run, is QuickJS (the ``quickjs`` bindings: a context and a synchronous host
function, the design the issue weighed and rejected because it cannot stop a busy loop while
Python functions are registered). Measured:

* ``import+first``: import the engine, make the first isolate/context, run ``return 1``;
* ``next``: one more script in the same process;
* ``10 calls``: a script awaiting 10 host calls one after the other.

    .venv/bin/python benchmarks/bench_codemode.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"

_V8 = r"""
import asyncio, json, sys, time
sys.path.insert(0, sys.argv[1])
async def host(kind, payload):
    return json.dumps({"value": [] if kind == "all" else 1})
async def main():
    t0 = time.perf_counter()
    from pi_context.mcp.script import run_script
    await run_script("return 1", host)
    t1 = time.perf_counter()
    await run_script("return 1", host)
    t2 = time.perf_counter()
    await run_script("let n = 0; for (let i = 0; i < 10; i++) n += await tools.x({}); return n", host)
    t3 = time.perf_counter()
    print(json.dumps([t1 - t0, t2 - t1, t3 - t2]))
asyncio.run(main())
"""

_QUICKJS = r"""
import json, time
t0 = time.perf_counter()
import quickjs
def run(code):
    ctx = quickjs.Context()
    ctx.add_callable("host", lambda kind, payload: json.dumps({"value": 1}))
    ctx.eval("globalThis.__done = null;")
    ctx.eval("(async () => { " + code + " })().then(v => { globalThis.__done = v; })")
    while ctx.execute_pending_job():
        pass
    return ctx.eval("globalThis.__done")
run("return 1")
t1 = time.perf_counter()
run("return 1")
t2 = time.perf_counter()
run("let n = 0; for (let i = 0; i < 10; i++) n += await Promise.resolve(JSON.parse(host('call', '{}')).value); return n")
t3 = time.perf_counter()
print(json.dumps([t1 - t0, t2 - t1, t3 - t2]))
"""


def measure(code: str, repeat: int) -> list[float]:
    runs = []
    for _ in range(repeat):
        out = subprocess.run(
            [sys.executable, "-c", code, str(SRC)], capture_output=True, text=True, check=True
        ).stdout
        runs.append(json.loads(out))
    return [statistics.median(r[i] for r in runs) * 1000 for i in range(3)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    repeat = parser.parse_args().repeat
    print(f"median of {repeat} fresh processes, milliseconds")
    print("| engine | import+first | next | 10 calls |")
    print("|---|---|---|---|")
    for name, code in (("V8 (mini-racer), pictx", _V8), ("QuickJS baseline", _QUICKJS)):
        first, following, calls = measure(code, repeat)
        print(f"| {name} | {first:.0f} | {following:.1f} | {calls:.1f} |")


if __name__ == "__main__":
    main()
