from __future__ import annotations

from pathlib import Path

import pytest

from pi_context.errors import SessionError, SessionLockedError
from pi_context.session._file.writer import SessionFile, atomic_write


def test_lock_timeout_zero_fails_at_once(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"x\n")
    first, second = SessionFile(path), SessionFile(path)
    with first.locked(None) as size:
        assert size == 2
        with pytest.raises(SessionLockedError), second.locked(0):
            pass
    with second.locked(0):
        pass
    first.close()
    second.close()


def test_replaced_file_is_detected(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"old\n")
    handle = SessionFile(path)
    atomic_write(path, b"new\n")
    with pytest.raises(SessionError, match="replaced"), handle.locked(0):
        pass
    handle.close()
    assert path.read_bytes() == b"new\n"


def test_append_and_newline_probe(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"abc")
    handle = SessionFile(path)
    with handle.locked(1) as size:
        assert not handle.ends_with_newline(size)
        assert handle.append(b"\n1\n") == 3
        assert handle.read_from(0, size + 3) == b"abc\n1\n"
    handle.close()


def test_create_is_exclusive(tmp_path: Path) -> None:
    path = tmp_path / "f"
    SessionFile(path, create=True).close()
    with pytest.raises(SessionError, match="already exists"):
        SessionFile(path, create=True)
