"""Reading sessions for export: tree, path, labels, replaced ranges."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pi_context.errors import SessionError, SessionFormatError
from pi_context.export import SessionDocument, export_html, export_jsonl
from pi_context.export.document import PREVIEW_WIDTH, entry_preview
from tests.export import sessions

DATA = Path(__file__).parents[1] / "data" / "conformance" / "sessions" / "small"


def test_active_path_and_labels(tmp_path: Path) -> None:
    doc = SessionDocument.load(sessions.write(tmp_path / "s.jsonl"))
    assert doc.leaf_id == "a000000c"
    ids = [e["id"] for e in doc.active_path]
    assert "b0000001" not in ids
    assert ids[:5] == ["a0000001", "a0000002", "a0000003", "a0000004", "a0000005"]
    assert doc.labels() == {"a0000002": "start-here"}


def test_preorder_indents_only_at_branch_points(tmp_path: Path) -> None:
    doc = SessionDocument.load(sessions.write(tmp_path / "s.jsonl"))
    depth = {e["id"]: d for e, d in doc.preorder()}
    assert len(depth) == len(doc.entries)
    assert depth["a0000002"] == depth["a0000005"] == 0
    assert depth["b0000001"] == depth["b0000002"] == depth["a0000006"] == depth["a000000c"] == 1


def test_replaced_range_of_a_compaction(tmp_path: Path) -> None:
    doc = SessionDocument.load(sessions.write(tmp_path / "s.jsonl"))
    path = doc.active_path
    start, end = doc.replaced_ranges(path)["a0000009"]
    assert [e["id"] for e in path[start:end]] == [
        "a0000001",
        "a0000002",
        "a0000003",
        "a0000004",
        "a0000005",
        "a0000006",
    ]


def test_replaced_ranges_chain_across_compactions() -> None:
    doc = SessionDocument.load(DATA / "compaction_multi.jsonl")
    path = doc.active_path
    ranges = doc.replaced_ranges(path)
    spans = sorted(ranges.values())
    assert spans[0][0] == 0
    for (_, end), (start, _) in itertools.pairwise(spans):
        assert end == start
    for cid, (_, end) in ranges.items():
        kept = doc.by_id[cid]["firstKeptEntryId"]
        assert path[end]["id"] == kept


def test_retain_none_compaction_replaces_everything_before_it() -> None:
    doc = SessionDocument.from_entries(
        sessions.HEADER,
        [
            {
                "type": "message",
                "id": "1",
                "parentId": None,
                "message": {"role": "user", "content": "x"},
            },
            {
                "type": "compaction",
                "id": "2",
                "parentId": "1",
                "summary": "s",
                "firstKeptEntryId": "2",
            },
        ],
        "2",
    )
    assert doc.replaced_ranges(doc.active_path) == {"2": (0, 1)}


def test_parent_cycle_does_not_hang() -> None:
    doc = SessionDocument.from_entries(
        sessions.HEADER,
        [
            {"type": "label", "id": "x", "parentId": "y"},
            {"type": "label", "id": "y", "parentId": "x"},
        ],
        "y",
    )
    assert [e["id"] for e in doc.active_path] == ["x", "y"]
    assert sorted(e["id"] for e, _ in doc.preorder()) == ["x", "y"]


def test_invalid_files_name_the_file(tmp_path: Path) -> None:
    with pytest.raises(SessionFormatError, match=r"tiny_no_header\.jsonl:1"):
        SessionDocument.load(DATA / "tiny_no_header.jsonl")
    with pytest.raises(SessionFormatError, match=r"missing\.jsonl"):
        SessionDocument.load(tmp_path / "missing.jsonl")


def test_legacy_v1_entries_without_ids_are_chained() -> None:
    doc = SessionDocument.load(DATA / "legacy_v1.jsonl")
    assert len(doc.active_path) == len(doc.entries)


def test_system_prompt_at_the_leaf_follows_the_projection() -> None:
    from pi_context.export.html import replay_system_prompt

    def system(eid: str, parent: str | None, sections: dict[str, str | None]) -> dict[str, Any]:
        message = {"role": "system", "content": "", "sections": sections, "timestamp": 1}
        return {"type": "message", "id": eid, "parentId": parent, "message": message}

    snapshot = {
        "role": "system",
        "content": "",
        "sections": {"preamble": "SNAPSHOT"},
        "timestamp": 2,
    }
    entries: list[dict[str, Any]] = [
        system("1", None, {"preamble": "OLD"}),
        {
            "type": "message",
            "id": "2",
            "parentId": "1",
            "message": {"role": "user", "content": "x"},
        },
        {
            "type": "compaction",
            "id": "3",
            "parentId": "2",
            "summary": "s",
            "firstKeptEntryId": "2",
            "systemMessage": snapshot,
        },
        system("4", "3", {"extra": "<extra>\nNEW\n</extra>"}),
    ]
    doc = SessionDocument.from_entries(sessions.HEADER, entries, "4")
    state = replay_system_prompt(doc.active_path)
    assert state.text == "SNAPSHOT\n\n<extra>\nNEW\n</extra>"
    before = replay_system_prompt(doc.path_to("2"))
    assert before.text == "OLD"


def _message(role: str, **fields: Any) -> dict[str, Any]:
    return {"type": "message", "id": "m", "message": {"role": role, **fields}}


@pytest.mark.parametrize(
    ("entry", "preview"),
    [
        (
            _message("assistant", content=[{"type": "toolCall", "name": "bash", "arguments": {}}]),
            "→ bash",
        ),
        (
            _message("toolResult", toolName="read", content=[{"type": "text", "text": "a\n b"}]),
            "read: a b",
        ),
        (_message("system", content="", sections={"preamble": "", "cwd": ""}), "preamble, cwd"),
        (
            {
                "type": "compaction",
                "firstKeptEntryId": "k",
                "tokensBefore": 900,
                "summary": "## Goal\nfix it",
            },
            "keeps from k, 900 tokens before: ## Goal fix it",
        ),
        ({"type": "context_edit", "targetId": "t", "replacement": None}, "omit t"),
        ({"type": "label", "targetId": "t", "label": None}, "t: (cleared)"),
        ({"type": "something_new"}, ""),
    ],
)
def test_entry_preview_says_what_an_entry_holds(entry: dict[str, Any], preview: str) -> None:
    assert entry_preview(entry) == preview


def test_entry_preview_is_one_bounded_line() -> None:
    text = "word " * 100
    preview = entry_preview(_message("user", content=text))
    assert "\n" not in preview
    assert len(preview) <= PREVIEW_WIDTH
    assert preview.endswith("…")
    called = entry_preview(
        _message(
            "assistant",
            content=[{"type": "text", "text": text}, {"type": "toolCall", "name": "edit"}],
        )
    )
    assert called.endswith("… → edit")  # the long text is cut, the tool calls stay


@pytest.mark.parametrize("writer", [export_html, export_jsonl])
def test_the_writers_create_no_directory(
    tmp_path: Path, writer: Callable[[SessionDocument, Path], Path]
) -> None:
    """Like ``open()``: a mistyped folder is an error naming the file, not a new folder."""
    doc = SessionDocument.load(sessions.write(tmp_path / "s.jsonl"))
    target = tmp_path / "no-such-dir" / "out.file"
    with pytest.raises(SessionError, match="no-such-dir") as caught:
        writer(doc, target)
    assert caught.value.path == str(target)
    assert not (tmp_path / "no-such-dir").exists()
