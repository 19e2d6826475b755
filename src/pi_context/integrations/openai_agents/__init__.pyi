from .mapping import OpenAIAgentsCodec as OpenAIAgentsCodec
from .session import PiSession as PiSession

__all__: list[str]  # the names above, in ruff's order (_lazy.attach_stub)
