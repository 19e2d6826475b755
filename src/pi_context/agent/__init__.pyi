from pi_context.events import AgentEvent as AgentEvent

from ._compaction import CompactionDecision as CompactionDecision
from .navigation import NavigationResult as NavigationResult
from .session import AgentOptions as AgentOptions
from .session import AgentSession as AgentSession
from .session import SessionStats as SessionStats
from .stats import CacheRecord as CacheRecord
from .stats import CacheTracker as CacheTracker

__all__: list[str]  # the names above, in ruff's order (_lazy.attach_stub)
