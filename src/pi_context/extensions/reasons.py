"""Why a session started or ended, as pi names the reasons of ``session_start`` and
``session_shutdown``.

Kept apart from the event payloads (:mod:`pi_context.extensions.events`) because the agent
and the command line name these reasons on every start, and the payload classes are only
needed when an extension is loaded.
"""

from __future__ import annotations

from typing import Literal

__all__ = ["SessionReason", "ShutdownReason"]

SessionReason = Literal["startup", "new", "resume", "fork", "reload"]
"""Why a session (re)started: pi's ``session_start`` reasons."""
ShutdownReason = Literal["quit", "reload", "new", "resume", "fork"]
"""Why a session ended: pi's ``session_shutdown`` reasons."""
