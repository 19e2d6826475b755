from pi_context.resources.settings import CompactionSettings as CompactionSettings

from .accounting import TokenCache as TokenCache
from .accounting import estimate_context_tokens as estimate_context_tokens
from .accounting import estimate_projected_context_tokens as estimate_projected_context_tokens
from .accounting import should_compact as should_compact
from .branch import BranchSummaryResult as BranchSummaryResult
from .branch import summarize_branch as summarize_branch
from .cut_points import CutPoint as CutPoint
from .cut_points import find_cut_point as find_cut_point
from .engine import Compactor as Compactor
from .engine import compact as compact
from .events import BeforeCompact as BeforeCompact
from .events import CancelCompaction as CancelCompaction
from .events import CompactionEnd as CompactionEnd
from .events import CompactionEvent as CompactionEvent
from .events import CompactionFailed as CompactionFailed
from .events import CompactionFallback as CompactionFallback
from .events import CompactionPaused as CompactionPaused
from .events import CompactionResult as CompactionResult
from .events import CompactionStart as CompactionStart
from .events import CustomCompaction as CustomCompaction
from .events import ObservationsMasked as ObservationsMasked
from .events import SessionCompact as SessionCompact
from .masking import mask_observations as mask_observations
from .masking import restore_observations as restore_observations
from .prepare import CompactionPreparation as CompactionPreparation
from .prepare import prepare_compaction as prepare_compaction
from .retry_events import SummarizationRetryAttemptStart as SummarizationRetryAttemptStart
from .retry_events import SummarizationRetryFinished as SummarizationRetryFinished
from .retry_events import SummarizationRetryScheduled as SummarizationRetryScheduled
from .serialize import serialize_conversation as serialize_conversation

__all__: list[str]  # the names above, in ruff's order (_lazy.attach_stub)
