"""docs/pi-docs-audit.md: its totals are its rows' statuses, so the counts cannot drift.

The audit lists every feature of pi 1.6.0's documentation in tables headed
``| feature | status | pictx |``; the ``## Totals`` table at the top counts them by status.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

AUDIT = Path(__file__).resolve().parent.parent / "docs" / "pi-docs-audit.md"
STATUSES = ("present", "partial", "absent", "n/a")
FEATURE_HEADER = ("feature", "status", "pictx")
_CELL_SPLIT = re.compile(r"(?<!\\)\|")


def _cells(line: str) -> list[str] | None:
    """A table row's cells (``\\|`` inside a cell is text), or ``None`` for other lines."""
    text = line.strip()
    if not (text.startswith("|") and text.endswith("|")):
        return None
    return [cell.strip() for cell in _CELL_SPLIT.split(text[1:-1])]


def _is_rule(cells: list[str]) -> bool:
    return all(re.fullmatch(r":?-{3,}:?", cell) for cell in cells)


def feature_rows(text: str) -> list[tuple[int, list[str]]]:
    """``(line number, cells)`` of every row of every feature table."""
    rows: list[tuple[int, list[str]]] = []
    in_table = False
    for number, line in enumerate(text.splitlines(), 1):
        cells = _cells(line)
        if cells is None:
            in_table = False
        elif tuple(cells) == FEATURE_HEADER:
            in_table = True
        elif in_table and not _is_rule(cells):
            rows.append((number, cells))
    return rows


def totals(text: str) -> dict[str, int]:
    """The ``## Totals`` table: status (and ``all``) to count."""
    section = text.split("\n## Totals\n", 1)[1].split("\n## ", 1)[0]
    found: dict[str, int] = {}
    for line in section.splitlines():
        cells = _cells(line)
        if cells is not None and len(cells) == 2 and cells[1].isdigit():
            found[cells[0]] = int(cells[1])
    return found


@pytest.fixture(scope="module")
def text() -> str:
    return AUDIT.read_text(encoding="utf-8")


def test_every_row_has_a_feature_a_known_status_and_a_note(text: str) -> None:
    rows = feature_rows(text)
    assert len(rows) > 300
    bad = [
        f"line {number}: {cells}"
        for number, cells in rows
        if len(cells) != 3 or not cells[0] or cells[1] not in STATUSES or not cells[2]
    ]
    assert bad == []


def test_the_totals_are_the_rows_statuses(text: str) -> None:
    counted = Counter(cells[1] for _, cells in feature_rows(text))
    stated = totals(text)
    assert set(stated) == {*STATUSES, "all"}
    expected = {status: counted[status] for status in STATUSES}
    table = "".join(f"| {status} | {n} |\n" for status, n in expected.items())
    table += f"| all | {sum(counted.values())} |"
    message = f"the Totals table of docs/pi-docs-audit.md should read:\n{table}"
    assert {status: stated[status] for status in STATUSES} == expected, message
    assert stated["all"] == sum(counted.values()), message


def test_a_feature_is_listed_once_per_page(text: str) -> None:
    for page in text.split("\n## ")[1:]:
        names = [cells[0] for _, cells in feature_rows("\n" + page)]
        duplicates = sorted(name for name, n in Counter(names).items() if n > 1)
        assert duplicates == [], page.splitlines()[0]


def test_in_progress_rows_are_not_counted_present(text: str) -> None:
    """A feature another branch is building is recorded as it is here, for the integrator to
    flip when it lands."""
    early = [
        f"line {number}: {cells[0]}"
        for number, cells in feature_rows(text)
        if "(in progress:" in cells[2] and cells[1] == "present"
    ]
    assert early == []


def test_the_checks_fail_on_a_drifted_count(text: str) -> None:
    first_absent = next(cells[0] for _, cells in feature_rows(text) if cells[1] == "absent")
    row = f"| {first_absent} | absent |"
    drifted = text.replace(row, f"| {first_absent} | present |", 1)  # one row flipped
    assert drifted != text
    counted = Counter(cells[1] for _, cells in feature_rows(drifted))
    assert counted["present"] != totals(drifted)["present"]
