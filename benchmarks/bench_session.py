"""Session benchmarks: loading, building the context, append + rebuild, memory.

Each number is reported beside a baseline measured in the same run:

* **load**: ``Session.open(path)`` vs. the plain reader (read the file, split on ``\\n``,
  ``orjson.loads`` every line).
* **first context**: ``session.projection()`` right after opening (this is where lazily kept
  lines get decoded) vs. pi's algorithm re-done in plain Python over the decoded entries
  (walk the whole path, compaction-aware selection, context edits; ``_common.pi_style_context``).
* **warm context**: ``session.projection()`` again vs. the same pi-style rebuild (pi rebuilds
  after every change).
* **append + rebuild**: ``append_message`` (written to a copy of the file) followed by
  ``projection()`` vs. adding the decoded entry to the id index + the pi-style rebuild.
* **memory**: measured in fresh subprocesses, two ways: resident set size (``/proc/self/statm``
  deltas, and the ``VmHWM`` peak) and ``tracemalloc`` (retained and peak Python
  allocations), for our loader and for the plain reader keeping every decoded line.

    .venv/bin/python benchmarks/bench_session.py [--files 2k 50k-branchy 100k] [--repeat 5]
"""

from __future__ import annotations

import argparse
import gc
import shutil
import sys
import tracemalloc
from pathlib import Path
from typing import Any

import orjson

from _common import (
    FILES,
    OUT_DIR,
    Sample,
    decode_all,
    fmt_ms,
    peak_rss_bytes,
    pi_style_context,
    ratio,
    require_files,
    rss_bytes,
    run_child,
    table,
    timed,
    write_results,
)
from pi_context.session import Session

SCRIPT = Path(__file__).resolve()


# -- timings ------------------------------------------------------------------------------------


def _baseline_round(path: Path, leaf_id: str, s: dict[str, Sample]) -> list[Any]:
    seconds, decoded = timed(lambda: decode_all(path))
    s["load_baseline"].times.append(seconds)
    by_id = {entry["id"]: entry for entry in decoded[1]}
    seconds, _ = timed(lambda: pi_style_context(by_id, leaf_id))
    s["first_context_baseline"].times.append(seconds)
    seconds, context = timed(lambda: pi_style_context(by_id, leaf_id))
    s["warm_context_baseline"].times.append(seconds)
    messages: list[Any] = context[0]
    return messages


def bench_load_and_context(path: Path, repeat: int) -> dict[str, Sample]:
    """Load, first context and warm context, ours and baseline, interleaved per repeat."""
    s: dict[str, Sample] = {
        k: Sample(k)
        for k in (
            "load",
            "load_baseline",
            "first_context",
            "first_context_baseline",
            "warm_context",
            "warm_context_baseline",
        )
    }
    for _ in range(repeat):
        seconds, session = timed(lambda: Session.open(path))
        s["load"].times.append(seconds)
        seconds, _ = timed(session.projection)
        s["first_context"].times.append(seconds)
        seconds, projection = timed(session.projection)
        s["warm_context"].times.append(seconds)
        leaf_id = session.leaf_id
        session.close()
        del session

        assert leaf_id is not None
        baseline_messages = _baseline_round(path, leaf_id, s)
        # The baseline must compute the very same context, or the comparison means nothing.
        if baseline_messages != projection.messages:
            raise SystemExit(f"{path.name}: pi-style baseline and projection() disagree")
        del projection, baseline_messages
        gc.collect()
    return s


def _messages_to_append(n: int) -> list[dict[str, Any]]:
    """A realistic rotation: prompt, tool-calling reply, sizeable tool result, answer."""
    output = "\n".join(f"    line {i}: value = compute(x[{i}])  # ok" for i in range(50))
    usage = {
        "input": 900,
        "output": 120,
        "cacheRead": 30_000,
        "cacheWrite": 0,
        "totalTokens": 31_020,
        "cost": {
            "input": 0.0027,
            "output": 0.0018,
            "cacheRead": 0.009,
            "cacheWrite": 0,
            "total": 0.0135,
        },
    }
    out: list[dict[str, Any]] = []
    for i in range(n):
        step = i % 4
        if step == 0:
            out.append(
                {
                    "role": "user",
                    "content": [{"type": "text", "text": f"Now fix case {i}."}],
                    "timestamp": 1_800_000_000_000 + i,
                }
            )
        elif step == 1:
            out.append(
                {
                    "role": "assistant",
                    "content": [
                        {"type": "thinking", "thinking": "Read the file first."},
                        {
                            "type": "toolCall",
                            "id": f"call_{i}",
                            "name": "read",
                            "arguments": {"path": "src/x.py"},
                        },
                    ],
                    "api": "anthropic-messages",
                    "provider": "anthropic",
                    "model": "claude-sonnet-4-5",
                    "usage": usage,
                    "stopReason": "toolUse",
                    "timestamp": 1_800_000_000_000 + i,
                }
            )
        elif step == 2:
            out.append(
                {
                    "role": "toolResult",
                    "toolCallId": f"call_{i - 1}",
                    "toolName": "read",
                    "content": [{"type": "text", "text": output}],
                    "isError": False,
                    "timestamp": 1_800_000_000_000 + i,
                }
            )
        else:
            out.append(
                {
                    "role": "assistant",
                    "content": [{"type": "text", "text": f"Fixed case {i}."}],
                    "api": "anthropic-messages",
                    "provider": "anthropic",
                    "model": "claude-sonnet-4-5",
                    "usage": usage,
                    "stopReason": "stop",
                    "timestamp": 1_800_000_000_000 + i,
                }
            )
    return out


def bench_append(path: Path, iterations: int) -> dict[str, Any]:
    """Append one message + rebuild the context, on a copy of the file, vs. the pi-style rebuild."""
    copy = OUT_DIR / f"append-copy-{path.name}"
    shutil.copyfile(path, copy)
    samples = {
        k: Sample(k) for k in ("append", "rebuild", "append_rebuild", "append_rebuild_baseline")
    }
    try:
        session = Session.open(copy)
        session.projection()  # an agent always has its context already
        _, decoded = decode_all(copy)
        by_id = {entry["id"]: entry for entry in decoded}
        leaf: str | None = session.leaf_id
        messages = _messages_to_append(iterations)
        for i, message in enumerate(messages):
            gc.collect()
            t_append, entry = timed(lambda m=message: session.append_message(m))  # type: ignore[misc]
            t_rebuild, projection = timed(session.projection)
            samples["append"].times.append(t_append)
            samples["rebuild"].times.append(t_rebuild)
            samples["append_rebuild"].times.append(t_append + t_rebuild)
            assert projection.messages[-1] is not None

            def baseline(i: int = i, message: dict[str, Any] = message) -> Any:
                nonlocal leaf
                new_id = f"b{i:07x}"
                by_id[new_id] = {
                    "type": "message",
                    "id": new_id,
                    "parentId": leaf,
                    "timestamp": "2027-01-15T08:00:00.000Z",
                    "message": message,
                }
                leaf = new_id
                return pi_style_context(by_id, new_id)

            seconds, _ = timed(baseline)
            samples["append_rebuild_baseline"].times.append(seconds)
            assert entry.id == session.leaf_id
        context_messages = len(session.projection().messages)
        session.close()
    finally:
        copy.unlink(missing_ok=True)
    return {"samples": samples, "context_messages": context_messages}


# -- memory (in fresh subprocesses) ---------------------------------------------------------------


def memory_child(mode: str, path: Path, trace: bool) -> dict[str, Any]:
    """Runs inside a fresh interpreter; measures one loader's memory and prints JSON."""
    gc.collect()
    if trace:
        tracemalloc.start()
    rss0, max0 = rss_bytes(), peak_rss_bytes()
    out: dict[str, Any] = {"mode": mode, "tracemalloc": trace, "file_bytes": path.stat().st_size}
    keep: Any = Session.open(path) if mode == "ours" else decode_all(path)
    gc.collect()
    out["rss_after_load"] = rss_bytes() - rss0
    out["peak_rss_during_load"] = peak_rss_bytes() - max0
    if trace:
        current, peak = tracemalloc.get_traced_memory()
        out["traced_after_load"] = current
        out["traced_peak_load"] = peak
    if mode == "ours":
        keep.projection()
        gc.collect()
        out["rss_after_context"] = rss_bytes() - rss0
        if trace:
            out["traced_after_context"] = tracemalloc.get_traced_memory()[0]
    assert keep is not None
    return out


def bench_memory(path: Path) -> dict[str, Any]:
    results: dict[str, Any] = {}
    for mode in ("ours", "orjson"):
        rss = run_child(SCRIPT, ["--memory-child", mode, str(path)])
        traced = run_child(SCRIPT, ["--memory-child", mode, str(path), "--tracemalloc"])
        results[mode] = {**rss, **{k: v for k, v in traced.items() if k.startswith("traced")}}
    return results


# -- main ------------------------------------------------------------------------------------------------


def _mb(n: int) -> str:
    return f"{n / 1e6:,.1f} MB"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="session benchmarks")
    parser.add_argument("--files", nargs="+", choices=list(FILES), default=list(FILES))
    parser.add_argument("--repeat", type=int, default=5, help="runs per measurement (median)")
    parser.add_argument("--appends", type=int, default=40, help="append + rebuild iterations")
    parser.add_argument("--skip-memory", action="store_true")
    parser.add_argument("--memory-child", nargs=2, metavar=("MODE", "FILE"), help=argparse.SUPPRESS)
    parser.add_argument("--tracemalloc", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.memory_child:
        mode, file = args.memory_child
        print(orjson.dumps(memory_child(mode, Path(file), args.tracemalloc)).decode())
        return 0

    report: dict[str, Any] = {"python": sys.version.split()[0], "repeat": args.repeat, "files": {}}
    time_rows: list[list[str]] = []
    mem_rows: list[list[str]] = []
    for name, path in require_files(args.files):
        size = path.stat().st_size
        print(f"== {name}: {path.name} ({_mb(size)})", file=sys.stderr)
        timings = bench_load_and_context(path, args.repeat)
        appended = bench_append(path, args.appends)
        a = appended["samples"]
        entry: dict[str, Any] = {"bytes": size}
        entry["timings"] = {k: v.to_json() for k, v in {**timings, **a}.items()}
        entry["context_messages_after_appends"] = appended["context_messages"]
        pairs = [
            ("load", timings["load"], timings["load_baseline"], "orjson.loads every line"),
            (
                "first context",
                timings["first_context"],
                timings["first_context_baseline"],
                "pi-style rebuild",
            ),
            (
                "warm context",
                timings["warm_context"],
                timings["warm_context_baseline"],
                "pi-style rebuild",
            ),
            (
                "append + rebuild",
                a["append_rebuild"],
                a["append_rebuild_baseline"],
                "append + pi-style rebuild",
            ),
        ]
        e2e = Sample("load_first_context")
        e2e.times = [
            a + b
            for a, b in zip(timings["load"].times, timings["first_context"].times, strict=True)
        ]
        e2e_base = Sample("load_first_context_baseline")
        e2e_base.times = [
            a + b
            for a, b in zip(
                timings["load_baseline"].times, timings["first_context_baseline"].times, strict=True
            )
        ]
        entry["timings"]["load_first_context"] = e2e.to_json()
        entry["timings"]["load_first_context_baseline"] = e2e_base.to_json()
        pairs.insert(2, ("load + first context", e2e, e2e_base, "orjson load + pi-style rebuild"))
        for label, ours, base, base_name in pairs:
            time_rows.append(
                [
                    name,
                    label,
                    fmt_ms(ours.median),
                    fmt_ms(base.median),
                    base_name,
                    f"{ratio(ours, base):.2f}x",
                ]
            )
        time_rows.append([name, "  (append alone)", fmt_ms(a["append"].median), "", "", ""])
        time_rows.append([name, "  (rebuild alone)", fmt_ms(a["rebuild"].median), "", "", ""])
        if not args.skip_memory:
            memory = bench_memory(path)
            entry["memory"] = memory
            ours, base = memory["ours"], memory["orjson"]
            mem_rows.append(
                [
                    name,
                    _mb(size),
                    f"{_mb(ours['traced_after_load'])} ({ours['traced_after_load'] / size:.2f}x)",
                    f"{_mb(ours['traced_peak_load'])} ({ours['traced_peak_load'] / size:.2f}x)",
                    f"{_mb(ours['rss_after_load'])} ({ours['rss_after_load'] / size:.2f}x)",
                    f"{_mb(ours['peak_rss_during_load'])} ({ours['peak_rss_during_load'] / size:.2f}x)",
                    f"{_mb(ours['traced_after_context'])} ({ours['traced_after_context'] / size:.2f}x)",
                    f"{_mb(base['traced_after_load'])} ({base['traced_after_load'] / size:.2f}x)",
                ]
            )
        report["files"][name] = entry
    print("\n### Time (median of runs; ratio = baseline / ours, >1 means faster)\n")
    print(table(time_rows, ["file", "operation", "pi-context", "baseline", "baseline is", "ratio"]))
    if mem_rows:
        print("\n### Memory (fresh subprocess per measurement; x = multiple of the file size)\n")
        print(
            table(
                mem_rows,
                [
                    "file",
                    "size",
                    "retained after load (tracemalloc)",
                    "peak during load (tracemalloc)",
                    "RSS delta after load",
                    "peak RSS delta (VmHWM)",
                    "retained after first context",
                    "plain reader retained",
                ],
            )
        )
    print(f"\nresults: {write_results('session', report)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
