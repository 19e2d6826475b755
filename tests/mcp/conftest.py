"""Fixtures for the MCP tests: an agent dir, a project, and ``mcp.json`` entries for the demo
server (``servers/demo_server.py``, written with the official SDK) over stdio."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

DEMO = Path(__file__).parent / "servers" / "demo_server.py"

WriteConfig = Callable[..., Path]


def stdio_entry(name: str, **extra: Any) -> dict[str, Any]:
    """An ``mcp.json`` entry starting the demo server called ``name`` over stdio."""
    env = {"DEMO_NAME": name, **extra.pop("env", {})}
    return {"command": sys.executable, "args": [str(DEMO), "stdio"], "env": env, **extra}


@pytest.fixture
def agent_dir(tmp_path: Path) -> Path:
    path = tmp_path / "agent"
    path.mkdir()
    return path


@pytest.fixture
def project_dir(tmp_path: Path) -> Path:
    """An empty project directory (not the cwd)."""
    path = tmp_path / "proj"
    path.mkdir()
    return path


@pytest.fixture
def write_config(agent_dir: Path) -> WriteConfig:
    def write(servers: dict[str, Any], path: Path | None = None, **top: Any) -> Path:
        target = path or agent_dir / "mcp.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps({"mcpServers": servers, **top}, indent=2))
        return target

    return write
