from .engine import CompactionOutcome as CompactionOutcome
from .engine import ContextEngine as ContextEngine
from .engine import EngineOptions as EngineOptions
from .engine import FileTools as FileTools
from .engine import Summarizer as Summarizer
from .engine import pi_file_operation as pi_file_operation
from .pairs import PairRepair as PairRepair
from .pairs import pair_violations as pair_violations
from .pairs import repair_pairs as repair_pairs

__all__: list[str]  # the names above, in ruff's order (_lazy.attach_stub)
