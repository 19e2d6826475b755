"""Copying to the clipboard through the platform's tool (real processes, tools of our own)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from pi_context.cli.interactive.clipboard import copy_to_clipboard

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="shell-script tools")


def _tool(folder: Path, name: str, body: str) -> None:
    script = folder / name
    script.write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
    script.chmod(0o755)


def _env(folder: Path) -> dict[str, str]:
    return {**os.environ, "PATH": f"{folder}:/usr/bin:/bin"}


def test_the_first_working_tool_gets_the_text(tmp_path: Path) -> None:
    tools = tmp_path / "bin"
    tools.mkdir()
    _tool(tools, "wl-copy", "exit 1")  # no Wayland display: fails, the next one is tried
    _tool(tools, "xclip", f'cat > "{tmp_path}/got"; echo "$@" > "{tmp_path}/args"')
    assert copy_to_clipboard("héllo\nworld", env=_env(tools))
    assert (tmp_path / "got").read_text(encoding="utf-8") == "héllo\nworld"
    assert (tmp_path / "args").read_text(encoding="utf-8").split() == ["-selection", "clipboard"]


def test_no_tool_means_no_clipboard(tmp_path: Path) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    assert not copy_to_clipboard("text", env={"PATH": str(empty)})
