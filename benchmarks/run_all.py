"""Generate the benchmark sessions (if missing) and run every benchmark.

    .venv/bin/python benchmarks/run_all.py              # default repeats
    .venv/bin/python benchmarks/run_all.py --quick      # fewer repeats, no 100k memory runs
    .venv/bin/python benchmarks/run_all.py --regenerate # rebuild the session files first

The tables go to stdout (Markdown, ready for ``benchmarks/README.md``); the raw numbers to
``benchmarks/out/results-session.json`` and ``results-compaction.json``.
"""

from __future__ import annotations

import argparse
import subprocess
import sys

from _common import FILES, PYTHON, ROOT


def _run(script: str, *args: str) -> None:
    print(f"\n$ python benchmarks/{script} {' '.join(args)}".rstrip(), flush=True)
    subprocess.run([PYTHON, str(ROOT / script), *args], check=True, cwd=ROOT.parent)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="run all benchmarks")
    parser.add_argument("--quick", action="store_true", help="fewer repeats, skip memory runs")
    parser.add_argument("--regenerate", action="store_true", help="rebuild the session files")
    parser.add_argument("--seed", default="1")
    args = parser.parse_args(argv)
    if args.regenerate or not all(path.exists() for path in FILES.values()):
        _run("generate.py", "--seed", args.seed)
    if args.quick:
        _run("bench_session.py", "--repeat", "3", "--appends", "20", "--skip-memory")
        _run("bench_compaction.py", "--files", "2k", "50k-branchy", "100k", "--repeat", "3")
    else:
        _run("bench_session.py")
        _run("bench_compaction.py", "--files", "2k", "50k-branchy", "100k")
    return 0


if __name__ == "__main__":
    sys.exit(main())
