"""Start-up time of ``pictx`` commands that need no model (issue 11, item 7).

    .venv/bin/python benchmarks/bench_startup.py [--repeat 20] [--before <checkout>/src]

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
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ENTRY = "import sys; from pi_context.cli.main import main; sys.exit(main())"
SESSION = (
    '{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/tmp"}\n'
    '{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z",'
    '"message":{"role":"user","content":[{"type":"text","text":"hi"}],"timestamp":1}}\n'
)


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


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--before", default=None, help="src/ of an older checkout to compare")
    args = parser.parse_args(argv)
    py = sys.executable
    current = str(ROOT / "src")
    with tempfile.TemporaryDirectory() as tmp:
        session = Path(tmp) / "s.jsonl"
        session.write_text(SESSION, encoding="utf-8")
        commands: list[tuple[str, list[str], str | None]] = [
            ("python -c pass", [py, "-c", "pass"], None),
            ("python -c 'import click'", [py, "-c", "import click"], None),
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
                times[name].append(_run(cmd, tree))
    print("| command | wall, median | wall, min | CPU, median | runs |\n|---|---|---|---|---|")
    for name, values in times.items():
        wall = [w for w, _ in values]
        cpu = [c for _, c in values]
        print(
            f"| `{name}` | {statistics.median(wall) * 1e3:.0f} ms | {min(wall) * 1e3:.0f} ms "
            f"| {statistics.median(cpu) * 1e3:.0f} ms | {len(values)} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
