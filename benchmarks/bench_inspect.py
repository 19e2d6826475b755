"""The inspection commands at scale: ``pictx session info|tree|context`` and
``Session.open`` + ``projection()``.

Four generated files (seeded, pi's key order):

* ``small-1m``: 1,000,000 small user messages (~190 bytes a line), one linear chain;
* ``large-150m``: 600 user / tool-result pairs, each tool result ~250 KB (150 MB, few large
  entries);
* ``chain-40k``: 40,000 linear entries (the depth that made the tree walk quadratic);
* ``cycle-100k``: 100,000 entries whose parents form one cycle (the warning about it must stay
  one short line).

Each command runs in a fresh subprocess; we report wall time, the peak resident set size of
that process, and the longest stderr line. The baseline, measured in the same run, is the
plain reader: a fresh process that reads the file, splits it on ``\\n`` and keeps every line
decoded with ``orjson`` (what any reader that holds the whole session costs).
``--src DIR`` runs the commands from another checkout's ``src`` (for before/after numbers).

``--pi PAIRS`` compares with pi 1.6.0 instead (installed by the economy benchmark's installer
into ``benchmarks/out/economy/cache``): ``pictx session context FILE --json`` beside pi's own
loader and projection (``SessionManager.open`` + ``buildSessionContext``, the messages written
as JSON) in a fresh Node process, alternating, PAIRS times; reported are the medians of wall
time, CPU time and peak RSS, and the median of the per-pair wall ratios. The file
``large-linear`` is ``generate.py``'s 100k session (one chain, 39 compactions, 168 MiB).

    .venv/bin/python benchmarks/bench_inspect.py [--files small-1m large-150m chain-40k
        cycle-100k] [--commands info tree context open] [--src /path/to/other/src]
        [--timeout 300]
    .venv/bin/python benchmarks/bench_inspect.py --pi 5 --files large-linear
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

OUT_DIR = Path(__file__).resolve().parent / "out"
SRC = Path(__file__).resolve().parent.parent / "src"
LARGE_LINEAR = OUT_DIR / "session-100k.jsonl"

_HEADER = (
    '{"type":"session","version":3,"id":"0194f3a2-0000-7000-8000-00000000beef",'
    '"timestamp":"2026-01-05T10:00:00.000Z","cwd":"/home/u/proj"}\n'
)


def _line(index: int, parent: str | None) -> str:
    entry_id = f"{index:08x}"
    parent_json = "null" if parent is None else f'"{parent}"'
    return (
        f'{{"type":"message","id":"{entry_id}","parentId":{parent_json},'
        f'"timestamp":"2026-01-05T10:00:00.000Z","message":{{"role":"user","content":'
        f'[{{"type":"text","text":"note {index}"}}],"timestamp":1767607200000}}}}\n'
    )


def _large_lines(pairs: int) -> list[str]:
    """User prompts each followed by a ~250 KB tool result (code-like text), one chain."""
    words = ["def", "value", "return", "self", "index", "path", "line", "entry", "parent", "cache"]
    out = []
    parent: str | None = None
    for pair in range(pairs):
        prompt_id, result_id = f"{2 * pair:08x}", f"{2 * pair + 1:08x}"
        out.append(_line(2 * pair, parent))
        text = "\\n".join(
            f"    {words[(pair + row) % len(words)]}_{row} = {row * 7 % 1000}  # " + "x" * 40
            for row in range(4_000)
        )
        out.append(
            f'{{"type":"message","id":"{result_id}","parentId":"{prompt_id}",'
            f'"timestamp":"2026-01-05T10:00:00.000Z","message":{{"role":"toolResult",'
            f'"toolCallId":"call_{pair}","toolName":"read","content":[{{"type":"text",'
            f'"text":"{text}"}}],"isError":false,"timestamp":1767607200000}}}}\n'
        )
        parent = result_id
    return out


def generate(name: str) -> Path:
    """Write (once) and return the file of one profile."""
    OUT_DIR.mkdir(exist_ok=True)
    if name == "large-linear":
        if not LARGE_LINEAR.exists():
            raise SystemExit(f"missing {LARGE_LINEAR}: run benchmarks/generate.py first")
        return LARGE_LINEAR
    path = OUT_DIR / f"inspect-{name}.jsonl"
    if path.exists():
        return path
    if name == "large-150m":
        tmp = path.with_suffix(".tmp")
        with tmp.open("w", encoding="utf-8") as out:
            out.write(_HEADER)
            out.writelines(_large_lines(600))
        tmp.replace(path)
        return path
    count = {"small-1m": 1_000_000, "chain-40k": 40_000, "cycle-100k": 100_000}[name]
    tmp = path.with_suffix(".tmp")
    with tmp.open("w", encoding="utf-8") as out:
        out.write(_HEADER)
        for index in range(count):
            if name == "cycle-100k":
                parent: str | None = f"{(index - 1) % count:08x}"
            else:
                parent = None if index == 0 else f"{index - 1:08x}"
            out.write(_line(index, parent))
    tmp.replace(path)
    return path


_PROBE = """
import resource, subprocess, sys, time
start = time.perf_counter()
done = subprocess.run(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                      timeout=float(sys.argv[1]))
seconds = time.perf_counter() - start
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
peak = usage.ru_maxrss * 1024
lines = done.stderr.decode("utf-8", "replace").splitlines() or [""]
print(repr((seconds, peak, done.returncode, max(len(l) for l in lines), lines[0][:120],
            usage.ru_utime + usage.ru_stime)))
"""

# pi 1.6.0's loader and projection, the messages written out as JSON (as `session context
# --json` writes ours).
_PI_CONTEXT = """
const { SessionManager } = await import(process.argv[2] + "/dist/index.js");
const session = SessionManager.open(process.argv[3]);
const context = session.buildSessionContext();
process.stdout.write(JSON.stringify({model: context.model, thinkingLevel: context.thinkingLevel,
                                     messages: context.messages}) + "\\n");
"""

_OPEN_AND_PROJECT = """
import sys
from pi_context.session import Session
session = Session.open(sys.argv[1])
print(len(session.projection().messages))
"""

_PLAIN_READER = """
import sys, orjson
with open(sys.argv[1], "rb") as f:
    data = f.read()
lines = [orjson.loads(line) for line in data.split(b"\\n") if line.strip()]
del data
print(len(lines))
"""


def measure(command: list[str], env: dict[str, str], timeout: float) -> dict[str, Any]:
    """Wall time, peak RSS, exit code, longest stderr line of ``command`` in a fresh process."""
    try:
        out = subprocess.run(
            [sys.executable, "-c", _PROBE, str(timeout), *command],
            env=env,
            capture_output=True,
            check=True,
            timeout=timeout + 30,
        ).stdout.decode()
    except subprocess.CalledProcessError as exc:
        if b"TimeoutExpired" in exc.stderr:
            return {"seconds": None, "peak": None, "rc": None, "stderr": "timed out"}
        raise
    seconds, peak, rc, longest, first, cpu = eval(out)  # our own probe's repr
    return {
        "seconds": seconds,
        "peak": peak,
        "rc": rc,
        "longest": longest,
        "stderr": first,
        "cpu": cpu,
    }


def _fmt(result: dict[str, Any], size: int) -> str:
    if result["seconds"] is None:
        return "timed out"
    peak = result["peak"] / 2**20
    return f"{result['seconds']:.1f} s, {peak:,.0f} MB ({result['peak'] / size:.2f}x)"


def compare_with_pi(files: list[str], pairs: int, env: dict[str, str], timeout: float) -> None:
    """``session context --json`` beside pi 1.6.0's loader + projection, ``pairs`` times."""
    sys.path.insert(0, str(SRC.parent))
    from benchmarks.economy.pi_install import install_pi

    install = install_pi((OUT_DIR / "economy" / "cache").resolve())
    script = OUT_DIR / "pi-context.mjs"
    script.write_text(_PI_CONTEXT)
    package = install.cli.parents[2]  # .../pi-coding-agent/dist/bundle/cli.js
    rows = []
    for name in files:
        path = generate(name)
        size = path.stat().st_size
        ours_cmd = [sys.executable, "-m", "pi_context", "session", "context", str(path), "--json"]
        pi_cmd = [str(install.node), str(script), str(package), str(path)]
        runs: dict[str, list[dict[str, Any]]] = {"pictx": [], "pi": []}
        for _ in range(pairs):
            for label, command in (("pictx", ours_cmd), ("pi", pi_cmd)):
                found = measure(command, env, timeout)
                if found["rc"] != 0:
                    raise SystemExit(f"{label} failed on {path}: {found['stderr']}")
                runs[label].append(found)
        ratios = [
            a["seconds"] / b["seconds"] for a, b in zip(runs["pictx"], runs["pi"], strict=True)
        ]

        def median(label: str, key: str, runs: dict[str, list[dict[str, Any]]] = runs) -> float:
            return statistics.median(r[key] for r in runs[label])

        row = (
            f"| `{name}` | {size / 2**20:,.0f} MB | "
            + " | ".join(
                f"{median(label, 'seconds'):.2f} s wall, {median(label, 'cpu'):.2f} s CPU, "
                f"{median(label, 'peak') / 2**20:,.0f} MB ({median(label, 'peak') / size:.2f}x)"
                for label in ("pictx", "pi")
            )
            + f" | {statistics.median(ratios):.2f}x |"
        )
        rows.append(row)
        print(row, flush=True)
    print(
        f"| file | size | pictx session context --json | pi 1.6.0 | pictx / pi (wall, median of {pairs} pairs) |"
    )
    print("|---|---|---|---|---|")
    print("\n".join(rows))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--files", nargs="*", default=["small-1m", "large-150m", "chain-40k", "cycle-100k"]
    )
    parser.add_argument("--commands", nargs="*", default=["info", "tree", "context", "open"])
    parser.add_argument("--src", default=str(SRC), help="the src folder whose pictx runs")
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--no-baseline", action="store_true", help="skip the plain reader")
    parser.add_argument("--pi", type=int, metavar="PAIRS", help="compare with pi 1.6.0")
    args = parser.parse_args()
    env = {**os.environ, "PYTHONPATH": args.src}
    if args.pi:
        compare_with_pi(args.files, args.pi, env, args.timeout)
        return
    pictx = [sys.executable, "-m", "pi_context"]
    runs = {
        "info": lambda path: [*pictx, "session", "info", path],
        "tree": lambda path: [*pictx, "session", "tree", path],
        "context": lambda path: [*pictx, "session", "context", path],
        "open": lambda path: [sys.executable, "-c", _OPEN_AND_PROJECT, path],
    }
    results: dict[str, Any] = {"src": args.src, "files": {}}
    rows = []
    for name in args.files:
        path = generate(name)
        size = path.stat().st_size
        found: dict[str, Any] = {"bytes": size}
        if not args.no_baseline:
            found["plain"] = measure(
                [sys.executable, "-c", _PLAIN_READER, str(path)], env, args.timeout
            )
        for command in args.commands:
            found[command] = measure(runs[command](str(path)), env, args.timeout)
        results["files"][name] = found
        longest = max(found[c].get("longest") or 0 for c in args.commands)
        cells = [_fmt(found[c], size) for c in ["plain", *args.commands] if c in found]
        rows.append(f"| `{name}` | {size / 2**20:,.0f} MB | {' | '.join(cells)} | {longest:,} |")
        print(rows[-1], flush=True)
    OUT_DIR.mkdir(exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    (OUT_DIR / f"results-inspect-{stamp}.json").write_text(json.dumps(results, indent=2))
    heads = (["plain reader (baseline)"] if not args.no_baseline else []) + args.commands
    print(f"| file | size | {' | '.join(heads)} | longest stderr line |")
    print("|---" * (len(heads) + 3) + "|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
