"""The built-in tools (``read``, ``write``, ``edit``, ``bash``, and ``recall``, which the agent
offers once a session holds a compaction) and the tool interface.

A bad tool call never raises out of :func:`run_tool`: it becomes an error result the model sees.
"""

from typing import TYPE_CHECKING

from pi_context import _lazy

if TYPE_CHECKING:
    from pi_context.tools.base import (
        AbortSignal,
        ContextTool,
        FunctionTool,
        Tool,
        ToolContext,
        ToolOutcome,
        UpdateCallback,
        error_outcome,
        run_tool,
        text_outcome,
    )
    from pi_context.tools.bash import BashTool
    from pi_context.tools.edit import EditTool
    from pi_context.tools.read import ReadTool
    from pi_context.tools.recall import RecallTool
    from pi_context.tools.registry import (
        BUILTIN_TOOL_NAMES,
        default_tools,
        select_tools,
        tool_declarations,
    )
    from pi_context.tools.write import WriteTool

__all__ = [
    "BUILTIN_TOOL_NAMES",
    "AbortSignal",
    "BashTool",
    "ContextTool",
    "EditTool",
    "FunctionTool",
    "ReadTool",
    "RecallTool",
    "Tool",
    "ToolContext",
    "ToolOutcome",
    "UpdateCallback",
    "WriteTool",
    "default_tools",
    "error_outcome",
    "run_tool",
    "select_tools",
    "text_outcome",
    "tool_declarations",
]

_HOMES = _lazy.homes(
    {
        "pi_context.tools.base": (
            "AbortSignal",
            "ContextTool",
            "FunctionTool",
            "Tool",
            "ToolContext",
            "ToolOutcome",
            "UpdateCallback",
            "error_outcome",
            "run_tool",
            "text_outcome",
        ),
        "pi_context.tools.bash": ("BashTool",),
        "pi_context.tools.edit": ("EditTool",),
        "pi_context.tools.read": ("ReadTool",),
        "pi_context.tools.recall": ("RecallTool",),
        "pi_context.tools.registry": (
            "BUILTIN_TOOL_NAMES",
            "default_tools",
            "select_tools",
            "tool_declarations",
        ),
        "pi_context.tools.write": ("WriteTool",),
    }
)
"""Where each public name lives; imported from there when first used."""

__getattr__, __dir__ = _lazy.hooks(globals(), _HOMES, __all__)
