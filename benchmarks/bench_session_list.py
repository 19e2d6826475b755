"""The ``/resume`` picker's session listing: hundreds of session files in one folder.

* **baseline**: :func:`_decode_every_line`, the plain reader (reads each file whole and
  decodes every line), kept here as the yardstick.
* **cold**: ``SessionLister().directory`` with an empty cache, through
  ``session_dirs.read_session_info`` (byte searches over a mapped file; only the header, the
  first user message and the last ``session_info`` are decoded), as ``session_dirs.list_sessions``
  (the text-mode ``/resume`` and ``pictx -r``) reads too.
* **warm**: the same lister again (files unchanged: one ``stat`` each), which is what Tab,
  a rename or reopening the picker cost.
* **rows**: building the picker's rows (threaded order) from the warm listing.

Both listings are checked to agree (names, first messages, counts) before timing.

    .venv/bin/python benchmarks/bench_session_list.py [--sessions 300] [--messages 60] [--repeat 7]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from pathlib import Path

from _common import Sample, fmt_ms, interleaved, ratio, table, write_results
from pi_context.cli.app.session_list import SessionLister
from pi_context.cli.interactive.pickers.session import SessionPicker

Summary = tuple[str | None, str, int]
"""A session's name, first user text and user + assistant message count."""


def _decode_every_line(directory: Path) -> dict[Path, Summary]:
    """The plain way to summarize sessions: every line of every file decoded."""
    found: dict[Path, Summary] = {}
    for path in directory.glob("*.jsonl"):
        name: str | None = None
        first = ""
        count = 0
        for raw in path.read_bytes().split(b"\n")[1:]:
            if not raw.strip():
                continue
            entry = json.loads(raw)
            if entry.get("type") == "session_info":
                value = entry.get("name")
                name = value.strip() or None if isinstance(value, str) else None
            elif entry.get("type") == "message":
                message = entry["message"]
                if message.get("role") in ("user", "assistant"):
                    count += 1
                if message.get("role") == "user" and not first:
                    texts = [b["text"] for b in message["content"] if b.get("type") == "text"]
                    first = " ".join(texts[0].split()) if texts else ""
        found[path] = (name, first, count)
    return found


def _write_sessions(directory: Path, sessions: int, messages: int, seed: int) -> int:
    """Seeded pi-format session files; returns the total size in bytes."""
    rng = random.Random(seed)
    total = 0
    for number in range(sessions):
        sid = f"{number:08d}-0000-7000-8000-000000000000"
        stamp = f"2026-01-{1 + number % 28:02d}T10:00:00.000Z"
        lines = [{"type": "session", "version": 3, "id": sid, "timestamp": stamp, "cwd": "/work/p"}]
        parent = None
        for index in range(messages):
            eid = f"{index:08x}"
            kind = index % 3
            if kind == 0:
                message = {
                    "role": "user",
                    "content": [{"type": "text", "text": f"question {number}.{index} " * 8}],
                    "timestamp": 1_767_000_000_000 + index,
                }
            elif kind == 1:
                message = {
                    "role": "assistant",
                    "content": [
                        {"type": "text", "text": "Let me look. " * 20},
                        {
                            "type": "toolCall",
                            "id": f"call_{index}",
                            "name": "bash",
                            "arguments": {"command": "grep -rn TODO src"},
                        },
                    ],
                    "usage": {"input": 1000, "output": 100},
                    "timestamp": 1_767_000_000_000 + index,
                }
            else:
                size = rng.randint(500, 12_000)
                message = {
                    "role": "toolResult",
                    "toolCallId": f"call_{index - 1}",
                    "toolName": "bash",
                    "content": [{"type": "text", "text": "src/x.py:1: TODO\n" * (size // 17)}],
                    "isError": False,
                    "timestamp": 1_767_000_000_000 + index,
                }
            lines.append(
                {
                    "type": "message",
                    "id": eid,
                    "parentId": parent,
                    "timestamp": stamp,
                    "message": message,
                }
            )
            parent = eid
        if number % 4 == 0:
            lines.append(
                {"type": "session_info", "id": "ffffffff", "parentId": parent, "name": f"n{number}"}
            )
        text = "\n".join(json.dumps(line, separators=(",", ":")) for line in lines) + "\n"
        path = directory / f"{stamp.replace(':', '-').replace('.', '-')}_{sid}.jsonl"
        path.write_text(text, encoding="utf-8")
        total += len(text.encode())
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=300)
    parser.add_argument("--messages", type=int, default=60)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        size = _write_sessions(directory, args.sessions, args.messages, args.seed)
        baseline = _decode_every_line(directory)
        ours = {
            s.path: (s.name, s.first_message, s.message_count)
            for s in SessionLister().directory(directory)
        }
        if baseline != ours:
            sys.exit("the listings disagree")
        warm_lister = SessionLister()
        warm_lister.directory(directory)
        picker = SessionPicker(
            here=lambda: warm_lister.directory(directory),
            everywhere=lambda: warm_lister.directory(directory),
            current=None,
            rename=lambda _s, _n: None,
            delete=lambda _s: None,
        )
        samples = {name: Sample(name) for name in ("baseline", "cold", "warm", "rows")}
        interleaved(
            args.repeat,
            (samples["baseline"], lambda: _decode_every_line(directory)),
            (samples["cold"], lambda: SessionLister().directory(directory)),
            (samples["warm"], lambda: warm_lister.directory(directory)),
            (samples["rows"], lambda: picker.rows("")),
        )
    rows = [
        ["every line decoded (baseline)", fmt_ms(samples["baseline"].median), "1.0x"],
        [
            "SessionLister, cold",
            fmt_ms(samples["cold"].median),
            f"{ratio(samples['cold'], samples['baseline']):.1f}x",
        ],
        [
            "SessionLister, warm",
            fmt_ms(samples["warm"].median),
            f"{ratio(samples['warm'], samples['baseline']):.1f}x",
        ],
        ["picker rows (threaded, warm)", fmt_ms(samples["rows"].median), "-"],
    ]
    print(
        f"{args.sessions} sessions, {args.messages} messages each, {size / 1e6:.1f} MB, median of {args.repeat}"
    )
    print(table(rows, ["listing", "median", "vs baseline"]))
    write_results(
        "session-list",
        {
            "sessions": args.sessions,
            "messages": args.messages,
            "bytes": size,
            **{name: sample.to_json() for name, sample in samples.items()},
        },
    )


if __name__ == "__main__":
    main()
