"""``pictx --mode rpc``: pi's RPC protocol (framing, records, commands, extension UI)."""

from pi_context import _lazy

__getattr__, __dir__ = _lazy.attach_stub(__name__, __file__)
