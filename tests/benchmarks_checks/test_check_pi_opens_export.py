"""The verdicts of ``benchmarks/check_pi_opens_export.py`` (pi 1.6.0 on what the stores export),
on made-up runs: the check itself needs pi, which the suite does not install."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from benchmarks.check_pi_opens_export import PiRun, Row, in_dir, judge, normalized

HEADER: dict[str, Any] = {
    "type": "session",
    "version": 3,
    "id": "s1",
    "timestamp": "2025-01-15T09:00:00.000Z",
}
OLD: list[dict[str, Any]] = [
    HEADER,
    {"type": "message", "id": "u1", "parentId": None, "message": {"role": "user", "content": "hi"}},
]
REQUEST = [{"path": "/v1/chat/completions", "body": {"messages": [{"role": "user"}]}}]


def _file(entries: list[dict[str, Any]]) -> bytes:
    """Lines as pi writes them: compact JSON."""
    return b"".join(json.dumps(e, separators=(",", ":")).encode() + b"\n" for e in entries)


def _appended(first: str, second: str, when: str) -> list[dict[str, Any]]:
    """What pi appends for one prompt: the user message and the answer, ids and times its own."""
    return [
        {"type": "message", "id": first, "parentId": "u1", "timestamp": when,
         "message": {"role": "user", "content": "more", "timestamp": 1}},
        {"type": "message", "id": second, "parentId": first, "timestamp": when,
         "message": {"role": "assistant", "content": "ok", "durationMs": 7}},
    ]  # fmt: skip


def _run(before: bytes, after: bytes, **changes: Any) -> PiRun:
    fields: dict[str, Any] = {"code": 0, "stderr": "", "requests": REQUEST}
    fields.update(changes)
    return PiRun(before=before, after=after, **fields)


REFERENCE = _run(_file(OLD), _file([*OLD, *_appended("aaaa1111", "bbbb2222", "2026-01-01")]))


def _judged(run: PiRun, *, legacy: bool = False) -> Row:
    row = Row("s", "memory", same_bytes=True)
    judge(row, REFERENCE, run, legacy=legacy)
    return row


def test_a_run_like_the_originals_passes_whatever_ids_and_times_pi_drew() -> None:
    after = _file([*OLD, *_appended("cccc3333", "dddd4444", "2026-02-02")])
    row = _judged(_run(_file(OLD), after))
    assert (row.opened, row.same_request, row.appended, row.ok) == (True, True, True, True)
    assert row.notes == []


@pytest.mark.parametrize(
    ("changes", "verdict"),
    [
        ({"code": 1}, "opened"),
        ({"stderr": "Error: Session file is not a valid pi session"}, "opened"),
        ({"requests": []}, "same_request"),
        (
            {"requests": [{"path": "/v1/chat/completions", "body": {"messages": []}}]},
            "same_request",
        ),
    ],
)
def test_an_exit_a_complaint_or_another_request_fails_its_column(
    changes: dict[str, Any], verdict: str
) -> None:
    after = _file([*OLD, *_appended("cccc3333", "dddd4444", "2026-02-02")])
    row = _judged(_run(_file(OLD), after, **changes))
    assert not getattr(row, verdict)
    assert not row.ok
    assert row.notes


def test_other_lines_appended_or_a_changed_prefix_fail_appended() -> None:
    other = _appended("cccc3333", "dddd4444", "2026-02-02")
    other[1]["message"]["content"] = "something else"
    assert not _judged(_run(_file(OLD), _file([*OLD, *other]))).appended
    # the same appended lines, but pi rewrote the file's earlier bytes
    same = _appended("cccc3333", "dddd4444", "2026-02-02")
    rewritten = _file(OLD).replace(b'"id":"s1",', b'"id": "s1",') + _file(same)
    assert not _judged(_run(_file(OLD), rewritten)).appended
    # ... which is what pi does to a v1/v2 file (it migrates it): then the lines are compared
    assert not _judged(_run(_file(OLD), _file(OLD))).appended  # nothing appended


def test_a_migrated_legacy_file_passes_when_its_lines_are_the_originals() -> None:
    legacy_before = _file(OLD).replace(b'"version":3', b'"version":2')
    reference = _run(legacy_before, REFERENCE.after)
    run = _run(legacy_before, _file([*OLD, *_appended("cccc3333", "dddd4444", "2026-02-02")]))
    row = Row("s", "file", same_bytes=True)
    judge(row, reference, run, legacy=True)
    assert row.appended
    judge(row := Row("s", "file"), reference, run, legacy=False)
    assert not row.appended


def test_normalized_masks_ids_and_times_but_not_content() -> None:
    one = _file([*OLD, *_appended("aaaa1111", "bbbb2222", "2026-01-01")])
    two = _file([*OLD, *_appended("eeee5555", "ffff6666", "2027-03-03")])
    assert normalized(one) == normalized(two)
    assert '"id":"#2"' in normalized(one)[2]
    assert normalized(one) != normalized(one.replace(b'"ok"', b'"no"'))


def test_in_dir_runs_in_place_or_in_a_private_mount(tmp_path: Path) -> None:
    assert in_dir(str(tmp_path), []) == []
    missing = tmp_path / "gone" / "project"
    prefix = in_dir(str(missing), [])
    assert prefix[-2:] == [str(tmp_path), str(missing)]  # tmpfs over the nearest existing parent
    assert "--mount" in prefix
    with pytest.raises(SystemExit, match="would hide"):
        in_dir(str(missing), [tmp_path / "home"])
