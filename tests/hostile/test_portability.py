"""The session store where ``fcntl`` does not exist.

``session/_writer.py`` imported ``fcntl`` at module level, so ``import pi_context.session``
failed on Windows. Each case runs in a fresh interpreter where ``fcntl`` cannot be imported.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.hostile.helpers import SRC

pytestmark = pytest.mark.timeout(120)

_PRELUDE = f"""
import sys, types
sys.path.insert(0, {str(SRC)!r})
sys.modules["fcntl"] = None  # importing it now raises ImportError
import asyncio, subprocess  # before any fake msvcrt: they take its presence for Windows
"""

_STORE_ROUND_TRIP = """
from pi_context.session import Session
from pi_context.session._file.locking import lock_backend
path = sys.argv[1]
with Session.create(path, cwd="/w") as s:
    s.append_message({"role": "user", "content": "one", "timestamp": 1})
    s.append_message({"role": "user", "content": "two", "timestamp": 2})
    s.sync()
with Session.open(path) as s:
    s.append_message({"role": "user", "content": "three", "timestamp": 3})
    texts = [m["content"] for m in s.messages()]
print(lock_backend(), texts)
"""


def _run(path: Path, *parts: str) -> str:
    script = _PRELUDE + "".join(textwrap.dedent(part) for part in parts)
    done = subprocess.run(
        [sys.executable, "-c", script, str(path)],
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()
    return done.stdout.decode().strip()


def test_without_fcntl_or_msvcrt_the_store_works_unlocked(tmp_path: Path) -> None:
    out = _run(tmp_path / "s.jsonl", _STORE_ROUND_TRIP)
    assert out == "none ['one', 'two', 'three']"


def test_with_msvcrt_the_lock_byte_sits_past_the_end_and_is_released(tmp_path: Path) -> None:
    fake = """
    calls = []
    msvcrt = types.ModuleType("msvcrt")
    msvcrt.LK_NBLCK, msvcrt.LK_UNLCK = 2, 0
    import os
    def locking(fd, mode, nbytes):
        calls.append((mode, os.lseek(fd, 0, os.SEEK_CUR), nbytes))
    msvcrt.locking = locking
    sys.modules["msvcrt"] = msvcrt
    """
    check = """
    assert calls, calls
    modes = [mode for mode, _, _ in calls]
    assert modes == [2, 0] * (len(calls) // 2), modes
    assert {offset for _, offset, _ in calls} == {2**40}, calls
    assert {n for _, _, n in calls} == {1}
    """
    out = _run(tmp_path / "s.jsonl", fake, _STORE_ROUND_TRIP, check)
    assert out == "msvcrt ['one', 'two', 'three']"


def test_a_held_msvcrt_lock_makes_the_writer_wait_then_fail(tmp_path: Path) -> None:
    fake = """
    msvcrt = types.ModuleType("msvcrt")
    msvcrt.LK_NBLCK, msvcrt.LK_UNLCK = 2, 0
    def locking(fd, mode, nbytes):
        if mode == 2:
            raise OSError(36, "Resource deadlock avoided")
    msvcrt.locking = locking
    sys.modules["msvcrt"] = msvcrt
    from pi_context.errors import SessionLockedError
    from pi_context.session import Session
    with Session.create(sys.argv[1], cwd="/w", lock_timeout=0) as s:
        try:
            s.append_message({"role": "user", "content": "one", "timestamp": 1})
        except SessionLockedError as exc:
            print("locked:", exc.reason)
    """
    assert _run(tmp_path / "s.jsonl", fake) == (
        "locked: another process is appending to this session"
    )
