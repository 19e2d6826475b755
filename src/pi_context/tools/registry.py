"""The built-in tool set and its declarations for the model.

``default_tools`` builds pi's default loadout in pi's order (``read``, ``bash``, ``edit``,
``write``), with ``write`` and ``edit`` sharing one per-path lock so parallel calls on the same
file are applied one after the other. ``optional_tools`` builds the read-only built-ins that are
registered but start inactive (``grep``, ``find``, ``ls``): ``--tools`` or ``defaultTools`` turn
them on.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Final

from pi_context.messages import ToolDeclaration
from pi_context.tools.base import PathLocks, Tool
from pi_context.tools.bash import DEFAULT_TIMEOUT_SECONDS, BashTool
from pi_context.tools.edit import EditTool
from pi_context.tools.find import FindTool
from pi_context.tools.grep import GrepTool
from pi_context.tools.ls import LsTool
from pi_context.tools.read import ReadTool
from pi_context.tools.write import WriteTool

__all__ = [
    "BUILTIN_TOOL_NAMES",
    "OPTIONAL_TOOL_NAMES",
    "default_tools",
    "is_optional_builtin",
    "optional_tools",
    "select_tools",
    "tool_declarations",
    "tools_by_name",
]

BUILTIN_TOOL_NAMES: Final = ("read", "bash", "edit", "write")
OPTIONAL_TOOL_NAMES: Final = ("grep", "find", "ls")
"""Built-in tools that exist but are off unless chosen (``--tools``, ``defaultTools``)."""


def default_tools(
    cwd: Path | str | None = None,
    *,
    shell_path: str | None = None,
    command_prefix: str | None = None,
    agent_dir: Path | None = None,
    session_env: Callable[[], Mapping[str, str]] | None = None,
    default_timeout: float | None = DEFAULT_TIMEOUT_SECONDS,
) -> list[Tool]:
    """pi's four built-in tools, fresh instances, in pi's default order.

    ``default_timeout`` is the ``bash`` tool's limit in seconds for a call that sets no
    ``timeout`` (``None``: none, as in pi; the agent passes ``bash.defaultTimeoutSeconds``).

    ``cwd`` is accepted for symmetry with the callers; tools get the cwd per call, so one set
    can serve a session whose cwd is fixed at open time.
    """
    del cwd
    locks = PathLocks()
    return [
        ReadTool(),
        BashTool(
            shell_path=shell_path,
            command_prefix=command_prefix,
            agent_dir=agent_dir,
            session_env=session_env,
            default_timeout=default_timeout,
        ),
        EditTool(locks=locks),
        WriteTool(locks=locks),
    ]


def optional_tools() -> list[Tool]:
    """Fresh ``grep``, ``find`` and ``ls`` tools (read-only; off by default)."""
    return [GrepTool(), FindTool(), LsTool()]


def is_optional_builtin(tool: Tool) -> bool:
    """Whether ``tool`` is one of :func:`optional_tools`' (it starts inactive)."""
    return isinstance(tool, GrepTool | FindTool | LsTool)


def tool_declarations(tools: Iterable[Tool]) -> list[ToolDeclaration]:
    """The declarations sent to the model, in loadout order."""
    return [tool.declaration() for tool in tools]


def tools_by_name(tools: Iterable[Tool]) -> dict[str, Tool]:
    """Name → tool; a later tool with the same name replaces an earlier one (extensions win)."""
    return {tool.name: tool for tool in tools}


def select_tools(tools: Sequence[Tool], names: Iterable[str]) -> list[Tool]:
    """The tools named in ``names`` (unknown names skipped), in the order of ``names``."""
    table = tools_by_name(tools)
    seen: set[str] = set()
    out: list[Tool] = []
    for name in names:
        if name in table and name not in seen:
            seen.add(name)
            out.append(table[name])
    return out
