"""The tools on large inputs: ``read`` memory on a big file, ``edit`` diff time on repeated lines.

Each number sits beside a baseline measured in the same run:

- ``read``: peak RSS of a child process reading a sparse file (one short line, then NUL
  bytes) with the ``read`` tool, beside a child doing what pi 1.6.0 does (read the whole
  file, decode, split, head-truncate).
- ``edit`` diff: time of the edit tool's diff details for a file of ``n`` repeated lines with
  one changed line at each end, beside difflib's exact matcher (the previous implementation).

Run: ``.venv/bin/python benchmarks/bench_tools.py [--size-mb 1024] [--lines 2000 4000]``
"""

from __future__ import annotations

import argparse
import asyncio
import difflib
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pi_context.tools import ReadTool, run_tool
from pi_context.tools.edit_diff import display_diff, first_changed_line, unified_patch
from pi_context.tools.truncate import truncate_head


def _child_read(path: Path, how: str) -> None:
    if how == "ours":
        out = asyncio.run(run_tool(ReadTool(), "c", {"path": str(path)}, cwd=path.parent))
        text = out.text
    else:
        lines = path.read_bytes().decode("utf-8", "replace").split("\n")
        text = truncate_head("\n".join(lines)).content
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"peak_mb": round(peak_kb / 1024, 1), "chars": len(text)}))


def _read_memory(size_mb: int) -> dict[str, dict[str, float]]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "sparse.txt"
        with path.open("wb") as f:
            f.write(b"first line\n")
            f.truncate(size_mb << 20)
        results: dict[str, dict[str, float]] = {}
        for how in ("pi-style", "ours"):
            started = time.perf_counter()
            done = subprocess.run(
                [sys.executable, __file__, "--child", str(path), how],
                capture_output=True,
                text=True,
                check=True,
            )
            results[how] = {
                **json.loads(done.stdout),
                "seconds": round(time.perf_counter() - started, 2),
            }
        return results


def _exact_difflib(old: str, new: str) -> None:
    a, b = old.split("\n"), new.split("\n")
    difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()


def _edit_diff(lines: int) -> dict[str, float]:
    old = "first\n" + "}\n" * lines + "last\n"
    new = "FIRST\n" + "}\n" * lines + "LAST\n"
    started = time.perf_counter()
    _exact_difflib(old, new)
    baseline = time.perf_counter() - started
    started = time.perf_counter()
    display_diff(old, new)
    unified_patch("f", old, new)
    first_changed_line(old, new)
    ours = time.perf_counter() - started
    return {"difflib_exact_s": round(baseline, 3), "ours_all_three_s": round(ours, 4)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size-mb", type=int, default=1024)
    parser.add_argument("--lines", type=int, nargs="*", default=[1000, 2000, 4000])
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child_read(Path(args.child[0]), args.child[1])
        return
    print(f"read, sparse file of {args.size_mb} MiB:", json.dumps(_read_memory(args.size_mb)))
    for n in args.lines:
        print(f"edit diff, {n} repeated lines:", json.dumps(_edit_diff(n)))


if __name__ == "__main__":
    main()
