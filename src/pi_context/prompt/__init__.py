"""System-prompt sections, their diff/replay through transcript system messages, and the
request-time projections (forced prompt, collapsed prompt)."""

from pi_context import _lazy

__getattr__, __dir__ = _lazy.attach_stub(__name__, __file__)
