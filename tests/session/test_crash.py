"""Crash and concurrency safety: killed writers and two writers on one file."""

from __future__ import annotations

import itertools
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pi_context.session import Session
from pi_context.testing import FixedClock, SequentialIds
from tests.session.helpers import assistant, user

ROOT = Path(__file__).resolve().parents[2]
# A single-threaded helper process that forks writers on request (cheap: imports happen once).
# Each writer appends to the session until it is killed; children are reaped automatically.
# The zygote reports a writer's pid once it has appended its first entry.
_ZYGOTE = """
import os, signal, sys
from pi_context.session import Session
from pi_context.testing import FixedClock, SequentialIds
signal.signal(signal.SIGCHLD, signal.SIG_IGN)
path = sys.argv[1]
for line in sys.stdin:
    start = int(line)
    ready_r, ready_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        s = Session.open(path, ids=SequentialIds(start), clock=FixedClock(), lock_timeout=None)
        n = 0
        while True:
            text = f"p{start} n{n} " + "x" * (n % 50)
            s.append_message({"role": "user", "content": [{"type": "text", "text": text}], "timestamp": n})
            if n == 0:
                os.write(ready_w, b"w")  # it has appended once
            n += 1
    os.read(ready_r, 1)
    os.close(ready_r)
    os.close(ready_w)
    print(pid, flush=True)
"""


def _kill_and_wait(pid: int) -> None:
    os.kill(pid, signal.SIGKILL)
    while True:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.001)


_APPENDER = """
import sys
from pi_context.session import Session
from pi_context.testing import FixedClock, SequentialIds
path, start, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
s = Session.open(path, ids=SequentialIds(start), clock=FixedClock(), lock_timeout=None)
for n in range(count):
    s.append_message({"role": "user", "content": [{"type": "text", "text": f"p{start} {n}"}], "timestamp": n})
"""


def _seed(path: Path) -> None:
    s = Session.create(path, cwd="/", ids=SequentialIds(1), clock=FixedClock())
    s.append_message(user("seed"))
    s.close()


def _check_loads(path: Path, checked: int = 0, torn: set[int] | None = None) -> Session:
    """Open ``path``: only the last line may be incomplete, and every entry decodes.

    ``torn`` holds the numbers of lines an earlier check found torn at the end of the file;
    the next append finished them with a newline, so they stay skipped in the middle. Newly
    found torn last lines are added to it.
    """
    known = set() if torn is None else torn
    s = Session.open(path)
    last_line = path.read_bytes().count(b"\n") + 1
    for problem in s.problems:
        if problem.line == last_line:
            assert "torn" in problem.reason, s.problems
            known.add(problem.line)
        else:
            assert problem.line in known, s.problems
    for entry in s.entries[checked:]:
        assert isinstance(entry.data, dict)
    return s


@pytest.mark.slow
def test_killing_a_writer_at_random_points_leaves_a_loadable_file(tmp_path: Path) -> None:
    """Writer processes are SIGKILLed at random moments while appending, many times."""
    rng = random.Random(1234)
    path = tmp_path / "s.jsonl"
    _seed(path)
    rounds = 20
    checked = 0
    zygote = subprocess.Popen(
        [sys.executable, "-c", _ZYGOTE, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        cwd=ROOT,
    )
    assert zygote.stdin is not None
    assert zygote.stdout is not None
    try:
        torn: set[int] = set()
        for round_ in range(rounds):
            zygote.stdin.write(f"{0x1000 * (round_ + 1)}\n".encode())
            zygote.stdin.flush()
            pid = int(zygote.stdout.readline())
            time.sleep(rng.uniform(0.002, 0.02))
            _kill_and_wait(pid)
            s = _check_loads(path, checked, torn)
            count = checked = len(s.entries)
            s.append_message(user(f"after round {round_}"))
            s.close()
            again = Session.open(path)
            assert len(again.entries) == count + 1
            assert (
                again.entries[-1].data["message"]["content"][0]["text"] == f"after round {round_}"
            )
    finally:
        zygote.stdin.close()
        zygote.wait(timeout=10)
        zygote.stdout.close()
    assert len(Session.open(path).entries) >= 1 + 2 * rounds


def test_truncation_at_any_byte_keeps_earlier_entries(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    s = Session.create(path, cwd="/", ids=SequentialIds(), clock=FixedClock())
    for n in range(6):
        s.append_message(user(f"message {n} ü😀"))
    s.close()
    full = path.read_bytes()
    ends = [i + 1 for i, b in enumerate(full) if b == ord("\n")]
    rng = random.Random(99)
    for cut in sorted(rng.sample(range(ends[0], len(full)), 60)):
        torn = tmp_path / "torn.jsonl"
        torn.write_bytes(full[:cut])
        loaded = Session.open(torn, ids=SequentialIds(500), clock=FixedClock())
        complete = sum(1 for e in ends if e <= cut) - 1  # minus the header
        assert len(loaded.entries) in (complete, complete + 1)
        if len(loaded.entries) == complete and cut not in ends:
            assert len(loaded.problems) == 1
        loaded.append_message(assistant("resumed"))
        reread = Session.open(torn)
        assert reread.entries[-1].data["message"]["content"][0]["text"] == "resumed"
        assert [e.id for e in reread.entries] == [e.id for e in loaded.entries]


def test_two_processes_appending_never_interleave_bytes(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    _seed(path)
    writers = [
        subprocess.Popen([sys.executable, "-c", _APPENDER, str(path), str(start), "150"], cwd=ROOT)
        for start in (0x10000, 0x20000)
    ]
    assert [w.wait(timeout=60) for w in writers] == [0, 0]
    raw = path.read_bytes()
    assert raw.endswith(b"\n")
    lines = raw.split(b"\n")[:-1]
    for line in lines:
        json.loads(line)
    s = Session.open(path)
    assert s.problems == []
    assert len(s.entries) == 1 + 300
    ids = [e.id for e in s.entries]
    assert len(set(ids)) == len(ids)
    # each writer's entries form one chain under the seed
    for start in (0x10000, 0x20000):
        own = [e for e in s.entries if int(e.id, 16) >= start and int(e.id, 16) < start + 0x10000]
        assert len(own) == 150
        for prev, entry in itertools.pairwise(own):
            assert entry.parent_id == prev.id
