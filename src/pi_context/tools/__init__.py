"""The built-in tools (``read``, ``write``, ``edit``, ``bash``) and the tool interface.

A bad tool call never raises out of :func:`run_tool`: it becomes an error result the model sees.
"""

from pi_context.tools.base import (
    CONSTRAINED_SAMPLING,
    AbortSignal,
    ContextTool,
    FunctionTool,
    PathLocks,
    Tool,
    ToolContext,
    ToolOutcome,
    UpdateCallback,
    error_outcome,
    resolve_path,
    run_tool,
    text_outcome,
    validate_arguments,
)
from pi_context.tools.bash import BashTool
from pi_context.tools.edit import EditTool
from pi_context.tools.read import ReadTool
from pi_context.tools.registry import (
    BUILTIN_TOOL_NAMES,
    default_tools,
    select_tools,
    tool_declarations,
    tools_by_name,
)
from pi_context.tools.truncate import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, TruncationResult
from pi_context.tools.write import WriteTool

__all__ = [
    "BUILTIN_TOOL_NAMES",
    "CONSTRAINED_SAMPLING",
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_LINES",
    "AbortSignal",
    "BashTool",
    "ContextTool",
    "EditTool",
    "FunctionTool",
    "PathLocks",
    "ReadTool",
    "Tool",
    "ToolContext",
    "ToolOutcome",
    "TruncationResult",
    "UpdateCallback",
    "WriteTool",
    "default_tools",
    "error_outcome",
    "resolve_path",
    "run_tool",
    "select_tools",
    "text_outcome",
    "tool_declarations",
    "tools_by_name",
    "validate_arguments",
]
