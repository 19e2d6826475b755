"""Extensions: Python modules with ``register(pi)`` that subscribe to agent events.

Load them with :func:`load_extensions` (agent dir, trusted project dir, entry points, explicit
paths) and dispatch with the returned :class:`ExtensionRunner`. Handlers are registered with
``pi.on(name, fn)`` (pi's style) or as typed methods of an :class:`ExtensionHooks` subclass
(``pi.add_hooks(...)``). Hook payloads and result types live in
:mod:`pi_context.extensions.events`; notifications are the agent's own events
(:mod:`pi_context.events`). ``current_system_message`` is
:func:`pi_context.prompt.get_current_system_message` (the replayed system head a ``context``
handler's result is given), re-exported for handlers that work with whole transcripts.
"""

from pi_context.extensions.api import Extension, ExtensionAPI, Handler, RegisteredCommand
from pi_context.extensions.context import (
    ExtensionActions,
    ExtensionContext,
    ExtensionUI,
    SessionControl,
)
from pi_context.extensions.hooks import ExtensionHooks
from pi_context.extensions.loader import (
    discover_extension_paths,
    load_extensions,
)
from pi_context.extensions.runner import (
    ExtensionRunner,
    UnknownResultKeyError,
)

__all__ = [
    "Extension",
    "ExtensionAPI",
    "ExtensionActions",
    "ExtensionContext",
    "ExtensionHooks",
    "ExtensionRunner",
    "ExtensionUI",
    "Handler",
    "RegisteredCommand",
    "SessionControl",
    "UnknownResultKeyError",
    "discover_extension_paths",
    "load_extensions",
]
