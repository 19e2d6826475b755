"""How long ``pictx --mode rpc`` takes to exit after SIGTERM (issue 24, item 6).

    .venv/bin/python benchmarks/bench_rpc_shutdown.py [--repeat 15] [--before <checkout>/src]
        [--pi NODE PI_CLI_JS]

pi's ``RpcClient.stop()`` sends SIGTERM and SIGKILL one second later, so an RPC server that
takes longer is killed mid-shutdown. Each run starts a fresh process in RPC mode (a models.json
model whose server is never contacted), waits for the answer to ``get_state`` (the process is
up and idle), sends SIGTERM and measures until the process has exited. Runs are interleaved
between the contenders so that drift on a shared machine hits all alike: pictx from this tree,
pictx from ``--before`` (an older source tree, ``PYTHONPATH``) and pi 1.6.0 (``--pi``, e.g. as
installed by ``benchmarks/economy/pi_install.py``). Reported: median and maximum milliseconds.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _environment(root: Path, src: Path | None) -> dict[str, str]:
    agent = root / "agent"
    agent.mkdir(parents=True, exist_ok=True)
    models = {
        "providers": {
            "idle": {
                "baseUrl": "http://127.0.0.1:9/v1",
                "api": "openai-completions",
                "apiKey": "unused",
                "models": [{"id": "tiny", "contextWindow": 100000, "maxTokens": 1000}],
            }
        }
    }
    (agent / "models.json").write_text(json.dumps(models), encoding="utf-8")
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(root),
        "PI_CODING_AGENT_DIR": str(agent),
        "PI_OFFLINE": "1",
    }
    if src is not None:
        env["PYTHONPATH"] = str(src)
    return env


def _one(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    proc = subprocess.Popen(
        [*argv, "--mode", "rpc", "--model", "idle/tiny"],
        cwd=cwd,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdin is not None
    assert proc.stdout is not None
    proc.stdin.write(b'{"id":"s","type":"get_state"}\n')
    proc.stdin.flush()
    for line in proc.stdout:
        if json.loads(line).get("id") == "s":
            break
    started = time.perf_counter()
    proc.send_signal(signal.SIGTERM)
    code = proc.wait(timeout=60)
    elapsed = time.perf_counter() - started
    proc.stdin.close()
    proc.stdout.close()
    if code != 143:
        raise SystemExit(f"{argv[0]}: exit code {code} after SIGTERM, expected 143")
    return elapsed * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--before", type=Path, help="an older source tree (its src/)")
    parser.add_argument("--pi", nargs=2, metavar=("NODE", "PI_CLI_JS"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        project = root / "proj"
        project.mkdir()
        contenders: list[tuple[str, list[str], dict[str, str]]] = [
            ("pictx", [sys.executable, "-m", "pi_context"], _environment(root / "a", ROOT / "src"))
        ]
        if args.before is not None:
            env = _environment(root / "b", args.before.resolve())
            contenders.append(("pictx --before", [sys.executable, "-m", "pi_context"], env))
        if args.pi is not None:
            contenders.append(("pi 1.6.0", list(args.pi), _environment(root / "c", None)))
        times: dict[str, list[float]] = {name: [] for name, _, _ in contenders}
        for _ in range(args.repeat):
            for name, argv, env in contenders:
                times[name].append(_one(argv, project, env))
    print(f"SIGTERM to exit, {args.repeat} runs each (ms):")
    for name, values in times.items():
        print(f"  {name:<16} median {statistics.median(values):7.0f}   max {max(values):7.0f}")


if __name__ == "__main__":
    main()
