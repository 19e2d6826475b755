"""How long the HTML and JSONL exports take on a large synthetic session.

Run: ``.venv/bin/python benchmarks/bench_export.py [entries]`` (default 20000).
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

from pi_context.export import SessionDocument, export_file


def build(path: Path, count: int) -> None:
    lines = [
        {
            "type": "session",
            "version": 3,
            "id": "bench",
            "timestamp": "2026-01-01T00:00:00.000Z",
            "cwd": "/b",
        }
    ]
    parent = None
    for n in range(count):
        eid = f"{n:08x}"
        if n % 500 == 499:
            entry = {
                "type": "compaction",
                "id": eid,
                "parentId": parent,
                "timestamp": "t",
                "summary": "s " * 200,
                "firstKeptEntryId": f"{n - 100:08x}",
                "tokensBefore": 100000,
            }
        else:
            role = ("user", "assistant", "toolResult")[n % 3]
            content = [{"type": "text", "text": f"message {n} " + "lorem ipsum " * 40}]
            message = {"role": role, "content": content, "timestamp": n}
            if role == "assistant":
                message["usage"] = {
                    "input": 100,
                    "output": 10,
                    "cacheRead": 900,
                    "cacheWrite": 0,
                    "totalTokens": 1010,
                    "cost": {
                        "input": 0,
                        "output": 0,
                        "cacheRead": 0,
                        "cacheWrite": 0,
                        "total": 0.001,
                    },
                }
            if role == "toolResult":
                message.update({"toolCallId": f"c{n}", "toolName": "bash", "isError": False})
            entry = {
                "type": "message",
                "id": eid,
                "parentId": parent,
                "timestamp": "t",
                "message": message,
            }
        lines.append(entry)
        parent = eid
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "big.jsonl"
        build(source, count)
        start = time.perf_counter()
        doc = SessionDocument.load(source)
        loaded = time.perf_counter()
        page = export_file(doc, Path(tmp) / "big.html")
        rendered = time.perf_counter()
        export_file(doc, Path(tmp) / "branch.jsonl")
        done = time.perf_counter()
        print(
            f"{count} entries ({source.stat().st_size / 1e6:.1f} MB): load {loaded - start:.2f}s, "
            f"html {rendered - loaded:.2f}s ({page.stat().st_size / 1e6:.1f} MB), jsonl {done - rendered:.2f}s"
        )


if __name__ == "__main__":
    main()
