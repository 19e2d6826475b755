from ._live import PathView as PathView
from .entries import ENTRY_TYPES as ENTRY_TYPES
from .entries import Entry as Entry
from .entries import make_entry as make_entry
from .entry_store import EntryStore as EntryStore
from .entry_store import EntryTree as EntryTree
from .problems import LoadProblem as LoadProblem
from .projection import ModelRef as ModelRef
from .projection import ProjectedEntry as ProjectedEntry
from .projection import Projection as Projection
from .projection import build_projection as build_projection
from .projection import convert_to_llm as convert_to_llm
from .projection import projection_of_path as projection_of_path
from .search.index import SearchIndex as SearchIndex
from .search.query import SearchHit as SearchHit
from .store import Session as Session
from .store import new_entry_id as new_entry_id
from .store import new_session_id as new_session_id
from .tree import TreeIndex as TreeIndex

__all__: list[str]  # the names above, in ruff's order (_lazy.attach_stub)
