"""``Session.search`` at scale: building the index, catching up, and answering a query.

On a generated session (``generate.py --profile large``: about 100k entries, 170 MB), each in
a fresh process where the cold cost matters:

* ``build``: SQLite FTS5 index from an empty cache (``SearchIndex.for_file`` + ``refresh``);
* ``open``: a second process opening the built cache and checking it against the file;
* ``append``: one entry appended to the file, then ``refresh`` (the incremental path);
* ``query``: ``search`` on the active branch (the first query of a process builds the branch
  view; the next reuses it), for a rare word, a common phrase and a word in every entry.

The baseline, measured in the same run, is the alternative the index was chosen over: a
plain in-memory BM25 (inverted index of dicts, Okapi BM25 k1=1.2 b=0.75, the same words)
built in the process from the file, which every process must rebuild since nothing persists.

    .venv/bin/python benchmarks/generate.py --profile large
    .venv/bin/python benchmarks/bench_search.py [--file benchmarks/out/session-100k.jsonl]
"""

from __future__ import annotations

import argparse
import heapq
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent
SRC = ROOT.parent / "src"
QUERIES = ["6829", "retry loop timeout", "parser config error"]

_CHILD = r"""
import json, sys, time
from pathlib import Path
from pi_context.session.search.index import SearchIndex
from pi_context.session.search.query import search
file, cache, mode = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
out = {}
t = time.perf_counter()
index = SearchIndex.for_file(file, cache)
index.refresh()
out["open_s"] = time.perf_counter() - t
out["rebuilds"] = index.rebuilds
if mode == "append":
    line = json.dumps({"type": "message", "id": "b3nch001", "parentId": index.structure.ids[-1],
        "timestamp": "2026-02-01T00:00:00.000Z", "message": {"role": "user",
        "content": [{"type": "text", "text": "the quetzal benchmark marker"}], "timestamp": 1}})
    with file.open("ab") as f:
        f.write(line.encode() + b"\n")
    t = time.perf_counter()
    index.refresh()
    out["append_s"] = time.perf_counter() - t
    out["found"] = [h.id for h in search(index, "quetzal")]
if mode == "query":
    for q in json.loads(sys.argv[4]):
        times = []
        for _ in range(3):
            t = time.perf_counter()
            hits = search(index, q, limit=10)
            times.append(time.perf_counter() - t)
        out[q] = {"first_s": times[0], "next_s": min(times[1:]), "hits": len(hits)}
print(json.dumps(out))
"""

_WORD = re.compile(r"\w+")


def _child(file: Path, cache: Path, mode: str) -> dict[str, object]:
    env = dict(os.environ, PYTHONPATH=str(SRC))
    args = [sys.executable, "-c", _CHILD, str(file), str(cache), mode, json.dumps(QUERIES)]
    t = time.perf_counter()
    done = subprocess.run(args, env=env, capture_output=True, text=True, check=True)
    result: dict[str, object] = json.loads(done.stdout)
    result["process_s"] = time.perf_counter() - t
    return result


def _baseline(file: Path) -> dict[str, object]:
    """In-memory BM25 over the same text, built from the file in this process."""
    sys.path.insert(0, str(SRC))
    from pi_context import _json
    from pi_context.session.search.text import entry_text

    t = time.perf_counter()
    postings: dict[str, dict[int, int]] = defaultdict(dict)
    lengths: list[int] = []
    with file.open("rb") as f:
        next(f)
        for line in f:
            try:
                data = _json.loads(line)
            except ValueError:
                continue
            found = entry_text(data) if isinstance(data, dict) else None
            doc = len(lengths)
            words = _WORD.findall(found[1].lower()) if found else []
            lengths.append(len(words))
            for word, count in Counter(words).items():
                postings[word][doc] = count
    build = time.perf_counter() - t
    n = len(lengths)
    average = sum(lengths) / max(n, 1)
    out: dict[str, object] = {"build_s": build}
    for q in QUERIES:
        t = time.perf_counter()
        scores: dict[int, float] = defaultdict(float)
        for word in set(_WORD.findall(q.lower())):
            docs = postings.get(word, {})
            idf = math.log(1 + (n - len(docs) + 0.5) / (len(docs) + 0.5))
            for doc, tf in docs.items():
                scores[doc] += idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * lengths[doc] / average))
        top = heapq.nlargest(10, scores.items(), key=lambda item: item[1])
        out[q] = {"query_s": time.perf_counter() - t, "hits": len(top), "matches": len(scores)}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--file", type=Path, default=ROOT / "out" / "session-100k.jsonl")
    parser.add_argument("--no-baseline", action="store_true")
    args = parser.parse_args()
    if not args.file.exists():
        sys.exit(f"{args.file}: missing; run benchmarks/generate.py --profile large first")
    work = Path(tempfile.mkdtemp(prefix="bench-search-"))
    try:
        file = work / args.file.name
        shutil.copyfile(args.file, file)
        cache = work / "cache"
        size_mb = file.stat().st_size / 1e6
        print(f"file: {args.file.name}, {size_mb:.1f} MB")
        build = _child(file, cache, "build")
        index_mb = sum(p.stat().st_size for p in cache.iterdir()) / 1e6
        print(
            f"build (fresh cache): {build['open_s']:.2f} s, process {build['process_s']:.2f} s,"
            f" index {index_mb:.1f} MB"
        )
        opened = _child(file, cache, "open")
        print(
            f"open + check (built cache): {opened['open_s']:.3f} s, rebuilds {opened['rebuilds']}"
        )
        query = _child(file, cache, "query")
        for q in QUERIES:
            r = query[q]
            assert isinstance(r, dict)
            print(
                f"query {q!r}: first {r['first_s']:.3f} s, next {r['next_s']:.3f} s,"
                f" {r['hits']} hits"
            )
        print(f"query process (open + 3 queries x 3): {query['process_s']:.2f} s")
        append = _child(file, cache, "append")
        print(
            f"append one entry + refresh: {append['append_s']:.4f} s, found {append['found']},"
            f" rebuilds {append['rebuilds']}"
        )
        if not args.no_baseline:
            base = _baseline(file)
            print(f"baseline in-memory BM25 build: {base['build_s']:.2f} s (every process)")
            for q in QUERIES:
                r = base[q]
                assert isinstance(r, dict)
                print(f"baseline query {q!r}: {r['query_s']:.3f} s, {r['matches']} matches")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
