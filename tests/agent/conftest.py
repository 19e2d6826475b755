from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from pi_context.agent.session import AgentSession
from pi_context.model import Model
from pi_context.testing import SequentialIds
from pi_context.tools import Tool, ToolOutcome
from tests.helpers import no_sleep

MakeSession = Callable[..., Awaitable[AgentSession]]


@pytest.fixture
def project_dir(tmp_path: Path) -> Path:
    """An empty project directory (not the cwd), beside an empty agent dir."""
    root = tmp_path / "proj"
    root.mkdir()
    (tmp_path / "agent").mkdir()
    return root


@pytest.fixture
def make_session(project_dir: Path) -> MakeSession:
    async def make(model: Model | None, **kwargs: Any) -> AgentSession:
        kwargs.setdefault("agent_dir", project_dir.parent / "agent")
        kwargs.setdefault("trusted", True)
        kwargs.setdefault("ids", SequentialIds())
        kwargs.setdefault("sleep", no_sleep)
        return await AgentSession.create(cwd=project_dir, model=model, **kwargs)

    return make


class GateTool(Tool):
    """A tool that waits until the test opens its gate (``entered`` is set once it runs)."""

    name = "wait"
    description = "Wait for the gate."
    parameters: dict[str, Any] = {"type": "object", "properties": {}}  # noqa: RUF012

    def __init__(self) -> None:
        self.entered = asyncio.Event()
        self.gate = asyncio.Event()

    async def execute(self, call_id: str, arguments: dict[str, Any], **_: Any) -> ToolOutcome:
        self.entered.set()
        await self.gate.wait()
        return ToolOutcome([{"type": "text", "text": "opened"}])
