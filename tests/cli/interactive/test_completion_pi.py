"""``@`` lists, Tab completions and the word being completed agree with pi 1.6.0's editor on
the comparison world (pi's answers recorded by :mod:`.record_pi_completion`): the same
entries in the same order, the same values, names and paths, the same line after choosing the
first entry. The one recorded difference: a quoted directory is inserted without its closing
quote (pi inserts it and leaves the cursor before it)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

from pi_context.cli.interactive.completion import EditorCompleter, at_prefix, path_prefix
from tests.cli.interactive.completion_world import AT_QUERIES, TAB_PREFIXES, TEXTS, build_world

PI = json.loads(
    (Path(__file__).parents[2] / "data" / "completion" / "pi-1.6.0.json").read_text("utf-8")
)


class _NoCommands(Completer):
    def get_completions(
        self, document: Document, complete_event: CompleteEvent
    ) -> Iterable[Completion]:
        return iter(())


@pytest.fixture
def completer(tmp_path: Path) -> EditorCompleter:
    root = build_world(tmp_path / "world")
    return EditorCompleter(_NoCommands(), lambda: root)


def _pi_value(value: str, label: str) -> str:
    """pi's value with a quoted directory's closing quote left off (pictx's one difference)."""
    return value[:-1] if label.endswith("/") and value.endswith('"') else value


def _ours(completer: EditorCompleter, text: str, *, tab: bool) -> dict[str, Any]:
    event = CompleteEvent(completion_requested=tab, text_inserted=not tab)
    found = list(completer.get_completions(Document(text), event))
    items = [[c.text.rstrip(" "), c.display_text, c.display_meta_text] for c in found]
    applied = None
    if found:
        line = text[: len(text) + found[0].start_position] + found[0].text
        applied = [line, len(line)]
    return {"items": items, "applied": applied}


def _theirs(recorded: dict[str, Any]) -> dict[str, Any]:
    items = [[_pi_value(v, label), label, meta] for v, label, meta in recorded["items"]]
    applied = recorded["applied"]
    if applied is not None and items:
        first_label = recorded["items"][0][1]
        line, cursor = applied
        if first_label.endswith("/") and line.endswith('"'):  # cursor was before the quote
            line = line[:-1]
        applied = [line, cursor]
    return {"items": items, "applied": applied}


@pytest.mark.parametrize("query", AT_QUERIES)
def test_the_at_list_matches_pi(completer: EditorCompleter, query: str) -> None:
    assert _ours(completer, query, tab=False) == _theirs(PI["at"][query])


@pytest.mark.parametrize("prefix", TAB_PREFIXES)
def test_tab_matches_pi(completer: EditorCompleter, prefix: str) -> None:
    assert _ours(completer, prefix, tab=True) == _theirs(PI["tab"][prefix])


@pytest.mark.parametrize("text", TEXTS)
def test_the_completed_word_matches_pi(text: str) -> None:
    assert [at_prefix(text), path_prefix(text)] == PI["words"][text]


def test_the_recording_covers_every_input() -> None:
    assert set(PI["at"]) == set(AT_QUERIES)
    assert set(PI["tab"]) == set(TAB_PREFIXES)
    assert set(PI["words"]) == set(TEXTS)
