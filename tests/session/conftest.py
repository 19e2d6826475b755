from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from pi_context.session import Session
from pi_context.testing import FixedClock, SequentialIds

DATA = Path(__file__).resolve().parents[1] / "data" / "conformance" / "sessions" / "small"


@pytest.fixture
def make_session_file(tmp_path: Path) -> Callable[..., Session]:
    """A new file-backed session with predictable ids and clock."""

    def make(name: str = "s.jsonl", **kwargs: object) -> Session:
        return Session.create(
            tmp_path / name,
            cwd="/work",
            ids=SequentialIds(),
            clock=FixedClock(),
            **kwargs,  # type: ignore[arg-type]
        )

    return make
