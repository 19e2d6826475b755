"""What every collaborator of one :class:`~pi_context.agent.session.AgentSession` shares.

:class:`AgentState` is the small shared record the facade builds once and hands to each
collaborator (loadout, compaction control, navigation, recovery, the run): the session, the
model, the loaded resources and settings, the extension runner, where events go, and the
per-entry caches that the compaction decisions and the stats share. Collaborators read and
write its public attributes; none of them reaches into another collaborator.

**Where events go** (:class:`EventBus`): the iteration of the running prompt and every
subscriber. The running prompt attaches a queue (:meth:`EventBus.attach`) that its
``prompt()`` iteration drains; subscribers (:meth:`EventBus.subscribe`) receive every event,
also those emitted outside a prompt (a manual compaction, a navigation).

**Branch positions** (:class:`BranchPositions`): facts about the current branch that the
compaction checks need, kept across checks. The checks run up to three times per turn, and
each used to scan the whole branch (where is the latest compaction, where is this entry) and
the whole context (is any ``context_edit`` in it). :class:`BranchPositions` scans only what was
appended since the previous call:

- a root→leaf path is fixed by its last entry (entries are append-only tree nodes with stable
  ids), so when a new branch holds the previously seen last entry id at the same position,
  everything before it is unchanged;
- a projection's context entries are a function of the path that starts with the latest
  compaction (or the root), so when the new context starts with the same entry and holds the
  previously seen last entry at the same position, its prefix is unchanged too. An edit that
  re-projects an earlier entry keeps that entry in place (and appends the ``context_edit``).

Anything else (a new compaction, navigation to another branch) is a full rescan, which is what
every check did before.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pi_context.compaction.accounting import TokenCache
from pi_context.errors import PiContextError, ProviderError
from pi_context.model import Model
from pi_context.resources.loader import LoadedResources, ResourceLoader
from pi_context.resources.settings import (
    CompactionSettings,
    RetrySettings,
    compaction_settings_for,
    deep_merge_settings,
    retry_settings_for,
)
from pi_context.session import Session
from pi_context.session.entries import Entry
from pi_context.session.projection import ProjectedEntry

from .queues import PromptQueue, is_queue_mode
from .tool_selection import ToolSelection

if TYPE_CHECKING:
    from contextlib import AbstractAsyncContextManager

    from pi_context.events import AgentEvent
    from pi_context.extensions.runner import ExtensionRunner
    from pi_context.mcp.manager import McpManager
    from pi_context.store.binding import StoreBinding

__all__ = ["AgentState", "BranchPositions", "EventBus", "Sleep"]


Sleep = Callable[[float], Awaitable[Any]]
"""An injectable ``asyncio.sleep`` (retry waits)."""


class AgentState:
    """The session, model, resources, settings, extensions, event bus and shared caches."""

    def __init__(
        self,
        session: Session,
        *,
        cwd: str,
        model: Model | None,
        loader: ResourceLoader,
        resources: LoadedResources,
        extensions: ExtensionRunner | None,
        settings_override: Mapping[str, Any] | None = None,
        sleep: Sleep | None = None,
        tool_selection: ToolSelection | None = None,
        mcp: McpManager | None = None,
    ) -> None:
        self.session = session
        self.mcp = mcp
        """The session's MCP servers (``None``: MCP is off, as for library sessions by default)."""
        self.tool_selection = tool_selection
        """``--tools`` and friends (:mod:`.tool_selection`); ``None``: pi without flags."""
        self.cwd = cwd
        self.model: Model | None = model
        self.loader = loader
        self.resources = resources
        self.extensions = extensions
        self.settings_override: dict[str, Any] = dict(settings_override or {})
        self.sleep: Sleep = sleep or asyncio.sleep
        self.events = EventBus()
        self.queue = PromptQueue(self.events.emit)
        """Steering and follow-up messages (modes from ``steeringMode``/``followUpMode``)."""
        settings = self.settings_data
        for key, attr in (("steeringMode", "steering_mode"), ("followUpMode", "follow_up_mode")):
            if is_queue_mode(settings.get(key)):
                setattr(self.queue, attr, settings[key])
        self.token_cache = TokenCache()
        """Per-entry token estimates shared by the checks, the stats and the compactor."""
        self.positions = BranchPositions()
        """Branch positions shared by the checks and the stats (see :class:`BranchPositions`)."""
        self.binding: StoreBinding | None = None
        """A stored session's binding to its store (``None``: a file or in-memory session)."""

    def _bound(self) -> StoreBinding | None:
        """The binding, while the session is still the bound one (not a fork run since)."""
        binding = self.binding
        return binding if binding is not None and binding.session is self.session else None

    async def make_durable(self) -> None:
        """Make the session's appends so far durable: a stored session's queued entries are
        committed to its store (the store's typed error when that fails, nothing dropped); a
        file's lines are flushed to the disk (``fsync``, unless :attr:`Session.fsync` is off) in
        a worker thread, so the event loop never waits on the disk."""
        binding = self._bound()
        if binding is not None:
            await binding.commit()
            return
        session = self.session
        if session.fsync and session.file_path is not None:
            await asyncio.to_thread(session.sync)

    async def commit(self) -> None:
        """A stored session's queued entries committed to its store (nothing for a file,
        whose appends are written as they are made)."""
        binding = self._bound()
        if binding is not None:
            await binding.commit()

    def turn(self) -> AbstractAsyncContextManager[object]:
        """Hold a stored session's lease for an operation that appends (a run, a manual
        compaction, a tree move); nothing to hold for a file or in-memory session."""
        binding = self._bound()
        return binding.turn() if binding is not None else contextlib.nullcontext()

    def now_ms(self) -> int:
        """The session's clock (Unix ms): every message the agent makes is stamped with it."""
        return self.session.now_ms()

    def require_model(self) -> Model:
        """The model, or a clear error when none is configured."""
        if self.model is None:
            raise PiContextError("No model configured: pass model= or configure an API key")
        return self.model

    def require_usable_model(self) -> Model:
        """The model, or the error its adapter already knows it would fail with (no API key
        for its provider): raised before a prompt is stored, so that, as in pi, a prompt that
        cannot be sent leaves nothing behind (no session file is created for it)."""
        model = self.require_model()
        problem = getattr(model, "credential_error", None)
        if isinstance(problem, str):
            where = getattr(model, "where", None)
            detail = f" ({where})" if isinstance(where, str) and where else ""
            raise ProviderError(problem + detail, kind="authentication")
        return model

    @property
    def settings_data(self) -> dict[str, Any]:
        """The loaded settings files with the caller's override merged over them."""
        return deep_merge_settings(self.resources.settings.data, self.settings_override)

    def compaction_settings(self) -> CompactionSettings:
        """Compaction settings for the current model, fitted to its context window."""
        info = self.model.info if self.model is not None else None
        settings = compaction_settings_for(
            self.settings_data,
            info.provider if info is not None else None,
            info.id if info is not None else None,
        )
        return settings.fit_to_window(info.context_window) if info is not None else settings

    def retry_settings(self) -> RetrySettings:
        return retry_settings_for(self.settings_data)


# -- where events go -------------------------------------------------------------------------------


class EventBus:
    """Fans each event out to the attached prompt stream and to the subscribers, in order."""

    __slots__ = ("_listeners", "_stream")

    def __init__(self) -> None:
        self._listeners: list[Callable[[AgentEvent], None]] = []
        self._stream: asyncio.Queue[AgentEvent | None] | None = None

    def subscribe(self, callback: Callable[[AgentEvent], None]) -> Callable[[], None]:
        """Add a subscriber; returns the function that removes it."""
        self._listeners.append(callback)

        def unsubscribe() -> None:
            if callback in self._listeners:
                self._listeners.remove(callback)

        return unsubscribe

    def attach(self, stream: asyncio.Queue[AgentEvent | None]) -> None:
        """Send events to ``stream`` as well (the running prompt's iteration)."""
        self._stream = stream

    def detach(self, stream: asyncio.Queue[AgentEvent | None]) -> None:
        if self._stream is stream:
            self._stream = None

    def emit(self, event: AgentEvent) -> None:
        if self._stream is not None:
            self._stream.put_nowait(event)
        self.notify_subscribers(event)

    def notify_subscribers(self, event: AgentEvent) -> None:
        """Subscribers only (an event the caller yields itself)."""
        for listener in list(self._listeners):
            listener(event)


# -- branch positions ------------------------------------------------------------------------------


class BranchPositions:
    """Latest compaction and entry positions of a branch; ``context_edit`` presence in a
    context. Each query takes the current branch (or context) and catches up on it first."""

    __slots__ = (
        "_branch_last",
        "_branch_len",
        "_compaction",
        "_ctx_edit",
        "_ctx_first",
        "_ctx_last",
        "_ctx_len",
        "_positions",
    )

    def __init__(self) -> None:
        self._branch_len = 0
        self._branch_last: str | None = None
        self._compaction = -1
        self._positions: dict[str, int] = {}
        self._ctx_len = 0
        self._ctx_first: str | None = None
        self._ctx_last: str | None = None
        self._ctx_edit = False

    def _catch_up(self, branch: Sequence[Entry]) -> None:
        seen = self._branch_len
        if seen and not (len(branch) >= seen and branch[seen - 1].id == self._branch_last):
            seen = 0
            self._compaction = -1
            self._positions = {}
        positions = self._positions
        for index in range(seen, len(branch)):
            entry = branch[index]
            positions.setdefault(entry.id, index)
            if entry.type == "compaction":
                self._compaction = index
        self._branch_len = len(branch)
        self._branch_last = branch[-1].id if branch else None

    def last_compaction(self, branch: Sequence[Entry]) -> int:
        """Position of the latest compaction on ``branch`` (-1: none)."""
        self._catch_up(branch)
        return self._compaction

    def position(self, branch: Sequence[Entry], entry_id: str) -> int | None:
        """First position of ``entry_id`` on ``branch``, if it is there."""
        self._catch_up(branch)
        return self._positions.get(entry_id)

    def has_context_edit(self, entries: Sequence[ProjectedEntry]) -> bool:
        """Whether any of a projection's context entries is a ``context_edit``."""
        seen = self._ctx_len
        if seen and not (
            len(entries) >= seen
            and entries[0].entry.id == self._ctx_first
            and entries[seen - 1].entry.id == self._ctx_last
        ):
            seen = 0
            self._ctx_edit = False
        if not self._ctx_edit:
            self._ctx_edit = any(p.entry.type == "context_edit" for p in entries[seen:])
        self._ctx_len = len(entries)
        self._ctx_first = entries[0].entry.id if entries else None
        self._ctx_last = entries[-1].entry.id if entries else None
        return self._ctx_edit
