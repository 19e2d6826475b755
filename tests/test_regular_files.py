"""The one rule for opening regular files (session files and the tools' files)."""

from __future__ import annotations

import os
import socket
import stat
from pathlib import Path

import pytest

from pi_context._regular_files import file_kind, open_regular_fd
from pi_context.session._file.opening import NotRegularFileError, open_regular
from pi_context.tools.file_access import not_regular_message


class Refused(Exception):
    pass


def _refuse(mode: int) -> Refused:
    return Refused(file_kind(mode))


@pytest.mark.parametrize(
    ("mode", "words"),
    [
        (stat.S_IFREG, "a regular file"),
        (stat.S_IFDIR, "a directory"),
        (stat.S_IFIFO, "a named pipe (FIFO)"),
        (stat.S_IFCHR, "a character device"),
        (stat.S_IFBLK, "a block device"),
        (stat.S_IFSOCK, "a socket"),
    ],
)
def test_one_wording_for_every_kind(mode: int, words: str) -> None:
    assert file_kind(mode) == words


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for flags in (os.O_RDONLY, os.O_WRONLY):
        with pytest.raises(Refused, match=r"^a named pipe \(FIFO\)$"):
            open_regular_fd(fifo, flags, _refuse)


def test_sockets_devices_and_directories_are_refused(tmp_path: Path) -> None:
    sock_path = tmp_path / "sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(sock_path))
    try:
        for path, words in (
            (sock_path, "a socket"),
            (Path("/dev/zero"), "a character device"),
            (tmp_path, "a directory"),
        ):
            with pytest.raises(Refused, match=f"^{words}$"):
                open_regular_fd(path, os.O_RDONLY, _refuse)
    finally:
        server.close()


def test_a_regular_file_opens_blocking_and_is_created_when_asked(tmp_path: Path) -> None:
    path = tmp_path / "new.txt"
    fd, info = open_regular_fd(path, os.O_WRONLY | os.O_CREAT, _refuse, create_mode=0o600)
    try:
        assert stat.S_ISREG(info.st_mode)
        assert os.get_blocking(fd)
        os.write(fd, b"abc")
    finally:
        os.close(fd)
    assert path.read_bytes() == b"abc"
    with pytest.raises(FileNotFoundError):
        open_regular_fd(tmp_path / "missing", os.O_RDONLY, _refuse)


def test_sessions_and_tools_name_the_kind_the_same_way(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(NotRegularFileError) as caught, open_regular(fifo):
        pass
    words = file_kind(stat.S_IFIFO)
    assert f"{words}, not a regular file" in str(caught.value)
    assert f"it is {words}, not a regular file" in not_regular_message("read", fifo, stat.S_IFIFO)
