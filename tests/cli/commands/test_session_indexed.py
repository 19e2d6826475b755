"""``pictx session info|tree|context`` print the same through the column index as through a
fully loaded session, on every test session and on hostile variants of them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from pi_context.cli.main import cli
from pi_context.session._index.file_index import ColumnIndex

ROOT = Path(__file__).resolve().parents[3]
FIXTURES = sorted(
    [*(ROOT / "tests" / "data").rglob("*.jsonl"), ROOT / "examples" / "session.jsonl"]
)

COMMANDS = [
    ["session", "info"],
    ["session", "info", "--json"],
    ["session", "tree"],
    ["session", "context"],
    ["session", "context", "--json"],
    ["session", "info", "--strict"],
    ["session", "context", "--leaf", "nope"],
]


def _outcome(args: list[str]) -> tuple[int, str, str, str]:
    result = CliRunner().invoke(cli, args)
    return result.exit_code, result.stdout, result.stderr, repr(result.exception)


def _both(args: list[str], monkeypatch: pytest.MonkeyPatch) -> tuple[object, object]:
    indexed = _outcome(args)
    with monkeypatch.context() as patch:
        patch.setattr(ColumnIndex, "open", classmethod(lambda cls, path, **_: None))
        loaded = _outcome(args)
    return indexed, loaded


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().split(b"\n")


def _hostile(source: Path, folder: Path) -> list[Path]:
    """Variants of a session file that the column index must hand to the full loader, or
    read exactly as it does."""
    lines = [line for line in _lines(source) if line.strip()]
    out: list[Path] = []

    def write(name: str, body: list[bytes], end: bytes = b"\n") -> None:
        path = folder / f"{source.stem}-{name}.jsonl"
        path.write_bytes(b"\n".join(body) + end)
        out.append(path)

    write("torn", [*lines, lines[-1][: len(lines[-1]) // 2]], b"")
    write("blank-crlf", [b"", *(line + b"\r" for line in lines), b"   "])
    write("garbage", [lines[0], b"[1, 2]", *lines[1:], b"not json"])
    if len(lines) > 2:
        write("duplicate", [*lines, lines[1]])
        write("reversed", [lines[0], *reversed(lines[1:])])
        entry = json.loads(lines[-1])
        entry["message"] = {"role": "assistant", "content": 5, "provider": 5}
        write("typed", [*lines, json.dumps(entry).encode()])
        last = json.loads(lines[-1])
        labels = [
            {
                "type": "label",
                "id": "lab00001",
                "parentId": last.get("id"),
                "timestamp": "x",
                "targetId": last.get("id"),
                "label": "\x1b]52;c;aGk=\x07 mark",
            },
            {
                "type": "session_info",
                "id": "inf00001",
                "parentId": "lab00001",
                "timestamp": "x",
                "name": "  a\r\nname ",
            },
            {
                "type": "custom",
                "customType": "ext",
                "data": {"a": 1},
                "id": "cus00001",
                "parentId": "inf00001",
                "timestamp": "x",
            },
            {
                "type": "message",
                "id": "dep00001",
                "parentId": "cus00001",
                "timestamp": "x",
                "message": {
                    "role": "user",
                    "content": [{"type": "text", "text": "deep"}],
                    "deep": json.loads("[" * 600 + "]" * 600),
                },
            },
        ]
        write("extras", [*lines, *(json.dumps(e).encode() for e in labels[:3])])
        write("deep", [*lines, *(json.dumps(e).encode() for e in labels)])
        branch = json.loads(lines[1])
        branch["id"] = "bra00001"
        write("branch", [*lines, json.dumps(branch).encode()])
        write("no-newline", lines, b"")
        header = json.loads(lines[0])
        header["version"] = 4
        write("future-version", [json.dumps(header).encode(), *lines[1:]])
    return out


HOSTILE_SOURCES = [
    ROOT / "examples" / "session.jsonl",
    ROOT / "tests" / "data" / "conformance" / "sessions" / "small" / "branched.jsonl",
    ROOT / "tests" / "data" / "conformance" / "sessions" / "small" / "compaction_multi.jsonl",
]


@pytest.mark.parametrize("source", FIXTURES, ids=lambda p: p.stem)
def test_same_output_both_ways(source: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if source.stem == "legacy_v1" or not source.stat().st_size:
        # migration and an empty file's new header draw fresh ids each load: never indexed
        assert ColumnIndex.open(source) is None
        return
    for command in COMMANDS:
        args = [*command[:2], str(source), *command[2:]]
        indexed, loaded = _both(args, monkeypatch)
        assert indexed == loaded, command


@pytest.mark.parametrize("source", HOSTILE_SOURCES, ids=lambda p: p.stem)
def test_same_output_on_hostile_variants(
    source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for path in _hostile(source, tmp_path):
        for command in COMMANDS[1:5]:
            args = [*command[:2], str(path), *command[2:]]
            indexed, loaded = _both(args, monkeypatch)
            assert indexed == loaded, (path.name, command)


def _indexable(path: Path) -> bool:
    index = ColumnIndex.open(path)
    if index is None:
        return False
    index.close()
    return True


def test_the_index_is_used_for_ordinary_files() -> None:
    """Most test sessions are ordinary: the comparison above covers the indexed path."""
    indexed = [p for p in FIXTURES if _indexable(p)]
    assert len(indexed) >= len(FIXTURES) // 2


def test_leaf_option_through_the_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = ROOT / "tests" / "data" / "conformance" / "sessions" / "small" / "branched.jsonl"
    assert ColumnIndex.open(source) is not None
    for leaf in ("87addaeb", "nope"):
        args = ["session", "context", str(source), "--leaf", leaf, "--json"]
        indexed, loaded = _both(args, monkeypatch)
        assert indexed == loaded
