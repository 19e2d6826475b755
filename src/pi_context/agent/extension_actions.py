"""What extensions may do to the live session (pi's extension API actions).

:class:`SessionExtensionActions` implements :class:`~pi_context.extensions.ExtensionActions` over the
session's collaborators: the loadout (active tools), the run control (messages, which may start
a run) and the session file (``append_entry``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ._run import RunControl
from ._state import AgentState
from .compaction_control import OperationGuard
from .loadout import Loadout

if TYPE_CHECKING:
    from pi_context.extensions.events import CustomMessageDraft

__all__ = ["SessionExtensionActions"]


class SessionExtensionActions:
    """The actions extensions may take on one agent session."""

    __slots__ = ("_guard", "_loadout", "_runs", "_state")

    def __init__(
        self, state: AgentState, loadout: Loadout, runs: RunControl, guard: OperationGuard
    ) -> None:
        self._state = state
        self._loadout = loadout
        self._runs = runs
        self._guard = guard

    def get_active_tools(self) -> list[str]:
        return self._loadout.active_tools()

    def set_active_tools(self, names: Sequence[str]) -> None:
        self._loadout.set_active_tools(names)

    def send_message(self, message: CustomMessageDraft, *, trigger_turn: bool = False) -> None:
        self._runs.deliver(message, trigger_turn=trigger_turn and not self._guard.running)

    def append_entry(self, custom_type: str, data: Any = None) -> None:
        self._state.session.append_custom(custom_type, data)
