from .base import AbortSignal as AbortSignal
from .base import ContextTool as ContextTool
from .base import FunctionTool as FunctionTool
from .base import Tool as Tool
from .base import ToolContext as ToolContext
from .base import ToolOutcome as ToolOutcome
from .base import UpdateCallback as UpdateCallback
from .base import error_outcome as error_outcome
from .base import run_tool as run_tool
from .base import text_outcome as text_outcome
from .bash import BashTool as BashTool
from .edit import EditTool as EditTool
from .read import ReadTool as ReadTool
from .recall import RecallTool as RecallTool
from .registry import BUILTIN_TOOL_NAMES as BUILTIN_TOOL_NAMES
from .registry import default_tools as default_tools
from .registry import select_tools as select_tools
from .registry import tool_declarations as tool_declarations
from .write import WriteTool as WriteTool

__all__: list[str]  # the names above, in ruff's order (_lazy.attach_stub)
