"""Helpers every test folder may use: running ``pictx`` in a fresh process, a sleep that
returns at once (for retry and backoff paths, whose delays the tests check by value), and a
session file written where pi lists sessions."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from pi_context.session_dirs import session_file_name

SRC = Path(__file__).resolve().parents[1] / "src"
RUN_TIMEOUT = 120.0
"""Seconds a ``pictx`` run may take before the test calls it hung (generous: the suite may
share the machine with other work)."""


async def no_sleep(_seconds: float) -> None:
    """The ``sleep`` to inject where a test must not wait."""


@dataclass(frozen=True)
class ProcessRun:
    """One finished ``pictx`` subprocess (:func:`pictx_process`)."""

    code: int
    stdout: str
    stderr: str

    @property
    def stderr_lines(self) -> list[str]:
        return [text for text in self.stderr.splitlines() if text.strip()]


def pictx_process(
    *args: str, cwd: Path | None = None, env: Mapping[str, str] | None = None
) -> ProcessRun:
    """Run ``pictx ARGS`` in a fresh process (stdin empty, this checkout's source first on the
    path, ``env`` over the test's environment), bounded by :data:`RUN_TIMEOUT`."""
    environ = {**os.environ, "PYTHONPATH": str(SRC), **(env or {})}
    done = subprocess.run(
        [sys.executable, "-m", "pi_context", *args],
        cwd=cwd,
        env=environ,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=RUN_TIMEOUT,
        check=False,
    )
    return ProcessRun(
        done.returncode,
        done.stdout.decode("utf-8", "replace"),
        done.stderr.decode("utf-8", "replace"),
    )


def write_session_in(
    directory: Path,
    sid: str,
    *,
    cwd: str = "/home/u/proj",
    stamp: str = "2026-01-05T10:00:00.000Z",
    messages: tuple[tuple[str, str, int], ...] = (),
    mtime: float | None = None,
    name: str | None = None,
) -> Path:
    """A session file in ``directory``, named as pi names it (``stamp``, ``sid``): its header,
    then ``messages`` (role, text, timestamp) in a chain, then a ``session_info`` naming it
    ``name``; its modification time set to ``mtime``."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / session_file_name(stamp, sid)
    lines = [{"type": "session", "version": 3, "id": sid, "timestamp": stamp, "cwd": cwd}]
    parent = None
    for n, (role, text, ms) in enumerate(messages):
        eid = f"{n + 1:08x}"
        lines.append(
            {
                "type": "message",
                "id": eid,
                "parentId": parent,
                "timestamp": stamp,
                "message": {
                    "role": role,
                    "content": [{"type": "text", "text": text}],
                    "timestamp": ms,
                },
            }
        )
        parent = eid
    if name is not None:
        lines.append(
            {
                "type": "session_info",
                "id": "ffffffff",
                "parentId": parent,
                "timestamp": stamp,
                "name": name,
            }
        )
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path
