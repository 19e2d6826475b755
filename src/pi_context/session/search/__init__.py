"""Searching a session's whole history: the query and its hits (``query``), the full-text index
that is only a cache (``index``), and the searchable text of an entry (``text``).

::

    from pi_context.session.search import SearchIndex, search
"""

from pi_context import _lazy

__getattr__, __dir__ = _lazy.attach_stub(__name__, __file__)
