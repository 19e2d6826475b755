from .mapping import LangChainCodec as LangChainCodec
from .middleware import PiSummarizationMiddleware as PiSummarizationMiddleware
from .testing import FakeToolChatModel as FakeToolChatModel

__all__: list[str]  # the names above, in ruff's order (_lazy.attach_stub)
