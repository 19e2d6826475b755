from .protocol import CacheMode as CacheMode
from .protocol import Model as Model
from .protocol import ModelCost as ModelCost
from .protocol import ModelInfo as ModelInfo
from .protocol import ModelRequest as ModelRequest
from .protocol import RequestOptions as RequestOptions
from .protocol import StreamDone as StreamDone
from .protocol import StreamEvent as StreamEvent
from .protocol import SystemDelivery as SystemDelivery
from .protocol import TextDelta as TextDelta
from .protocol import ThinkingDelta as ThinkingDelta
from .protocol import ToolCallDelta as ToolCallDelta
from .protocol import ToolCallStart as ToolCallStart
from .protocol import complete as complete
from .protocol import system_delivery_of as system_delivery_of
from .thinking import DEFAULT_THINKING_LEVEL as DEFAULT_THINKING_LEVEL
from .thinking import THINKING_LEVELS as THINKING_LEVELS
from .thinking import clamp_thinking_level as clamp_thinking_level
from .thinking import supported_thinking_levels as supported_thinking_levels

__all__: list[str]  # the names above, in ruff's order (_lazy.attach_stub)
