"""Session exports: a self-contained HTML page and a branch-only JSONL session."""

from pi_context import _lazy

__getattr__, __dir__ = _lazy.attach_stub(__name__, __file__)
