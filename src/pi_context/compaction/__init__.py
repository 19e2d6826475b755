"""Compaction and branch summaries (pi 1.6.0's engine, plus an offline summarizer, observation
masking and a guard).

Typical use by an agent loop::

    compactor = Compactor(session, model, settings, on_event=forward)
    await compactor.maybe_compact(model.info.context_window)   # after each turn
    await compactor.compact("focus on the parser")              # /compact

Lower-level pieces mirror pi's functions: :func:`prepare_compaction`, :func:`find_cut_point`,
:func:`serialize_conversation`, :func:`estimate_context_tokens`, :func:`should_compact`,
:func:`collect_branch_entries`, :func:`prepare_branch_entries`, :func:`summarize_branch`.
"""

from pi_context.compaction.accounting import (
    ContextEstimate,
    TokenCache,
    calculate_context_tokens,
    estimate_context_tokens,
    estimate_kept_context_tokens,
    estimate_projected_context_tokens,
    get_last_assistant_usage,
    should_compact,
)
from pi_context.compaction.branch import (
    NO_CONTENT_SUMMARY,
    BranchCollection,
    BranchPreparation,
    BranchSummaryResult,
    collect_branch_entries,
    generate_branch_summary,
    prepare_branch_entries,
    summarize_branch,
)
from pi_context.compaction.cut_points import (
    CutPoint,
    find_cut_point,
    find_projected_cut_point,
    find_turn_start_index,
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
from pi_context.compaction.file_ops import (
    FileOperations,
    compute_file_lists,
    format_file_operations,
)
from pi_context.compaction.masking import mask_observations, restore_observations
from pi_context.compaction.prepare import (
    CompactionPreparation,
    prepare_compaction,
    require_preparation,
)
from pi_context.compaction.retry_events import (
    SummarizationRetryAttemptStart,
    SummarizationRetryFinished,
    SummarizationRetryScheduled,
)
from pi_context.compaction.serialize import serialize_conversation
from pi_context.resources.settings import CompactionSettings, RetrySettings

__all__ = [
    "NO_CONTENT_SUMMARY",
    "BeforeCompact",
    "BranchCollection",
    "BranchPreparation",
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
    "ContextEstimate",
    "CustomCompaction",
    "CutPoint",
    "FileOperations",
    "ObservationsMasked",
    "RetrySettings",
    "SessionCompact",
    "SummarizationRetryAttemptStart",
    "SummarizationRetryFinished",
    "SummarizationRetryScheduled",
    "TokenCache",
    "calculate_context_tokens",
    "collect_branch_entries",
    "compact",
    "compute_file_lists",
    "estimate_context_tokens",
    "estimate_kept_context_tokens",
    "estimate_projected_context_tokens",
    "find_cut_point",
    "find_projected_cut_point",
    "find_turn_start_index",
    "format_file_operations",
    "generate_branch_summary",
    "get_last_assistant_usage",
    "mask_observations",
    "prepare_branch_entries",
    "prepare_compaction",
    "require_preparation",
    "restore_observations",
    "serialize_conversation",
    "should_compact",
    "summarize_branch",
]
