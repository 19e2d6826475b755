from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from pi_context.agent.session import AgentSession
from pi_context.model import Model
from pi_context.testing import SequentialIds

MakeSession = Callable[..., Awaitable[AgentSession]]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (tmp_path / "agent").mkdir()
    return root


@pytest.fixture
def make_session(project: Path) -> MakeSession:
    async def make(model: Model | None, **kwargs: Any) -> AgentSession:
        kwargs.setdefault("agent_dir", project.parent / "agent")
        kwargs.setdefault("trusted", True)
        kwargs.setdefault("ids", SequentialIds())
        kwargs.setdefault("sleep", _no_sleep)
        return await AgentSession.create(cwd=project, model=model, **kwargs)

    return make


async def _no_sleep(_: float) -> None:
    return None
