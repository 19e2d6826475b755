"""Session paths that are not regular files: FIFOs, devices, directories.

A FIFO used to hang ``pictx session info`` forever and ``/dev/zero`` grew memory until the
process died. Each is now refused before anything is read, with one line naming the file.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from pi_context import session_dirs
from pi_context.errors import SessionError
from pi_context.session import Session
from pi_context.session._file.opening import NotRegularFileError, open_regular, read_regular
from tests.hostile.helpers import assert_clean, entry, pictx_process, raw_user, write_session

pytestmark = pytest.mark.timeout(120)

COMMANDS = (("session", "info"), ("session", "tree"), ("session", "context"))


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "pipe.jsonl"
    os.mkfifo(path)
    return path


@pytest.fixture
def unix_socket(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "s.jsonl"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    yield path
    server.close()


def test_a_fifo_is_refused_before_reading(fifo: Path) -> None:
    with pytest.raises(NotRegularFileError, match=r"pipe\.jsonl: a named pipe \(FIFO\), not a"):
        Session.open(fifo)
    with pytest.raises(NotRegularFileError), open_regular(fifo):
        pass
    assert session_dirs.read_header(fifo) is None
    assert session_dirs.read_session_info(fifo) is None


def test_devices_directories_and_sockets_are_refused(tmp_path: Path, unix_socket: Path) -> None:
    for path, kind in (
        (Path("/dev/zero"), "a character device"),
        (tmp_path, "a directory"),
        (unix_socket, "a socket"),
    ):
        with pytest.raises(SessionError, match=kind):
            Session.open(path)
        with pytest.raises(NotRegularFileError, match=kind):
            read_regular(path)


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
@pytest.mark.parametrize("target", ["fifo", "zero", "directory"])
def test_inspection_commands_refuse_in_one_line(
    command: tuple[str, ...], target: str, fifo: Path, tmp_path: Path
) -> None:
    path = {"fifo": fifo, "zero": Path("/dev/zero"), "directory": tmp_path}[target]
    run = pictx_process(*command, str(path))
    assert_clean(run, code=1)
    assert len(run.stderr_lines) == 1
    assert run.stderr_lines[0].startswith(f"pictx: error: {path}: ")
    assert "not a regular file" in run.stderr


@pytest.mark.parametrize("target", ["fifo", "zero"])
def test_export_and_resume_refuse_a_fifo_or_device(target: str, fifo: Path, tmp_path: Path) -> None:
    path = fifo if target == "fifo" else Path("/dev/zero")
    out = tmp_path / "out.html"
    for args in (("--export", str(path), str(out)), ("--session", str(path), "-p", "hi")):
        run = pictx_process(*args, cwd=tmp_path)
        assert_clean(run, code=1)
        assert "not a regular file" in run.stderr
    assert not out.exists()


def test_continue_skips_a_fifo_among_sessions(tmp_path: Path) -> None:
    directory = tmp_path / "sessions"
    directory.mkdir()
    real = write_session(
        directory / "2026-01-05_real.jsonl", [entry("u1", None, message=raw_user("q"))]
    )
    os.utime(real, (1, 1))
    os.mkfifo(directory / "2026-01-06_pipe.jsonl")
    assert session_dirs.find_latest_session(directory) == real
    assert [info.path for info in session_dirs.list_sessions(directory)] == [real]


def test_reading_stops_at_the_size_the_file_had_when_opened(tmp_path: Path) -> None:
    path = write_session(tmp_path / "s.jsonl", [entry("u1", None, message=raw_user("q"))])
    size = path.stat().st_size
    with open_regular(path) as (_, opened_size):
        with path.open("ab") as grower:
            grower.write(b"x" * 10_000)
        assert opened_size == size
    assert len(read_regular(path, limit=5)) == 5
