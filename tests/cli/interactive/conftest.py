"""The ``terminal`` fixture: ``pictx`` in real pseudo-terminals (:mod:`.pty_terminal`)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from tests.cli.interactive.pty_terminal import Terminal


@pytest.fixture
def terminal(tmp_path: Path) -> Iterator[type[Terminal]]:
    """Starts :class:`Terminal` sessions in ``tmp_path`` (``terminal(replies, *args)``) and
    ends any still running after the test (skipped where pexpect is not installed)."""
    from tests.cli.interactive.pty_terminal import Terminal

    started: list[Terminal] = []

    def start(replies: Sequence[Any], *args: str, wait_prompt: bool = True) -> Terminal:
        term = Terminal(tmp_path, replies, *args, wait_prompt=wait_prompt)
        started.append(term)
        return term

    yield start  # type: ignore[misc]
    for term in started:
        if term.child.isalive():
            term.child.terminate(force=True)
