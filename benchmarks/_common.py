"""Shared helpers for the benchmarks: timing, memory probes, the pi-style baselines, reports.

The baselines are deliberately plain Python over fully decoded JSON (what a straightforward
port of pi 1.6.0 would do): every benchmark reports its number *beside* a baseline measured in
the same process and run, because on a shared 2-core machine only the ratio is stable.
"""

from __future__ import annotations

import gc
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parent
OUT_DIR = ROOT / "out"
PYTHON = sys.executable

FILES = {
    "2k": OUT_DIR / "session-2k.jsonl",
    "50k-branchy": OUT_DIR / "session-50k-branchy.jsonl",
    "100k": OUT_DIR / "session-100k.jsonl",
}


# -- timing --------------------------------------------------------------------------------------


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    """Seconds taken by one call of ``fn`` (after a full collection) and its result."""
    gc.collect()
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


@dataclass
class Sample:
    """Repeated timings of one operation (seconds)."""

    name: str
    times: list[float] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    @property
    def best(self) -> float:
        return min(self.times)

    def to_json(self) -> dict[str, Any]:
        return {
            "median_ms": round(self.median * 1e3, 4),
            "min_ms": round(self.best * 1e3, 4),
            "runs": len(self.times),
        }


def interleaved(repeat: int, *pairs: tuple[Sample, Callable[[], Any]]) -> None:
    """Run each operation ``repeat`` times, alternating between them (drift hits all alike)."""
    for _ in range(repeat):
        for sample, fn in pairs:
            seconds, _ = timed(fn)
            sample.times.append(seconds)


def fmt_ms(seconds: float) -> str:
    ms = seconds * 1e3
    if ms >= 100:
        return f"{ms:,.0f} ms"
    if round(ms * 1e3) >= 1000:
        return f"{ms:.2f} ms"
    return f"{ms * 1e3:.0f} µs"


def ratio(ours: Sample, baseline: Sample) -> float:
    """How many times faster ours is than the baseline (medians; >1 = faster)."""
    return baseline.median / ours.median if ours.median else float("inf")


# -- memory ---------------------------------------------------------------------------------------


def rss_bytes() -> int:
    """Current resident set size of this process (Linux ``/proc/self/statm``)."""
    with open("/proc/self/statm", "rb") as handle:
        resident_pages = int(handle.read().split()[1])
    return resident_pages * os.sysconf("SC_PAGE_SIZE")


def peak_rss_bytes() -> int:
    """Peak resident set size of this process so far (``VmHWM`` in ``/proc/self/status``).

    Not ``ru_maxrss``: Linux carries it over from the parent across ``fork``/``exec``, so in a
    child started by a big benchmark process it would report the parent's peak.
    """
    with open("/proc/self/status", "rb") as handle:
        for line in handle:
            if line.startswith(b"VmHWM:"):
                return int(line.split()[1]) * 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def run_child(script: Path, args: Iterable[str]) -> dict[str, Any]:
    """Run ``script`` in a fresh interpreter and parse the JSON object it prints last."""
    proc = subprocess.run(
        [PYTHON, str(script), *args], capture_output=True, check=False, cwd=ROOT.parent
    )
    if proc.returncode != 0:
        raise RuntimeError(f"{script.name} {' '.join(args)} failed:\n{proc.stderr.decode()}")
    result: dict[str, Any] = orjson.loads(proc.stdout.strip().splitlines()[-1])
    return result


# -- the pi-style baseline --------------------------------------------------------------------------


def decode_all(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The plain reader: split on ``\\n``, ``orjson.loads`` every line; header and entries."""
    lines = path.read_bytes().split(b"\n")
    decoded = [orjson.loads(line) for line in lines if line]
    return decoded[0], decoded[1:]


def _ms(iso: str) -> int:
    return int(datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000)


def _entry_messages(entry: dict[str, Any]) -> list[dict[str, Any]]:
    kind = entry["type"]
    if kind == "message":
        return [entry["message"]]
    if kind == "custom_message":
        return [
            {
                "role": "custom",
                "customType": entry.get("customType"),
                "content": entry.get("content", []),
                "display": entry.get("display"),
                "details": entry.get("details"),
                "timestamp": _ms(entry["timestamp"]),
            }
        ]
    if kind == "branch_summary" and entry.get("summary"):
        return [
            {
                "role": "branchSummary",
                "summary": entry["summary"],
                "fromId": entry.get("fromId"),
                "timestamp": _ms(entry["timestamp"]),
            }
        ]
    if kind == "compaction":
        out = [entry["systemMessage"]] if entry.get("systemMessage") else []
        out.append(
            {
                "role": "compactionSummary",
                "summary": entry["summary"],
                "tokensBefore": entry.get("tokensBefore"),
                "timestamp": _ms(entry["timestamp"]),
            }
        )
        return out
    return []


def walk_path(by_id: dict[str, Any], leaf: Any, parent_of: Callable[[Any], Any]) -> list[Any]:
    """Root→leaf path by following parent links (what pi does on every rebuild)."""
    path: list[Any] = []
    entry = leaf
    while entry is not None:
        path.append(entry)
        parent = parent_of(entry)
        entry = by_id.get(parent) if parent is not None else None
    path.reverse()
    return path


def pi_style_context(
    by_id: dict[str, dict[str, Any]], leaf_id: str
) -> tuple[list[dict[str, Any]], str, Any]:
    """pi 1.6.0's ``buildSessionContext`` re-done from scratch over decoded entries.

    Walks the whole path, reads the thinking level and model off it, selects the entries after
    the newest compaction, applies context edits and collects the messages.
    """
    path = walk_path(by_id, by_id[leaf_id], lambda e: e.get("parentId"))
    level, model = "off", None
    for entry in path:
        kind = entry["type"]
        if kind == "thinking_level_change":
            level = entry.get("thinkingLevel") or level
        elif kind == "model_change":
            model = (entry.get("provider"), entry.get("modelId"))
        elif kind == "message" and entry["message"].get("role") == "assistant":
            model = (entry["message"].get("provider"), entry["message"].get("model"))
    last = -1
    for index in range(len(path) - 1, -1, -1):
        if path[index]["type"] == "compaction":
            last = index
            break
    ctx = path
    if last >= 0:
        compaction = path[last]
        first_kept = compaction.get("firstKeptEntryId")
        kept: list[dict[str, Any]] = []
        found = False
        for entry in path[:last]:
            if not found:
                if entry["id"] != first_kept:
                    continue
                found = True
            if not (entry["type"] == "message" and entry["message"].get("role") == "system"):
                kept.append(entry)
        ctx = [compaction, *kept, *path[last + 1 :]]
    edits = {e["targetId"]: e for e in ctx if e["type"] == "context_edit"}
    messages: list[dict[str, Any]] = []
    for index, entry in enumerate(ctx):
        if entry["type"] == "compaction" and index > 0:
            continue
        items = _entry_messages(entry)
        edit = edits.get(entry["id"])
        if edit is not None:
            replacement = edit.get("replacement")
            if replacement is None:
                items = []
            else:
                items = [{**m, "content": replacement.get("content")} for m in items]
        messages.extend(items)
    return messages, level, model


# -- reports --------------------------------------------------------------------------------------


def table(rows: list[list[str]], header: list[str]) -> str:
    """A Markdown table."""
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = ["| " + " | ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)) + " |"]
    lines.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for row in rows:
        lines.append("| " + " | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) + " |")
    return "\n".join(lines)


def write_results(name: str, payload: dict[str, Any]) -> Path:
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    target = OUT_DIR / f"results-{name}.json"
    target.write_bytes(orjson.dumps(payload, option=orjson.OPT_INDENT_2))
    return target


def require_files(names: Iterable[str]) -> list[tuple[str, Path]]:
    missing = [str(FILES[n]) for n in names if not FILES[n].exists()]
    if missing:
        raise SystemExit(
            "missing benchmark sessions: "
            + ", ".join(missing)
            + "\nrun: .venv/bin/python benchmarks/generate.py"
        )
    return [(n, FILES[n]) for n in names]
