"""The agent: the loop, the transform-context chain, automatic compaction, the library facade.

::

    from pi_context.agent import AgentSession

    sess = await AgentSession.create(cwd="/my/project", model=model)
    async for event in sess.prompt("Fix the failing test"):
        print(event.to_json())
"""

from pi_context.agent.cache import CacheRecord, CacheTracker, fingerprint_request, first_divergence
from pi_context.agent.checks import CompactionDecision, check_compaction, threshold_exceeded
from pi_context.agent.events import AgentEvent
from pi_context.agent.loop import ABORTED_TOOL_TEXT, AgentLoop, LoopHost, RunResult
from pi_context.agent.operations import NavigationResult
from pi_context.agent.session import AgentOptions, AgentSession, SessionStats
from pi_context.agent.transform import TransformChain

__all__ = [
    "ABORTED_TOOL_TEXT",
    "AgentEvent",
    "AgentLoop",
    "AgentOptions",
    "AgentSession",
    "CacheRecord",
    "CacheTracker",
    "CompactionDecision",
    "LoopHost",
    "NavigationResult",
    "RunResult",
    "SessionStats",
    "TransformChain",
    "check_compaction",
    "fingerprint_request",
    "first_divergence",
    "threshold_exceeded",
]
