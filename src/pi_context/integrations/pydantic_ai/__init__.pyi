from .capability import PiContext as PiContext
from .mapping import PydanticAICodec as PydanticAICodec

__all__: list[str]  # the names above, in ruff's order (_lazy.attach_stub)
