"""The built-in tools (``read``, ``write``, ``edit``, ``bash``, and ``recall``, which the agent
offers once a session holds a compaction) and the tool interface.

A bad tool call never raises out of :func:`run_tool`: it becomes an error result the model sees.
"""

from pi_context import _lazy

__getattr__, __dir__ = _lazy.attach_stub(__name__, __file__)
