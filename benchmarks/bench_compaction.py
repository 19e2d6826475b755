"""Compaction benchmarks: preparing a compaction and finding its cut point on a long session.

Measured the way the agent's ``Compactor`` does it: the session's current path (the no-copy
``Session.branch_view()``), its live projection, and a
:class:`~pi_context.compaction.TokenCache` kept across calls. Beside it, in the same run:

* **plain full walk**: follow ``parentId`` from the leaf to the root over the id index and
  reverse (the least any implementation that re-walks the path pays; pi 1.6.0 does this and
  more on every preparation, about 95 ms at 100k entries per the issue);
* **re-walk preparation**: our own ``prepare_compaction`` given only the path, so it rebuilds
  the projection and re-estimates every message (what a non-incremental port would do).

A diagnostic row gives the same preparation ``branch_entries()``'s copy of the path instead.
All preparations must agree on the cut; the script checks it.

    .venv/bin/python benchmarks/bench_compaction.py [--files 100k] [--repeat 7]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from _common import (
    FILES,
    Sample,
    fmt_ms,
    ratio,
    require_files,
    table,
    timed,
    walk_path,
    write_results,
)
from pi_context.compaction import CompactionSettings, TokenCache, prepare_compaction
from pi_context.compaction.cut_points import find_projected_cut_point
from pi_context.compaction.prepare import intrinsically_visible
from pi_context.session import Session


def _boundary(projection: Any) -> int:
    """Index after the contributing compaction in the projected entries (as preparation does)."""
    for index, item in enumerate(projection.entries):
        if item.entry.type == "compaction" and item.messages:
            return index + 1
    return 0


def bench_file(path: Path, repeat: int) -> dict[str, Any]:
    settings = CompactionSettings()
    session = Session.open(path)
    cold_projection_s, _ = timed(session.projection)  # what opening + first context costs
    tree = session.tree
    leaf = session.leaf

    cache = TokenCache()

    def incremental() -> Any:
        return prepare_compaction(
            session.branch_view(), settings, projection=session.projection(), cache=cache
        )

    cold_prepare_s, prepared = timed(incremental)  # first call fills the token cache
    assert prepared is not None, "benchmark session has nothing to compact"

    projection = session.projection()
    items = projection.entries
    start = _boundary(projection)

    def cut() -> Any:
        return find_projected_cut_point(
            items,
            start,
            len(items),
            settings.keep_recent_tokens,
            cache.item_tokens,
            intrinsically_visible,
        )

    def full_walk() -> list[Any]:
        return walk_path(tree.by_id, leaf, lambda e: e.parent_id)

    def rewalk_prepare() -> Any:
        return prepare_compaction(full_walk(), settings)

    def with_copy() -> Any:
        # Diagnostic only: what the preparation cost when it was given a copy of the path.
        return prepare_compaction(
            session.branch_entries(), settings, projection=session.projection(), cache=cache
        )

    runs: list[tuple[str, Any]] = [
        ("prepare", incremental),
        ("find_cut_point", cut),
        ("full_walk", full_walk),
        ("rewalk_prepare", rewalk_prepare),
        ("prepare_path_copy", with_copy),
    ]
    samples = {name: Sample(name) for name, _ in runs}
    for _ in range(repeat):
        for name, fn in runs:
            seconds, result = timed(fn)
            samples[name].times.append(seconds)
            if name in ("rewalk_prepare", "prepare_path_copy"):
                assert result.first_kept_entry_id == prepared.first_kept_entry_id
                assert result.tokens_before == prepared.tokens_before
            if name == "find_cut_point":
                assert items[result.first_kept_index].entry.id == prepared.first_kept_entry_id
    path_length = len(session.branch_view())
    session.close()
    return {
        "bytes": path.stat().st_size,
        "path_length": path_length,
        "context_entries": len(items),
        "summarized_messages": len(prepared.messages_to_summarize),
        "tokens_before": prepared.tokens_before,
        "cold_first_context_ms": round(cold_projection_s * 1e3, 3),
        "cold_prepare_ms": round(cold_prepare_s * 1e3, 3),
        "samples": samples,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="compaction benchmarks")
    parser.add_argument("--files", nargs="+", choices=list(FILES), default=["100k"])
    parser.add_argument("--repeat", type=int, default=7, help="runs per measurement (median)")
    args = parser.parse_args(argv)
    report: dict[str, Any] = {"python": sys.version.split()[0], "repeat": args.repeat, "files": {}}
    rows: list[list[str]] = []
    for name, path in require_files(args.files):
        print(f"== {name}: {path.name}", file=sys.stderr)
        result = bench_file(path, args.repeat)
        s = result.pop("samples")
        result["timings"] = {k: v.to_json() for k, v in s.items()}
        report["files"][name] = result
        walk, rewalk = s["full_walk"], s["rewalk_prepare"]
        measured = [("prepare compaction", s["prepare"]), ("find cut point", s["find_cut_point"])]
        measured.append(("  (diagnostic: prepare given a path copy)", s["prepare_path_copy"]))
        for label, ours in measured:
            rows.append(
                [
                    name,
                    label,
                    fmt_ms(ours.median),
                    fmt_ms(walk.median),
                    f"{ratio(ours, walk):.1f}x",
                    fmt_ms(rewalk.median),
                    f"{ratio(ours, rewalk):.1f}x",
                ]
            )
        rows.append(
            [
                name,
                "  (first prepare, cold cache)",
                f"{result['cold_prepare_ms']:.2f} ms",
                "",
                "",
                "",
                "",
            ]
        )
        print(
            f"   path {result['path_length']} entries, context {result['context_entries']} entries, "
            f"{result['summarized_messages']} messages to summarize, "
            f"tokensBefore {result['tokens_before']}",
            file=sys.stderr,
        )
    print("\n### Compaction (median of runs; ratio = baseline / ours, >1 means faster)\n")
    print(
        table(
            rows,
            [
                "file",
                "operation",
                "pi-context",
                "plain full walk",
                "vs walk",
                "re-walk preparation",
                "vs re-walk",
            ],
        )
    )
    print(f"\nresults: {write_results('compaction', report)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
