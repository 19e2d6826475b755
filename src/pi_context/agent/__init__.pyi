from pi_context.events import AgentEvent as AgentEvent

from .compaction_decision import CompactionDecision as CompactionDecision
from .navigation import NavigationResult as NavigationResult
from .prompt_cache import CacheRecord as CacheRecord
from .prompt_cache import CacheTracker as CacheTracker
from .session import AgentOptions as AgentOptions
from .session import AgentSession as AgentSession
from .session import SessionStats as SessionStats

__all__: list[str]  # the names above, in ruff's order (_lazy.attach_stub)
