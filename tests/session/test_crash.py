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
from collections import deque
from pathlib import Path

import pytest

from pi_context.session import Session
from pi_context.testing import FixedClock, SequentialIds
from tests.session.helpers import assistant, user

ROOT = Path(__file__).resolve().parents[2]
# A writer process: say "ready", wait for a line on stdin, then append until killed.
_CHILD = """
import sys
from pi_context.session import Session
from pi_context.testing import FixedClock, SequentialIds
path, start = sys.argv[1], int(sys.argv[2])
print("ready", flush=True)
sys.stdin.readline()
s = Session.open(path, ids=SequentialIds(start), clock=FixedClock(), lock_timeout=None)
n = 0
while True:
    text = f"p{start} n{n} " + "x" * (n % 50)
    s.append_message({"role": "user", "content": [{"type": "text", "text": text}], "timestamp": n})
    n += 1
"""


def _spawn(path: Path, start: int) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(path), str(start)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        cwd=ROOT,
    )


def _writer(path: Path, start: int, count: int) -> None:
    """Child process body (forked): append ``count`` entries, then exit without cleanup."""
    code = 0
    try:
        s = Session.open(path, ids=SequentialIds(start), clock=FixedClock(), lock_timeout=None)
        for n in range(count):
            s.append_message(user(f"p{start} n{n}") if n % 2 else assistant(f"p{start} {n}"))
    except BaseException:  # the child must never return into pytest
        code = 1
    os._exit(code)


def _seed(path: Path) -> None:
    s = Session.create(path, cwd="/", ids=SequentialIds(1), clock=FixedClock())
    s.append_message(user("seed"))
    s.close()


def _check_loads(path: Path) -> Session:
    s = Session.open(path)
    # only the last line can be incomplete; every earlier entry decodes
    assert all(p.line == path.read_bytes().count(b"\n") + 1 for p in s.problems), s.problems
    for entry in s.entries:
        assert isinstance(entry.data, dict)
    return s


@pytest.mark.slow
def test_killing_a_writer_at_random_points_leaves_a_loadable_file(tmp_path: Path) -> None:
    """Separate writer processes are SIGKILLed at random moments while appending."""
    rng = random.Random(1234)
    path = tmp_path / "s.jsonl"
    _seed(path)
    rounds = 12
    waiting = deque(_spawn(path, 0x1000 * (r + 1)) for r in range(2))
    for round_ in range(rounds):
        child = waiting.popleft()
        if round_ + 2 < rounds:
            waiting.append(_spawn(path, 0x1000 * (round_ + 3)))
        assert child.stdin is not None
        assert child.stdout is not None
        assert child.stdout.readline() == b"ready\n"
        child.stdin.write(b"go\n")
        child.stdin.flush()
        time.sleep(rng.uniform(0.01, 0.1))
        child.send_signal(signal.SIGKILL)
        child.wait()
        child.stdin.close()
        child.stdout.close()
        s = _check_loads(path)
        count = len(s.entries)
        s.append_message(user(f"after round {round_}"))
        s.close()
        again = Session.open(path)
        assert len(again.entries) == count + 1
        assert again.entries[-1].data["message"]["content"][0]["text"] == f"after round {round_}"
    assert len(Session.open(path).entries) > rounds * 2  # the writers did write


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
    pids = []
    for start in (0x10000, 0x20000):
        pid = os.fork()
        if pid == 0:  # pragma: no cover - child
            _writer(path, start, 150)
        pids.append(pid)
    for pid in pids:
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
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
