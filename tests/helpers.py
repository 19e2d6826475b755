"""Helpers every test folder may use: running ``pictx`` in a fresh process, and a sleep that
returns at once (for retry and backoff paths, whose delays the tests check by value)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

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
