from .index import IndexedEntries as IndexedEntries
from .index import SearchIndex as SearchIndex
from .index import StaleIndexError as StaleIndexError
from .index import default_cache_dir as default_cache_dir
from .index import index_path_for as index_path_for
from .query import LAST_ENTRY as LAST_ENTRY
from .query import SearchHit as SearchHit
from .query import entry_texts as entry_texts
from .query import make_snippet as make_snippet
from .query import match_expression as match_expression
from .query import matching_lines as matching_lines
from .query import query_phrases as query_phrases
from .query import query_terms as query_terms
from .query import search as search
from .text import ENTRY_ROLES as ENTRY_ROLES
from .text import SNIPPET_CHARS as SNIPPET_CHARS
from .text import entry_text as entry_text

__all__: list[str]  # the names above, in ruff's order (_lazy.attach_stub)
