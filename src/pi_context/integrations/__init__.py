"""pi's context engine inside the agent frameworks Python users already have.

One adapter per framework, each an optional extra (importing one without its framework raises
an :class:`ImportError` naming the extra)::

    from pi_context.integrations.openai_agents import PiSession          # [openai-agents]
    from pi_context.integrations.pydantic_ai import PiContext            # [pydantic-ai]
    from pi_context.integrations.langchain import PiSummarizationMiddleware   # [langchain]

Every adapter records the conversation in a pi JSONL session (``pictx session tree`` and pi
itself open it) and compacts it with pi's engine: :class:`ContextEngine`, which this package
exports with the pieces the adapters share and that need no framework.
"""

from pi_context.integrations.engine import (
    CompactionOutcome,
    ContextEngine,
    EngineOptions,
    FileTools,
    Summarizer,
    pi_file_operation,
)
from pi_context.integrations.pairs import PairRepair, pair_violations, repair_pairs

__all__ = [
    "CompactionOutcome",
    "ContextEngine",
    "EngineOptions",
    "FileTools",
    "PairRepair",
    "Summarizer",
    "pair_violations",
    "pi_file_operation",
    "repair_pairs",
]
