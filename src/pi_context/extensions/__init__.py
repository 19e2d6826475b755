"""Extensions: Python modules with ``register(pi)`` that subscribe to agent events.

Load them with :func:`load_extensions` (agent dir, trusted project dir, entry points, explicit
paths) and dispatch with the returned :class:`ExtensionRunner`. Handlers are registered with
``pi.on(name, fn)`` (pi's style) or as typed methods of an :class:`ExtensionHooks` subclass
(``pi.add_hooks(...)``). Hook payloads and result types live in
:mod:`pi_context.extensions.events`; notifications are the agent's own events
(:mod:`pi_context.events`). A ``context`` handler that works with whole transcripts finds the
replayed system head of one with :func:`pi_context.prompt.get_current_system_message`.
"""

from typing import TYPE_CHECKING

from pi_context import _lazy

if TYPE_CHECKING:
    from pi_context.extensions.api import Extension, ExtensionAPI, Handler, RegisteredCommand
    from pi_context.extensions.context import (
        ExtensionActions,
        ExtensionContext,
        ExtensionUI,
        SessionControl,
    )
    from pi_context.extensions.discovery import discover_extension_paths
    from pi_context.extensions.hooks import ExtensionHooks
    from pi_context.extensions.loader import load_extensions
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

_HOMES = _lazy.homes(
    {
        "pi_context.extensions.api": (
            "Extension",
            "ExtensionAPI",
            "Handler",
            "RegisteredCommand",
        ),
        "pi_context.extensions.context": (
            "ExtensionActions",
            "ExtensionContext",
            "ExtensionUI",
            "SessionControl",
        ),
        "pi_context.extensions.discovery": ("discover_extension_paths",),
        "pi_context.extensions.hooks": ("ExtensionHooks",),
        "pi_context.extensions.loader": ("load_extensions",),
        "pi_context.extensions.runner": (
            "ExtensionRunner",
            "UnknownResultKeyError",
        ),
    }
)
"""Where each public name lives; imported from there when first used."""

__getattr__, __dir__ = _lazy.hooks(globals(), _HOMES, __all__)
