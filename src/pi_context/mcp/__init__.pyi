from .config import McpConfig as McpConfig
from .config import ServerConfig as ServerConfig
from .config import load_mcp_config as load_mcp_config
from .manager import McpManager as McpManager
from .naming import RESOURCE_TOOL_NAMES as RESOURCE_TOOL_NAMES
from .naming import is_mcp_tool_name as is_mcp_tool_name

__all__: list[str]  # the names above, in ruff's order (_lazy.attach_stub)
