"""Slash-command parsing and the /tree listing."""

from __future__ import annotations

from pathlib import Path

from pi_context.cli.interactive.slash.commands import command_names, parse_slash, tree_rows
from pi_context.export import SessionDocument
from tests.export import sessions


def test_parse_slash() -> None:
    assert parse_slash("  /compact keep the API notes  ") == ("compact", "keep the API notes")
    assert parse_slash("/tree") == ("tree", "")
    assert parse_slash("/skill:greet the team") == ("skill", "skill:greet the team")
    assert parse_slash("hello /compact") is None
    assert parse_slash("/") is None


def test_every_issue_command_exists() -> None:
    wanted = {"compact", "tree", "reload", "export", "session", "model", "name", "label"}
    wanted |= {"new", "resume", "fork", "help", "quit"}
    assert {name[1:] for name in command_names()} >= wanted


def test_tree_rows_mark_path_leaf_labels_and_hide_metadata(tmp_path: Path) -> None:
    doc = SessionDocument.load(sessions.write(tmp_path / "s.jsonl"))
    rows = dict(tree_rows(doc))
    assert "a0000001" not in rows  # system prompt entries are not navigation targets
    assert "a000000a" not in rows  # label entries neither
    assert rows["a0000002"].startswith("● a0000002 user [start-here]: Please list")
    assert rows["a000000c"].lstrip().startswith("◉ a000000c assistant")
    assert rows["b0000001"].startswith("  ○ b0000001 user")
