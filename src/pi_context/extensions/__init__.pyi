from .api import Extension as Extension
from .api import ExtensionAPI as ExtensionAPI
from .api import Handler as Handler
from .api import RegisteredCommand as RegisteredCommand
from .context import ExtensionActions as ExtensionActions
from .context import ExtensionCommandContext as ExtensionCommandContext
from .context import ExtensionContext as ExtensionContext
from .context import ExtensionUI as ExtensionUI
from .context import SessionControl as SessionControl
from .context import ToolInfo as ToolInfo
from .discovery import discover_extension_paths as discover_extension_paths
from .hooks import ExtensionHooks as ExtensionHooks
from .loader import load_extensions as load_extensions
from .runner import ExtensionRunner as ExtensionRunner
from .runner import UnknownResultKeyError as UnknownResultKeyError

__all__: list[str]  # the names above, in ruff's order (_lazy.attach_stub)
