"""pi-compatible sessions: the JSONL file, the entry tree and the context projection.

::

    from pi_context.session import Session
    with Session.open("session.jsonl") as s:
        for message in s.projection().messages: ...
"""

from pi_context import _lazy

__getattr__, __dir__ = _lazy.attach_stub(__name__, __file__)
