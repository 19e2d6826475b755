"""Example extension: add a system-prompt section for every run.

The section is delivered the cache-friendly way: it is set on the run's prompt options in
``before_agent_start``, so pi-context patches only this section (and only when its text
changes) instead of re-sending the whole prompt. Here the section lists the files changed in
the project's git work tree, so the model knows what is in flight; outside a git repository
the section is dropped.

Copy this file to ``~/.pi/agent/extensions/`` (or a trusted project's ``.pi/extensions/``).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from pi_context import ExtensionAPI, ExtensionContext
from pi_context.extensions.events import BeforeAgentStartEvent

SECTION = "work_in_progress"
MAX_FILES = 30


def changed_files(cwd: Path) -> list[str] | None:
    """``git status --porcelain`` lines for ``cwd``, or ``None`` outside a work tree."""
    try:
        out = subprocess.run(
            ["git", "status", "--porcelain"],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return [line for line in out.stdout.splitlines() if line.strip()]


def section_text(files: list[str]) -> str | None:
    if not files:
        return None
    shown = files[:MAX_FILES]
    more = len(files) - len(shown)
    lines = ["Uncommitted changes in this work tree (git status --porcelain):", *shown]
    if more:
        lines.append(f"... and {more} more")
    return "\n".join(lines)


def register(pi: ExtensionAPI) -> None:
    @pi.on("before_agent_start")
    def add_section(event: BeforeAgentStartEvent, ctx: ExtensionContext) -> None:
        files = changed_files(ctx.cwd)
        event.set_section(SECTION, section_text(files) if files is not None else None)
