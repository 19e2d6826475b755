"""Resources that decide the system prompt: context files, SYSTEM.md/APPEND_SYSTEM.md, skills,
settings and project trust, gathered by :class:`ResourceLoader`."""

from pi_context import _lazy

__getattr__, __dir__ = _lazy.attach_stub(__name__, __file__)
