"""Generate the benchmark sessions (if missing) and run every benchmark.

    .venv/bin/python benchmarks/run_all.py              # default repeats
    .venv/bin/python benchmarks/run_all.py --quick      # fewer repeats, no 100k memory runs
    .venv/bin/python benchmarks/run_all.py --regenerate # rebuild the session files first

The tables go to stdout (Markdown, ready for ``benchmarks/README.md``); the raw numbers to
``benchmarks/out/results-session.json`` and ``results-compaction.json``; both tables, with the
date, CPU count and load average, to ``benchmarks/out/results.md``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from datetime import UTC, datetime

from _common import FILES, OUT_DIR, PYTHON, ROOT


def _run(script: str, *args: str) -> str:
    command = f"$ .venv/bin/python benchmarks/{script} {' '.join(args)}".rstrip()
    print(f"\n{command}", flush=True)
    proc = subprocess.run(
        [PYTHON, str(ROOT / script), *args],
        check=True,
        cwd=ROOT.parent,
        stdout=subprocess.PIPE,
        text=True,
    )
    print(proc.stdout, flush=True)
    return f"{command}\n{proc.stdout}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="run all benchmarks")
    parser.add_argument("--quick", action="store_true", help="fewer repeats, skip memory runs")
    parser.add_argument("--regenerate", action="store_true", help="rebuild the session files")
    parser.add_argument("--seed", default="1")
    args = parser.parse_args(argv)
    if args.regenerate or not all(path.exists() for path in FILES.values()):
        _run("generate.py", "--seed", args.seed)
    outputs: list[str] = []
    if args.quick:
        outputs.append(
            _run("bench_session.py", "--repeat", "3", "--appends", "20", "--skip-memory")
        )
        outputs.append(_run("bench_compaction.py", "--files", *FILES, "--repeat", "3"))
    else:
        outputs.append(_run("bench_session.py"))
        outputs.append(_run("bench_compaction.py", "--files", *FILES))
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    load = os.getloadavg()[0]
    header = f"Run {stamp} on {os.cpu_count()} CPUs, load average {load:.1f}, Python {sys.version.split()[0]}\n"
    target = OUT_DIR / "results.md"
    target.write_text(header + "\n".join(outputs))
    print(f"tables written to {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
