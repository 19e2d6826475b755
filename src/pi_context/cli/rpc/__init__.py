"""``pictx --mode rpc``: pi's RPC protocol (framing, records, commands, extension UI)."""

from .mode import run_rpc, take_over_stdout

__all__ = ["run_rpc", "take_over_stdout"]
