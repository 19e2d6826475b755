"""Extensions: Python modules with ``register(pi)`` that subscribe to agent events.

Load them with :func:`load_extensions` (agent dir, trusted project dir, entry points, explicit
paths) and dispatch with the returned :class:`ExtensionRunner`. Handlers are registered with
``pi.on(name, fn)`` (pi's style) or as typed methods of an :class:`ExtensionHooks` subclass
(``pi.add_hooks(...)``). Hook payloads and result types live in
:mod:`pi_context.extensions.events`; notifications are the agent's own events
(:mod:`pi_context.events`). A ``context`` handler that works with whole transcripts finds the
replayed system head of one with :func:`pi_context.prompt.get_current_system_message`.
"""

from pi_context import _lazy

__getattr__, __dir__ = _lazy.attach_stub(__name__, __file__)
