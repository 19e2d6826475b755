"""Writes under hostile conditions.

The atomic rewrite of a migrated legacy file used a predictable temporary name, opened without
``O_EXCL``/``O_NOFOLLOW`` (a planted symlink redirected the write), and a SIGKILL during it
left the temporary file behind. ``pictx --export S.jsonl S.jsonl`` overwrote the session with
HTML. Appends were never flushed to the disk.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pi_context.errors import SessionError
from pi_context.resources.settings import Settings, session_fsync_for
from pi_context.session import Session
from pi_context.session._file.writer import atomic_write, temp_name_pattern
from pi_context.testing import FixedClock, SequentialIds
from tests.hostile.helpers import (
    SRC,
    assert_clean,
    entry,
    pictx_process,
    raw_user,
    sha256,
    write_session,
)

pytestmark = pytest.mark.timeout(300)

LEGACY = Path(__file__).resolve().parents[1] / "data" / "conformance" / "sessions" / "small"


def _legacy(tmp_path: Path) -> Path:
    path = tmp_path / "legacy.jsonl"
    shutil.copy(LEGACY / "legacy_v1.jsonl", path)
    return path


def test_the_temporary_name_is_unpredictable_and_matches_our_pattern(tmp_path: Path) -> None:
    seen: list[str] = []
    real_replace = os.replace

    def spy(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
        seen.append(Path(src).name)
        real_replace(src, dst)

    target = tmp_path / "s.jsonl"
    target.write_bytes(b"old\n")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "replace", spy)
        atomic_write(target, b"one\n")
        atomic_write(target, b"two\n")
    assert target.read_bytes() == b"two\n"
    assert len(set(seen)) == 2
    assert all(temp_name_pattern(target).fullmatch(name) for name in seen)
    assert f".s.jsonl.{os.getpid()}.tmp" not in seen


def test_a_planted_symlink_at_the_temporary_name_is_never_followed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"precious\n")
    target = tmp_path / "s.jsonl"
    target.write_bytes(b"old\n")
    monkeypatch.setattr("os.urandom", lambda n: bytes(n))  # the temporary name: all zeros
    (tmp_path / f".s.jsonl.{'0' * 32}.pictx-tmp").symlink_to(victim)
    with pytest.raises(SessionError, match="cannot rewrite session file"):
        atomic_write(target, b"new\n")
    assert victim.read_bytes() == b"precious\n"
    assert target.read_bytes() == b"old\n"
    assert (tmp_path / f".s.jsonl.{'0' * 32}.pictx-tmp").is_symlink()  # not ours to remove


def test_stale_temporary_files_of_a_killed_rewrite_are_removed(tmp_path: Path) -> None:
    path = _legacy(tmp_path)
    stale = tmp_path / f".legacy.jsonl.{'ab' * 16}.pictx-tmp"
    stale.write_bytes(b"half a rewrite")
    unrelated = tmp_path / ".legacy.jsonl.notours.tmp"
    unrelated.write_bytes(b"keep")
    with Session.open(path, ids=SequentialIds(), clock=FixedClock()) as session:
        assert session.is_legacy
        session.append_message(raw_user("after"))
        assert session.file_version == 3
    assert not stale.exists()
    assert unrelated.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        ".legacy.jsonl.notours.tmp",
        "legacy.jsonl",
    ]


def test_sigkill_during_the_rewrite_leaves_the_old_file_and_a_temp_we_clean(tmp_path: Path) -> None:
    path = _legacy(tmp_path)
    before = sha256(path)
    script = textwrap.dedent(
        f"""
        import os, sys
        sys.path.insert(0, {str(SRC)!r})
        from pi_context.session._file import writer
        real_replace = os.replace
        def die(src, dst):
            os.kill(os.getpid(), 9)
        writer.os.replace = die
        from pi_context.session import Session
        s = Session.open({str(path)!r})
        s.append_message({{"role": "user", "content": "x", "timestamp": 1}})
        """
    )
    done = subprocess.run([sys.executable, "-c", script], timeout=60, check=False)
    assert done.returncode == -int(signal.SIGKILL)
    assert sha256(path) == before
    leftovers = [p for p in tmp_path.iterdir() if p.name != path.name]
    assert len(leftovers) == 1
    assert temp_name_pattern(path).fullmatch(leftovers[0].name)
    with Session.open(path) as session:
        session.append_message(raw_user("again"))
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]


@pytest.mark.parametrize("target", ["itself", "other session", "link to session"])
def test_export_never_overwrites_a_session(tmp_path: Path, target: str) -> None:
    source = write_session(tmp_path / "s.jsonl", [entry("u1", None, message=raw_user("q"))])
    other = write_session(tmp_path / "t.jsonl", [entry("u1", None, message=raw_user("q"))])
    (tmp_path / "link.html").symlink_to(other)
    out = {"itself": source, "other session": other, "link to session": tmp_path / "link.html"}[
        target
    ]
    hashes = (sha256(source), sha256(other))
    run = pictx_process("--export", str(source), str(out), cwd=tmp_path)
    assert_clean(run, code=1)
    assert "refusing to write the export over" in run.stderr
    assert (sha256(source), sha256(other)) == hashes
    run = pictx_process("--export", str(source), str(tmp_path / "fine.html"), cwd=tmp_path)
    assert_clean(run, code=0)


def test_sync_flushes_appends_and_compaction_syncs_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[int] = []
    real_fsync = os.fsync

    def counting_fsync(fd: int) -> None:
        synced.append(fd)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", counting_fsync)
    with Session.create(tmp_path / "s.jsonl", cwd=str(tmp_path)) as session:
        session.sync()  # nothing written yet: nothing to flush
        assert synced == []
        first = session.append_message(raw_user("q"))
        session.sync()
        assert len(synced) == 1
        session.append_compaction("summary", first.id, 10)
        assert len(synced) == 2
    with Session.open(tmp_path / "s.jsonl", fsync=False) as session:
        session.append_message(raw_user("more"))
        session.sync()
        session.append_compaction("summary", None, 10)
    assert len(synced) == 2


def test_the_session_fsync_setting_defaults_on() -> None:
    assert session_fsync_for(Settings()) is True
    assert session_fsync_for(Settings(data={"sessionFsync": False})) is False
    assert (
        session_fsync_for(Settings(data={"sessionFsync": "no"})) is True
    )  # only false turns it off


async def test_the_agent_syncs_at_each_turn_end_unless_turned_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pi_context.agent.session import AgentSession
    from pi_context.testing import ScriptedModel, reply

    calls: list[bool] = []
    real_sync = Session.sync

    def spy(self: Session) -> None:
        calls.append(self.fsync)
        real_sync(self)

    monkeypatch.setattr(Session, "sync", spy)
    for enabled in (True, False):
        calls.clear()
        agent = await AgentSession.create(
            cwd=str(tmp_path),
            model=ScriptedModel([reply("one"), reply("two")]),
            session_file=tmp_path / f"s{enabled}.jsonl",
            settings={"sessionFsync": enabled},
        )
        await agent.run("first")
        await agent.run("second")
        # on: one flush per turn end (off a worker thread); off: the disk is never asked
        assert calls == ([True, True] if enabled else [])
