"""Building the column index in two processes: a forked helper indexes the second half of the
file, and the joined index must be the one a single process builds, or both must leave the
file to the full loader."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from pi_context.session._index import build
from pi_context.session._index.file_index import ColumnIndex
from tests.session.conftest import DATA
from tests.session.helpers import message_line

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "session.jsonl"


@pytest.fixture
def helpers(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Split every file (however small) and count the helpers started."""
    started: list[int] = []
    start = build.Helper.start.__func__  # type: ignore[attr-defined]

    def counting(cls: type, *args: Any) -> build.Helper | None:
        helper = start(cls, *args)
        if helper is not None:
            started.append(helper._pid)
        return helper  # type: ignore[no-any-return]

    monkeypatch.setattr(build, "PARALLEL_SIZE", 0)
    monkeypatch.setattr(build, "can_fork", lambda: True)
    monkeypatch.setattr(build.Helper, "start", classmethod(counting))
    return started


def _columns(index: ColumnIndex | None) -> object:
    """Everything the index holds, in a form two indexes compare by."""
    if index is None:
        return None
    with index:
        return (
            list(index.offsets),
            list(index.lengths),
            list(index.line_numbers),
            list(index.parents),
            [index.type_of(p) for p in range(len(index))],
            [index.role_at(p) for p in range(len(index))],
            index.positions,
            dict(index.kinds),
            index.labels,
            index.name,
            index.header,
        )


def _both(path: Path) -> tuple[object, object]:
    whole = _columns(ColumnIndex.open(path))
    split = _columns(ColumnIndex.open(path, parallel=True))
    return whole, split


def _reaped(pids: list[int]) -> bool:
    for pid in pids:
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            continue
        return False  # still a child of this process: not reaped
    return True


def test_a_split_index_equals_the_whole_on_every_test_session(helpers: list[int]) -> None:
    sources = [*sorted(DATA.rglob("*.jsonl")), EXAMPLE]
    indexed = 0
    for source in sources:
        whole, split = _both(source)
        assert split == whole, source
        indexed += whole is not None
    assert indexed >= len(sources) // 2
    assert len(helpers) >= indexed  # each indexable file was split
    assert _reaped(helpers)


def _label(entry_id: str, parent: str, target: str, label: str | None) -> dict[str, Any]:
    entry = {"type": "label", "id": entry_id, "parentId": parent, "timestamp": "t"}
    entry["targetId"] = target
    if label is not None:
        entry["label"] = label
    return entry


def _name(entry_id: str, parent: str, name: str) -> dict[str, Any]:
    return {"type": "session_info", "id": entry_id, "parentId": parent, "timestamp": "t"} | {
        "name": name
    }


def _write(path: Path, first: list[dict[str, Any]], second: list[dict[str, Any]]) -> Path:
    """A session whose second half (after the split point) is exactly ``second``: the first
    half is padded so that its middle falls inside its own last line."""
    header = {"type": "session", "version": 3, "id": "s1", "timestamp": "t", "cwd": "/"}
    head = "".join(json.dumps(e) + "\n" for e in [header, *first])
    tail = "".join(json.dumps(e) + "\n" for e in second)
    pad = message_line("pad", first[-1]["id"] if first else None, "p" * (len(tail) + 100))
    path.write_text(head + json.dumps(pad) + "\n" + tail)
    size = path.stat().st_size
    with path.open("rb") as file:
        assert build.split_point(file.fileno(), size) == size - len(tail.encode())
    return path


def test_parents_labels_and_names_across_the_split(tmp_path: Path, helpers: list[int]) -> None:
    first = [
        message_line("a", None),
        _label("l1", "a", "a", "first"),
        _name("n1", "l1", "early"),
        message_line("b", "n1"),
    ]
    second = [
        message_line("c", "pad"),  # its parent in the first half
        message_line("d", "a"),  # a branch from the first half
        message_line("e", "c"),  # its parent in the second half
        _label("l2", "e", "a", "second"),
        _label("l3", "l2", "b", None),
        message_line("f", "f"),  # its own parent: a root
        _name("n2", "l3", "late"),
    ]
    path = _write(tmp_path / "s.jsonl", first, second)
    whole, split = _both(path)
    assert split == whole
    assert len(helpers) == 1
    index = ColumnIndex.open(path, parallel=True)
    assert index is not None
    with index:
        parent = {
            entry_id: (None if index.parents[p] < 0 else index.entry(index.parents[p]).id)
            for entry_id, p in index.positions.items()
        }
        assert [parent[i] for i in "cdef"] == ["pad", "a", "c", None]
        assert index.labels == {"a": "second"}
        assert index.name == "late"
        assert [index.line_numbers[index.positions[i]] for i in ("c", "n2")] == [7, 13]
    assert _reaped(helpers)


@pytest.mark.parametrize(
    "second",
    [
        [message_line("a", "pad")],  # an id of the first half again
        [message_line("c", "z"), message_line("z", "pad")],  # a parent that comes later
        [message_line("c", "nowhere")],  # a parent that is nowhere
        [
            message_line("c", "pad"),
            message_line("c", "pad"),
        ],  # a duplicate within the helper's half
    ],
    ids=["duplicate-across", "later-parent", "missing-parent", "duplicate-within"],
)
def test_what_one_process_refuses_the_split_refuses(
    tmp_path: Path, helpers: list[int], second: list[dict[str, Any]]
) -> None:
    path = _write(tmp_path / "s.jsonl", [message_line("a", None)], second)
    assert _both(path) == (None, None)
    assert len(helpers) == 1
    assert _reaped(helpers)


def test_a_bad_line_in_the_second_half_goes_to_the_full_loader(
    tmp_path: Path, helpers: list[int]
) -> None:
    path = _write(tmp_path / "s.jsonl", [message_line("a", None)], [message_line("c", "pad")])
    with path.open("ab") as file:
        file.write(b'{"type":"message","id":"torn"')
    assert ColumnIndex.open(path, parallel=True) is None
    assert len(helpers) == 1
    assert _reaped(helpers)


def test_a_helper_that_dies_sends_the_file_to_the_full_loader(
    tmp_path: Path, helpers: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    def crash(*_: object) -> None:
        os._exit(3)

    monkeypatch.setattr(build, "_run_helper", crash)
    path = _write(tmp_path / "s.jsonl", [message_line("a", None)], [message_line("c", "pad")])
    assert ColumnIndex.open(path, parallel=True) is None
    assert ColumnIndex.open(path) is not None  # the single process indexes it
    assert _reaped(helpers)


def test_an_error_before_the_join_ends_the_helper(tmp_path: Path, helpers: list[int]) -> None:
    path = _write(tmp_path / "s.jsonl", [message_line("a", None)], [message_line("c", "pad")])
    path.write_bytes(path.read_bytes().replace(b'"version": 3', b'"version": 2', 1))
    assert ColumnIndex.open(path, parallel=True) is None
    assert len(helpers) == 1
    assert _reaped(helpers)


def test_small_files_and_threaded_callers_are_not_split(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = EXAMPLE
    size = path.stat().st_size
    with path.open("rb") as file:
        assert build.split_point(file.fileno(), size) == size  # under PARALLEL_SIZE
    monkeypatch.setattr(build, "PARALLEL_SIZE", 0)
    # a process of one thread may fork where there is a second CPU; asked in a fresh one, not
    # in this test process, which may still hold threads that earlier tests started
    fresh = subprocess.run(
        [
            sys.executable,
            "-c",
            "from pi_context.session._index import build; print(build.can_fork())",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert fresh.stdout.strip() == str(len(os.sched_getaffinity(0)) > 1)
    with path.open("rb") as file:
        split = build.split_point(file.fileno(), size)
    assert (split < size) == build.can_fork()
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert not build.can_fork()  # a fork would copy this thread's locks half-held
        with path.open("rb") as file:
            assert build.split_point(file.fileno(), size) == size
    finally:
        stop.set()
        thread.join()


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.parametrize("refused", ["pipe", "fork"])
def test_no_helper_to_be_had_means_one_process_reads_it_all(
    tmp_path: Path, helpers: list[int], monkeypatch: pytest.MonkeyPatch, refused: str
) -> None:
    def refuse(*_: object) -> None:
        raise BlockingIOError(11, "Resource temporarily unavailable")

    path = _write(tmp_path / "s.jsonl", [message_line("a", None)], [message_line("c", "pad")])
    whole = _columns(ColumnIndex.open(path))
    before = _open_fds()
    monkeypatch.setattr(os, refused, refuse)
    assert _columns(ColumnIndex.open(path, parallel=True)) == whole
    assert _open_fds() == before
    assert helpers == []


def test_a_helper_reaped_by_the_system_is_no_error(tmp_path: Path, helpers: list[int]) -> None:
    # a parent process may leave SIGCHLD ignored: the system then reaps the helper itself
    path = _write(tmp_path / "s.jsonl", [message_line("a", None)], [message_line("c", "pad")])
    whole = _columns(ColumnIndex.open(path))
    previous = signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    try:
        assert _columns(ColumnIndex.open(path, parallel=True)) == whole
    finally:
        signal.signal(signal.SIGCHLD, previous)
    assert len(helpers) == 1


def test_starting_a_helper_leaves_the_signal_mask_as_it_was(
    tmp_path: Path, helpers: list[int]
) -> None:
    path = _write(tmp_path / "s.jsonl", [message_line("a", None)], [message_line("c", "pad")])
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, [])
    index = ColumnIndex.open(path, parallel=True)
    assert index is not None
    index.close()
    assert signal.pthread_sigmask(signal.SIG_BLOCK, []) == mask
    assert len(helpers) == 1
