"""What the in-process ``pictx`` fixture (``pictx_in_process`` in conftest) returns, its type,
and where a run's session files are."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path


class InProcessRun:
    """One ``pictx`` run in this process (:func:`pictx_in_process`); ``out``/``err`` are what
    it wrote (``tests.helpers.ProcessRun`` is the subprocess counterpart)."""

    def __init__(self, code: int, out: str, err: str) -> None:
        self.code, self.out, self.err = code, out, err


PictxInProcess = Callable[..., InProcessRun]
"""The type of the ``pictx_in_process`` fixture: ``pictx_in_process(*args, stdin="")``."""


def sessions_of(agent: Path, cwd: Path) -> list[Path]:
    """The session files of ``cwd`` in agent dir ``agent``, where pi keeps them, sorted."""
    from pi_context.session_dirs import default_session_dir

    return sorted(default_session_dir(cwd, agent).glob("*.jsonl"))
