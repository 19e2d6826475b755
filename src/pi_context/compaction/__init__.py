"""Compaction and branch summaries (pi 1.6.0's engine, plus an offline summarizer, observation
masking and a guard).

Typical use by an agent loop::

    compactor = Compactor(session, model, settings, on_event=forward)
    await compactor.maybe_compact(model.info.context_window)   # after each turn
    await compactor.compact("focus on the parser")              # /compact

Lower-level pieces mirror pi's functions: :func:`prepare_compaction`, :func:`find_cut_point`,
:func:`serialize_conversation`, :func:`estimate_context_tokens`, :func:`should_compact`,
:func:`summarize_branch`; the steps inside them are in their modules (:mod:`.cut_points`,
:mod:`.branch`, :mod:`.accounting`, ...).
"""

from typing import TYPE_CHECKING

from pi_context import _lazy

if TYPE_CHECKING:
    from pi_context.compaction.accounting import (
        TokenCache,
        estimate_context_tokens,
        estimate_projected_context_tokens,
        should_compact,
    )
    from pi_context.compaction.branch import (
        BranchSummaryResult,
        summarize_branch,
    )
    from pi_context.compaction.cut_points import (
        CutPoint,
        find_cut_point,
    )
    from pi_context.compaction.engine import Compactor, compact
    from pi_context.compaction.events import (
        BeforeCompact,
        CancelCompaction,
        CompactionEnd,
        CompactionEvent,
        CompactionFailed,
        CompactionFallback,
        CompactionPaused,
        CompactionResult,
        CompactionStart,
        CustomCompaction,
        ObservationsMasked,
        SessionCompact,
    )
    from pi_context.compaction.masking import mask_observations, restore_observations
    from pi_context.compaction.prepare import (
        CompactionPreparation,
        prepare_compaction,
    )
    from pi_context.compaction.retry_events import (
        SummarizationRetryAttemptStart,
        SummarizationRetryFinished,
        SummarizationRetryScheduled,
    )
    from pi_context.compaction.serialize import serialize_conversation
    from pi_context.resources.settings import (
        CompactionSettings,
    )

__all__ = [
    "BeforeCompact",
    "BranchSummaryResult",
    "CancelCompaction",
    "CompactionEnd",
    "CompactionEvent",
    "CompactionFailed",
    "CompactionFallback",
    "CompactionPaused",
    "CompactionPreparation",
    "CompactionResult",
    "CompactionSettings",
    "CompactionStart",
    "Compactor",
    "CustomCompaction",
    "CutPoint",
    "ObservationsMasked",
    "SessionCompact",
    "SummarizationRetryAttemptStart",
    "SummarizationRetryFinished",
    "SummarizationRetryScheduled",
    "TokenCache",
    "compact",
    "estimate_context_tokens",
    "estimate_projected_context_tokens",
    "find_cut_point",
    "mask_observations",
    "prepare_compaction",
    "restore_observations",
    "serialize_conversation",
    "should_compact",
    "summarize_branch",
]

_HOMES = _lazy.homes(
    {
        "pi_context.compaction.accounting": (
            "TokenCache",
            "estimate_context_tokens",
            "estimate_projected_context_tokens",
            "should_compact",
        ),
        "pi_context.compaction.branch": (
            "BranchSummaryResult",
            "summarize_branch",
        ),
        "pi_context.compaction.cut_points": (
            "CutPoint",
            "find_cut_point",
        ),
        "pi_context.compaction.engine": (
            "Compactor",
            "compact",
        ),
        "pi_context.compaction.events": (
            "BeforeCompact",
            "CancelCompaction",
            "CompactionEnd",
            "CompactionEvent",
            "CompactionFailed",
            "CompactionFallback",
            "CompactionPaused",
            "CompactionResult",
            "CompactionStart",
            "CustomCompaction",
            "ObservationsMasked",
            "SessionCompact",
        ),
        "pi_context.compaction.masking": (
            "mask_observations",
            "restore_observations",
        ),
        "pi_context.compaction.prepare": (
            "CompactionPreparation",
            "prepare_compaction",
        ),
        "pi_context.compaction.retry_events": (
            "SummarizationRetryAttemptStart",
            "SummarizationRetryFinished",
            "SummarizationRetryScheduled",
        ),
        "pi_context.compaction.serialize": ("serialize_conversation",),
        "pi_context.resources.settings": ("CompactionSettings",),
    }
)
"""Where each public name lives; imported from there when first used."""

__getattr__, __dir__ = _lazy.hooks(globals(), _HOMES, __all__)
