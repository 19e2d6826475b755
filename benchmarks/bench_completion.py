"""The interactive editor's ``@`` file list on a large tree: walking it and answering a query.

A generated tree of ``--files`` files (default 100,000, in directories of 200) plus an ignored
``node_modules`` of 10,000 more, with a ``.gitignore``. Measured, interleaved in one run:

* ``os.walk``: listing every name with no ignore rules at all (the floor for any walk);
* ``walk (before)``: :func:`pi_context.tools.file_walk.walk` with the ignore check as it was
  before this change (``Path.relative_to`` per entry and rule file);
* ``walk (now)``: the same walk with the check done by string slicing;
* ``@ index``: :class:`~pi_context.cli.interactive.completion.FileIndex` building its list
  (the walk plus a record per entry) — the cost of the first ``@`` after the cache expires;
* ``@file_12`` / ``@`` (empty): ranking the cached list for one key press.

    .venv/bin/python benchmarks/bench_completion.py [--files 100000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent / "src"))
sys.path.insert(0, str(ROOT))

from _common import Sample, fmt_ms, interleaved, ratio, table, write_results  # noqa: E402
from pi_context.cli.interactive.completion import FileIndex, file_suggestions  # noqa: E402
from pi_context.tools import file_walk  # noqa: E402


def _make_tree(root: Path, files: int) -> None:
    per_dir = 200
    for number in range(files):
        directory = root / f"pkg{number // per_dir % 20}" / f"mod{number // per_dir}"
        if number % per_dir == 0:
            directory.mkdir(parents=True, exist_ok=True)
        (directory / f"file_{number}.py").touch()
    ignored = root / "node_modules" / "lib"
    ignored.mkdir(parents=True)
    for number in range(10_000):
        (ignored / f"dep_{number}.js").touch()
    (root / ".gitignore").write_text("node_modules/\n*.pyc\n", encoding="utf-8")


def _ignores_before(self: file_walk.IgnoreRules, path: Path, is_dir: bool) -> bool:
    """The ignore check as it was: a ``Path.relative_to`` per entry and rule file."""
    for layer in reversed(self._layers):
        try:
            relative = path.relative_to(layer.base).as_posix()
        except ValueError:
            continue
        result = layer.spec.check_file(relative + "/" if is_dir else relative)
        if result.include is not None:
            return result.include
    return False


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="bench-completion-"))
    try:
        _make_tree(base, args.files)
        now = file_walk.IgnoreRules.ignores

        def walk_before() -> int:
            file_walk.IgnoreRules.ignores = _ignores_before  # type: ignore[method-assign]
            try:
                return sum(1 for _ in file_walk.walk(base))
            finally:
                file_walk.IgnoreRules.ignores = now  # type: ignore[method-assign]

        samples = {
            "os.walk": (
                Sample("os.walk"),
                lambda: sum(len(d) + len(f) for _, d, f in os.walk(base)),
            ),
            "walk (before)": (Sample("walk (before)"), walk_before),
            "walk (now)": (Sample("walk (now)"), lambda: sum(1 for _ in file_walk.walk(base))),
            "@ index": (Sample("@ index"), lambda: FileIndex().entries(base)),
        }
        interleaved(args.repeat, *samples.values())
        warm = FileIndex(ttl=3600)
        entries = len(warm.entries(base))
        query = Sample("@file_12")
        empty = Sample("@")
        interleaved(
            args.repeat * 3,
            (query, lambda: file_suggestions("@file_12", base, warm)),
            (empty, lambda: file_suggestions("@", base, warm)),
        )
        baseline = samples["os.walk"][0]
        rows = [
            [s.name, fmt_ms(s.median), fmt_ms(s.best), f"{s.median / baseline.median:.1f}x"]
            for s, _ in samples.values()
        ]
        rows += [
            [s.name, fmt_ms(s.median), fmt_ms(s.best), "(cached list)"] for s in (query, empty)
        ]
        print(f"{args.files:,} files + 10,000 ignored; the @ list holds {entries:,} entries\n")
        print(table(rows, ["operation", "median", "best", "vs os.walk"]))
        before, after = samples["walk (before)"][0], samples["walk (now)"][0]
        print(f"\nwalk: {ratio(after, before):.2f}x faster than before")
        write_results(
            "completion",
            {s.name: s.to_json() for s in [*(s for s, _ in samples.values()), query, empty]},
        )
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
