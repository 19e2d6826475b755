from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pi_context.tools import Tool, ToolOutcome, run_tool


class Runner:
    """Runs a tool call in a temporary project directory."""

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd

    async def __call__(self, tool: Tool, **arguments: Any) -> ToolOutcome:
        return await run_tool(tool, "call_1", arguments, cwd=self.cwd)


@pytest.fixture
def call(tmp_path: Path) -> Runner:
    return Runner(tmp_path)
