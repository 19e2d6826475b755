"""The built-in tools (``read``, ``write``, ``edit``, ``bash``, and ``recall``, which the agent
offers once a session holds a compaction) and the tool interface.

A bad tool call never raises out of :func:`run_tool`: it becomes an error result the model sees.
"""

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
