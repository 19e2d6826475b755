"""``AgentSession``: the library facade over a session file, a model, tools and extensions.

::

    sess = await AgentSession.create(cwd="/my/project", model=model)
    async for event in sess.prompt("Fix the failing test"):
        ...
    await sess.compact("keep the API decisions")
    await sess.navigate(entry_id, summarize=True)

A prompt runs as a background task whose events ``prompt()`` yields; ``abort()`` cancels it at
any point and leaves a valid session (see :mod:`pi_context.agent._loop`). A prompt sent while a
run is busy is queued and delivered before the run's next request (or as a follow-up turn).

The facade owns one collaborator per concept and delegates to them; each is built once here:

- :class:`~._state.AgentState` (built from :class:`~.options.AgentOptions`): the session,
  model, resources, settings, extensions, event bus, queue and shared caches every collaborator
  reads;
- :class:`~.loadout.Loadout`: tools, the active set, the run's prompt options, the system patch;
- :class:`~._compaction.CompactionControl`: manual, threshold and overflow compactions;
- :class:`~.navigation.Navigator`: ``/tree``;
- :class:`~._run.Recovery`: the pre-prompt check, retries and overflow recovery;
- :class:`~._request.RequestPipeline`: each request, stage by stage;
- :class:`~._run.SessionLoopCallbacks`: what the loop talks to (not this facade);
- :class:`~._run.RunControl`: one run from its trigger to ``agent_settled``;
- :class:`~._run.SessionExtensionActions`: what extensions may do to the live session.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Callable, Coroutine, Generator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Unpack

from pi_context.errors import PiContextError, StoreError
from pi_context.events import AgentSettled, QueueUpdate
from pi_context.extensions.reasons import SessionReason, ShutdownReason
from pi_context.messages import AgentMessage, ImageContent
from pi_context.model import Model
from pi_context.model.thinking import clamp_thinking_level
from pi_context.resources.loader import LoadedResources
from pi_context.resources.settings import CompactionSettings, RetrySettings, deep_merge_settings
from pi_context.resources.skills import expand_skill_command
from pi_context.session import Session
from pi_context.tools import Tool

from . import _extension_hooks as extension_dispatch
from ._compaction import CompactionControl, OperationGuard
from ._request import (
    RequestPipeline,
    recorded_thinking_level,
    startup_thinking_level,
    switch_thinking_level,
)
from ._run import (
    Recovery,
    RunControl,
    SessionExtensionActions,
    SessionLoopCallbacks,
    user_prompt,
)
from ._state import AgentState
from ._transform import TransformChain
from .loadout import Loadout
from .navigation import NavigationResult, Navigator
from .options import AgentOptions, assemble, checked_options
from .queues import QueueMode
from .stats import CacheTracker, SessionStats, context_tokens, session_stats

if TYPE_CHECKING:
    from pi_context.events import AgentEvent
    from pi_context.extensions.api import RegisteredCommand
    from pi_context.extensions.context import ExtensionUI
    from pi_context.extensions.events import CustomMessageDraft, Event
    from pi_context.extensions.runner import ExtensionRunner
    from pi_context.mcp import McpManager
    from pi_context.prompt import SystemPromptOptions
    from pi_context.store import SessionRef, SessionStore
    from pi_context.store.binding import StoreBinding

__all__ = ["AgentOptions", "AgentSession", "Opening", "SessionStats"]


class AgentSession:
    """One agent over one session. Create with :meth:`create` or :meth:`open`."""

    def __init__(self, state: AgentState, tools: Sequence[Tool]) -> None:
        self._state = state
        runner = state.extensions
        self._loadout = loadout = Loadout(state, tools)
        self._guard = guard = OperationGuard()
        chain = TransformChain(
            context_phase=runner.emit_context if runner is not None else None,
            hidden_tools=lambda: loadout.options().hidden_tools,
            forced_prompt=lambda: loadout.forced_prompt,
            clock=state.now_ms,
        )
        requests = RequestPipeline(state, loadout, chain)
        self._compaction = compaction = CompactionControl(state, guard, requests.build)
        self._navigator = Navigator(state, loadout, guard)
        self._recovery = recovery = Recovery(state, compaction)
        self.cache = CacheTracker()
        callbacks = SessionLoopCallbacks(
            state,
            loadout=loadout,
            compaction=compaction,
            recovery=recovery,
            cache=self.cache,
        )
        self._runs = RunControl(state, loadout, recovery, callbacks=callbacks, requests=requests)
        self._unstarted: _PendingPrompt | None = None  # the latest prompt() not yet iterated
        self._notices: list[asyncio.Task[None]] = []  # extension notifications under way
        self._closed = False
        self._ui: tuple[ExtensionUI, str] | None = None
        self._early_notices: list[tuple[str, str]] = []
        self._notice_listener: Callable[[str, str], None] | None = None
        self._shutdown_requested = False
        self._name_listener: Callable[[str | None], None] | None = None
        self._shutdown_listener: Callable[[], None] | None = None
        if state.mcp is not None:
            state.mcp.notify = self._mcp_notice
        if runner is not None:
            from pi_context.extensions.context import ExtensionContext  # loaded with the runner

            runner.on_error(state.events.emit)
            runner.bind_host(
                SessionExtensionActions(
                    self._state, loadout, self._runs, guard, self.set_session_name
                ),
                lambda: ExtensionContext(
                    Path(state.cwd),
                    session=self,
                    has_ui=self._ui is not None,
                    get_system_prompt=loadout.system_prompt,
                    ui=self._ui[0] if self._ui is not None else None,
                    mode=self._ui[1] if self._ui is not None else None,
                    is_project_trusted=lambda: state.resources.trusted,
                    shutdown=self.request_shutdown,
                ),
            )

    def _mcp_notice(self, message: str, kind: str) -> None:
        """MCP notices go where pi's go: the front end's ``notify`` (or the listener of
        :meth:`on_notice`); one raised before either is attached waits for it."""
        if self._ui is not None:
            self._ui[0].notify(message, kind)
        elif self._notice_listener is not None:
            self._notice_listener(message, kind)
        else:
            self._early_notices.append((message, kind))

    def request_shutdown(self) -> None:
        """An extension asked for an orderly end (``ctx.shutdown()``): the front end that
        listens (:meth:`on_shutdown_request`) decides when; without one nothing happens."""
        self._shutdown_requested = True
        if self._shutdown_listener is not None:
            self._shutdown_listener()

    def on_session_name(self, listener: Callable[[str | None], None] | None) -> None:
        """Be told the name as stored each time the session is named (whoever names it:
        ``/name``, RPC, an extension's ``pi.set_session_name``)."""
        self._name_listener = listener

    def on_shutdown_request(self, listener: Callable[[], None] | None) -> None:
        """Be told when an extension asks to end the process (a request made before the
        listener came is passed on at once)."""
        self._shutdown_listener = listener
        if listener is not None and self._shutdown_requested:
            listener()

    def on_notice(self, listener: Callable[[str, str], None] | None) -> None:
        """Receive the session's own notices (MCP start-up problems, ``/mcp`` answers) as
        ``(message, kind)`` when no extension UI is attached (the interactive terminal)."""
        self._notice_listener = listener
        if listener is not None:
            early, self._early_notices = self._early_notices, []
            for message, kind in early:
                listener(message, kind)

    @property
    def mcp(self) -> McpManager | None:
        """The session's MCP servers (``None`` when MCP is off)."""
        return self._state.mcp

    def set_extension_ui(self, ui: ExtensionUI | None, mode: str | None = None) -> None:
        """The front end's dialogs for extension handlers (``ctx.ui``, ``ctx.mode``) from now
        on; ``None`` removes them."""
        runner = self._state.extensions
        if ui is not None and runner is not None:
            from pi_context.extensions.ui_prompts import PromptWatchingUI

            # dialogs are announced (ui_prompt_start / _end) to the extensions that listen
            ui = PromptWatchingUI(ui, runner.emit)
        self._ui = (ui, mode or "") if ui is not None else None
        if ui is not None:
            early, self._early_notices = self._early_notices, []
            for message, kind in early:
                ui.notify(message, kind)

    # -- construction ---------------------------------------------------------------------------

    @classmethod
    def create(
        cls,
        *,
        cwd: str | os.PathLike[str] | None = None,
        session_file: str | os.PathLike[str] | None = None,
        store: SessionStore | None = None,
        tenant: str | None = None,
        **options: Unpack[AgentOptions],
    ) -> Opening:
        """A new session in ``cwd`` (in memory when ``session_file`` is ``None``); ``options``
        are described in :class:`AgentOptions` and checked now, at the call.

        With ``store`` (a :mod:`pi_context.store` store) the session is kept there, in
        ``tenant`` (default ``""``), under the ``session_id`` option (else a fresh id): its
        header is stored at once, its entries as the agent commits them (see :meth:`commit`),
        and :attr:`ref` names it.

        Await it (``sess = await AgentSession.create(...)``) or use it as an async context
        manager, which closes the session (:meth:`aclose`) when the block ends::

            async with AgentSession.create(cwd=".", model=model) as sess:
                await sess.run("hello")
        """
        checked = checked_options(
            "create",
            {"cwd": cwd, "session_file": session_file, "store": store, "tenant": tenant, **options},
        )
        if store is None:
            if tenant is not None:
                raise TypeError("AgentSession.create(): tenant= needs store= (a stored session)")
            return Opening(cls._create(cwd, session_file, checked))
        if session_file is not None:
            raise TypeError(
                "AgentSession.create(): give store= or session_file=, not both (a session "
                "lives in one place)"
            )
        return Opening(cls._create_stored(cwd, store, tenant or "", checked))

    @classmethod
    async def _create_stored(
        cls,
        cwd: str | os.PathLike[str] | None,
        store: SessionStore,
        tenant: str,
        options: AgentOptions,
    ) -> AgentSession:
        from pi_context.store.binding import StoreBinding

        work = os.path.abspath(os.fspath(cwd) if cwd is not None else os.getcwd())
        binding = await StoreBinding.create(
            store,
            tenant=tenant,
            cwd=work,
            session_id=options.get("session_id"),
            timestamp=options.get("timestamp"),
            parent_session=options.get("parent_session"),
            ids=options.get("ids"),
            clock=options.get("clock"),
        )
        state, tools = assemble(binding.session, work, options)
        state.binding = binding
        sess = cls(state, tools)
        await sess._started(
            options.get("start_reason", "startup"), options.get("previous_session_file")
        )
        await sess.commit()
        return sess

    @classmethod
    async def _create(
        cls,
        cwd: str | os.PathLike[str] | None,
        session_file: str | os.PathLike[str] | None,
        options: AgentOptions,
    ) -> AgentSession:
        work = os.path.abspath(os.fspath(cwd) if cwd is not None else os.getcwd())
        session = Session.create(
            session_file,
            cwd=work,
            session_id=options.get("session_id"),
            timestamp=options.get("timestamp"),
            parent_session=options.get("parent_session"),
            ids=options.get("ids"),
            clock=options.get("clock"),
        )
        sess = cls(*assemble(session, work, options))
        await sess._started(
            options.get("start_reason", "startup"), options.get("previous_session_file")
        )
        return sess

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str] | None = None,
        *,
        cwd: str | os.PathLike[str] | None = None,
        store: SessionStore | None = None,
        ref: SessionRef | None = None,
        **options: Unpack[AgentOptions],
    ) -> Opening:
        """Resume a session file, or with ``store`` and ``ref`` a stored session (a ref its
        tenant does not hold: :class:`~pi_context.errors.SessionNotFoundError`); it runs in
        its header's ``cwd`` unless ``cwd`` is given. Awaitable, or an async context manager,
        as :meth:`create`."""
        checked = checked_options("open", {"cwd": cwd, "store": store, "ref": ref, **options})
        if store is not None or ref is not None:
            if path is not None:
                raise TypeError(
                    "AgentSession.open(): give a path or store= and ref=, not both (a session "
                    "lives in one place)"
                )
            if store is None or ref is None:
                missing = "ref= (the SessionRef to open)" if ref is None else "store="
                raise TypeError(f"AgentSession.open(): a stored session needs {missing}")
            return Opening(cls._open_stored(store, ref, cwd, checked))
        if not isinstance(path, str | os.PathLike):
            raise TypeError(f"AgentSession.open(): path must be a path, not {type(path).__name__}")
        return Opening(cls._open(path, cwd, checked))

    @classmethod
    async def _open_stored(
        cls,
        store: SessionStore,
        ref: SessionRef,
        cwd: str | os.PathLike[str] | None,
        options: AgentOptions,
    ) -> AgentSession:
        from pi_context.store.binding import StoreBinding

        binding = await StoreBinding.open(
            store, ref, ids=options.get("ids"), clock=options.get("clock")
        )
        sess = await cls._restored(binding.session, cwd, options, "resume", binding=binding)
        await sess.commit()
        return sess

    @classmethod
    async def _open(
        cls,
        path: str | os.PathLike[str],
        cwd: str | os.PathLike[str] | None,
        options: AgentOptions,
    ) -> AgentSession:
        session = Session.open(path, ids=options.get("ids"), clock=options.get("clock"))
        return await cls._restored(session, cwd, options, "resume")

    @classmethod
    async def _restored(
        cls,
        session: Session,
        cwd: str | os.PathLike[str] | None,
        options: AgentOptions,
        reason: SessionReason,
        *,
        binding: StoreBinding | None = None,
    ) -> AgentSession:
        """Run on an existing session, in its header's ``cwd`` unless ``cwd`` is given, with
        its recorded loadout restored; ``reason`` is the start reason unless one is given."""
        work = os.fspath(cwd) if cwd is not None else (session.cwd or os.getcwd())
        state, tools = assemble(session, os.path.abspath(work), options)
        state.binding = binding
        sess = cls(state, tools)
        await sess._started(
            options.get("start_reason", reason),
            options.get("previous_session_file"),
            restore=True,
        )
        return sess

    @classmethod
    async def adopt(
        cls,
        session: Session,
        *,
        cwd: str | os.PathLike[str] | None = None,
        **options: Unpack[AgentOptions],
    ) -> AgentSession:
        """Run on a :class:`Session` built elsewhere (a fork or clone of another session);
        its recorded loadout is restored as for :meth:`open`. ``start_reason`` defaults to
        ``fork``."""
        checked = checked_options("adopt", {"cwd": cwd, **options})
        return await cls._restored(session, cwd, checked, "fork")

    async def __aenter__(self) -> AgentSession:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def _started(
        self, reason: SessionReason, previous: str | None, *, restore: bool = False
    ) -> None:
        if self._state.mcp is not None:
            self._state.mcp.start()  # in the background; the first prompt waits if it must
        selection = self._state.tool_selection
        # --tools replaces the defaults, so the branch's recorded loadout is not restored
        if restore and not (selection is not None and selection.replaces_defaults):
            self._loadout.restore_from_branch()
        mcp = self._state.mcp
        if mcp is not None:
            warning = mcp.unreachable_warning(self._loadout.active_tools())
            if warning is not None:
                self._mcp_notice(warning, "warning")
        await extension_dispatch.session_started(self._state, reason, previous)
        model = self._state.model
        if restore and model is not None:
            recorded = self.session.stored_projection().model
            if recorded is not None and (recorded["provider"], recorded["modelId"]) == (
                model.info.provider,
                model.info.id,
            ):
                await self._notify_model_select(model, None, "restore")

    # -- state ------------------------------------------------------------------------------------

    @property
    def session(self) -> Session:
        return self._state.session

    @session.setter
    def session(self, session: Session) -> None:
        """Run on another session object (a fork of this one)."""
        self._state.session = session

    @property
    def ref(self) -> SessionRef | None:
        """The stored session this agent runs on (``None`` for a file or in-memory session)."""
        binding = self._state.binding
        return binding.ref if binding is not None else None

    @property
    def store(self) -> SessionStore | None:
        """The store of the stored session this agent runs on (``None`` for a file or
        in-memory session)."""
        binding = self._state.binding
        return binding.store if binding is not None else None

    async def commit(self) -> None:
        """Store a stored session's entries appended so far (the agent does it at the end of
        every turn and run, after every compaction and tree move; call it after appending to
        :attr:`session` yourself). Until then they are in this process's memory only. A
        failure raises the store's typed error and drops nothing: call again to retry. Does
        nothing for a file session, whose entries are written as they are appended."""
        await self._state.commit()

    @property
    def cwd(self) -> str:
        return self._state.cwd

    @property
    def model(self) -> Model:
        """The model (raises :class:`~pi_context.errors.PiContextError` when none is set)."""
        return self._state.require_model()

    @property
    def model_or_none(self) -> Model | None:
        return self._state.model

    def set_model(self, model: Model, *, source: Literal["set", "cycle"] = "set") -> None:
        """Switch models (recorded as a ``model_change`` entry); the prompt cache starts cold.
        Extensions get ``model_select`` with ``source``."""
        previous = self._state.model
        self._state.model = model
        self.session.append_model_change(model.info.provider, model.info.id)
        self.cache.reset()
        if self._state.extensions is not None:
            from pi_context.extensions.events import ModelSelectEvent

            self._notify_soon(
                ModelSelectEvent(
                    model.info, previous.info if previous is not None else None, source
                )
            )

    def set_session_name(self, name: str) -> None:
        """Name the session (a ``session_info`` entry, as ``/name`` and RPC
        ``set_session_name`` record it); extensions get ``session_info_changed`` with the
        name as stored."""
        self.session.append_session_info(name)
        if self._name_listener is not None:
            self._name_listener(self.session.name)
        if self._state.extensions is not None:
            from pi_context.extensions.events import SessionInfoChangedEvent

            self._notify_soon(SessionInfoChangedEvent(self.session.name))

    def refresh_model(self, model: Model) -> None:
        """The same model with other credentials (after ``/login``): nothing is recorded and
        extensions are not told; a different model goes through :meth:`set_model`."""
        current = self._state.model
        if current is None or (current.info.provider, current.info.id) != (
            model.info.provider,
            model.info.id,
        ):
            self.set_model(model)
            return
        self._state.model = model

    @property
    def thinking_level(self) -> str:
        """The level in effect: the branch's last ``thinking_level_change`` (``off`` without)."""
        return self.session.stored_projection().thinking_level

    def set_thinking_level(self, level: str) -> str:
        """Clamp ``level`` to the model and record a ``thinking_level_change`` when the level
        in effect changes (pi's ``setThinkingLevel``); returns the level in effect."""
        model = self._state.model
        chosen = clamp_thinking_level(model.info, level) if model is not None else "off"
        previous = self.thinking_level
        if chosen != previous:
            self.session.append_thinking_level_change(chosen)
            if self._state.extensions is not None:
                from pi_context.extensions.events import ThinkingLevelSelectEvent

                self._notify_soon(ThinkingLevelSelectEvent(chosen, previous))
        return chosen

    def apply_startup_thinking_level(self, requested: str | None, *, resumed: bool) -> str:
        """Choose the level as pi does at startup (:func:`._request.startup_thinking_level`)
        and record it: a new session starts with ``model_change`` (when it has a model) and
        ``thinking_level_change``, a resumed one gets an entry only when the level changes."""
        model = self._state.model
        recorded = recorded_thinking_level(self.session.branch_view()) if resumed else None
        level = startup_thinking_level(
            self.settings_data,
            model.info if model is not None else None,
            requested=requested,
            recorded=recorded,
            resumed=resumed,
        )
        if resumed:
            return self.set_thinking_level(level)
        if model is not None:  # pi starts a new session with both entries
            self.session.append_model_change(model.info.provider, model.info.id)
        self.session.append_thinking_level_change(level)
        return level

    def switch_model(
        self,
        model: Model,
        *,
        scoped_level: str | None = None,
        source: Literal["set", "cycle"] = "set",
    ) -> str:
        """Switch to ``model`` and pick the level as pi does on a model switch
        (:func:`._request.switch_thinking_level`); returns the level in effect."""
        current = self.thinking_level
        self.set_model(model, source=source)
        level = switch_thinking_level(
            self.settings_data, model.info, current=current, scoped=scoped_level
        )
        return self.set_thinking_level(level)

    @property
    def busy(self) -> bool:
        return self._runs.busy

    @property
    def compacting(self) -> bool:
        """A manual compaction or a tree navigation is running."""
        return self._guard.running

    @property
    def resources(self) -> LoadedResources:
        return self._state.resources

    @property
    def extensions(self) -> ExtensionRunner | None:
        return self._state.extensions

    @property
    def settings_data(self) -> dict[str, Any]:
        return self._state.settings_data

    def compaction_settings(self) -> CompactionSettings:
        return self._state.compaction_settings()

    def retry_settings(self) -> RetrySettings:
        return self._state.retry_settings()

    def override_settings(self, patch: Mapping[str, Any]) -> None:
        """Merge ``patch`` over the settings of this session from now on (e.g. RPC's
        ``set_auto_compaction``, which also writes the global settings file)."""
        state = self._state
        state.settings_override = deep_merge_settings(state.settings_override, patch)

    @property
    def system_prompt(self) -> str:
        """The prompt text as the model would get it now (forced text when a run forces one)."""
        return self._loadout.system_prompt()

    def system_prompt_options(self) -> SystemPromptOptions:
        """The base inputs of the system prompt as they stand now (resources, active tools,
        sections), without what a run's ``before_agent_start`` handlers change."""
        return self._loadout.base_options()

    def get_active_tools(self) -> list[str]:
        return self._loadout.active_tools()

    def get_all_tools(self) -> list[str]:
        """The names of every tool the session has (active or not), in registration order."""
        return self._loadout.registered_tools()

    def set_active_tools(self, names: Sequence[str]) -> None:
        """Change the loadout; the prompt and declarations are patched at the next turn."""
        self._loadout.set_active_tools(names)

    def subscribe(self, callback: Callable[[AgentEvent], None]) -> Callable[[], None]:
        """Receive every event (also those outside ``prompt()``, e.g. of ``compact()``).

        Returns a function that unsubscribes.
        """
        return self._state.events.subscribe(callback)

    # -- prompting --------------------------------------------------------------------------------

    def prompt(
        self, text: str, *, images: Sequence[ImageContent] = ()
    ) -> AsyncIterator[AgentEvent]:
        """Send a prompt and iterate the events of the run it starts.

        While a run is busy the message is queued instead (delivered before that run's next
        request); this call then yields one ``queue_update`` and returns. An :meth:`abort`
        between this call and the first step of the iteration cancels the prompt before it
        starts: nothing is stored or sent, and the iteration yields only ``agent_settled``
        (aborted).
        """
        pending = _PendingPrompt()
        self._unstarted = pending
        return self._prompt(text, images, pending)

    async def _prompt(
        self, text: str, images: Sequence[ImageContent], pending: _PendingPrompt
    ) -> AsyncIterator[AgentEvent]:
        if self._unstarted is pending:
            self._unstarted = None
        if pending.aborted:
            yield self._settle_unstarted()
            return
        if self.busy:
            yield self.steer(text, images=images)
            return
        self._ensure_idle_for("prompt")
        async for event in self._runs.stream_prompt(text, images):
            yield event

    def _settle_unstarted(self) -> AgentSettled:
        """The only event of a prompt aborted before its run started (subscribers get it too)."""
        settled = AgentSettled(aborted=True)
        self._state.events.notify_subscribers(settled)
        return settled

    async def run(self, text: str, *, images: Sequence[ImageContent] = ()) -> list[AgentEvent]:
        """Run a prompt to the end and return its events (a convenience over :meth:`prompt`)."""
        return [event async for event in self.prompt(text, images=images)]

    def abort(self) -> None:
        """Stop the running prompt (and its compaction or retry wait) as soon as possible;
        queued steering and follow-ups stay queued for the next run, as in pi (see
        :meth:`clear_queue`). A prompt requested but not started yet (see :meth:`prompt`) is
        cancelled as well."""
        if self._unstarted is not None:
            self._unstarted.aborted = True
            self._unstarted = None
        self._runs.abort()
        self._guard.abort()

    async def wait_idle(self) -> None:
        """Until the current run (if any) has settled."""
        await self._runs.wait()

    def abort_retry(self) -> bool:
        """Cancel a pending automatic-retry delay (the run then ends with the failed attempt,
        ``auto_retry_end`` saying ``Retry cancelled``); returns whether one was pending."""
        return self._recovery.abort_retry()

    # -- steering and follow-up queues ---------------------------------------------------------

    def steer(self, text: str, *, images: Sequence[ImageContent] = ()) -> QueueUpdate:
        """Queue a steering message: delivered after the running turn's tool calls (or at the
        start of the next run when idle). Emits and returns the ``queue_update``."""
        return self._state.queue.steer(self._queued_message(text, images))

    def follow_up(self, text: str, *, images: Sequence[ImageContent] = ()) -> QueueUpdate:
        """Queue a follow-up: delivered only when the agent would otherwise stop."""
        return self._state.queue.follow_up(self._queued_message(text, images))

    def clear_queue(self) -> tuple[list[str], list[str]]:
        """Drop everything queued; returns the removed ``(steering, follow_up)`` texts."""
        return self._state.queue.clear()

    def queued_texts(self) -> tuple[list[str], list[str]]:
        """The queued ``(steering, follow_up)`` texts, in delivery order."""
        return self._state.queue.texts()

    @property
    def pending_message_count(self) -> int:
        return self._state.queue.pending_count

    @property
    def steering_mode(self) -> QueueMode:
        return self._state.queue.steering_mode

    @steering_mode.setter
    def steering_mode(self, mode: QueueMode) -> None:
        self._state.queue.steering_mode = mode

    @property
    def follow_up_mode(self) -> QueueMode:
        return self._state.queue.follow_up_mode

    @follow_up_mode.setter
    def follow_up_mode(self, mode: QueueMode) -> None:
        self._state.queue.follow_up_mode = mode

    def _queued_message(self, text: str, images: Sequence[ImageContent]) -> AgentMessage:
        return user_prompt(self._state, text, images).message

    def send_message(self, message: CustomMessageDraft, *, trigger_turn: bool = False) -> None:
        """An extension message: queued for the next turn of a busy run; while idle, with
        ``trigger_turn`` it starts a run (its events go to :meth:`subscribe` listeners),
        otherwise it waits for the next prompt."""
        self._runs.deliver(message, trigger_turn=trigger_turn and not self.compacting)

    async def handle_input(
        self, text: str, *, source: Literal["interactive", "rpc", "extension", "cli"] = "cli"
    ) -> str | None:
        """Extension ``input`` handlers on text the user submitted, before commands and skills
        are expanded: the (possibly transformed) text, or ``None`` when a handler took it."""
        runner = self._state.extensions
        if runner is None:
            return text
        from pi_context.extensions.events import InputEvent  # loaded with the runner

        if not runner.has_handlers(InputEvent.type):
            return text
        result = await runner.emit_input(InputEvent(text, source=source))
        return None if result.handled else (result.text if result.text is not None else text)

    def extension_commands(self) -> list[RegisteredCommand]:
        """The slash commands extensions registered, and ``/mcp`` when MCP is on (registered
        as pi registers it, by the built-in ``builtin:mcp``; an extension's own ``/mcp``
        replaces it)."""
        runner = self._state.extensions
        commands = runner.commands() if runner is not None else []
        if self._state.mcp is not None and not any(c.name == "mcp" for c in commands):
            from pi_context.extensions.api import RegisteredCommand
            from pi_context.mcp.command import DESCRIPTION as MCP_COMMAND_DESCRIPTION

            commands.append(
                RegisteredCommand("mcp", MCP_COMMAND_DESCRIPTION, self._mcp_command, "builtin:mcp")
            )
        return commands

    async def _mcp_command(self, args: str, _ctx: Any = None) -> None:
        if self._state.mcp is not None:
            from pi_context.mcp.command import run_mcp_command

            await run_mcp_command(self._state.mcp, args, self._mcp_notice)

    async def run_extension_command(self, name: str, args: str) -> bool:
        """Run an extension's ``/name`` command; ``False`` when none has that name."""
        runner = self._state.extensions
        if runner is not None and runner.command(name) is not None:
            return await runner.run_command(name, args)
        if name == "mcp" and self._state.mcp is not None:
            await self._mcp_command(args)
            return True
        return False

    def expand_skill_command(self, text: str) -> str:
        """``/skill:name args`` → the skill's block plus the args; other text unchanged."""
        return expand_skill_command(text, self._state.resources.skills)

    def _ensure_idle_for(self, what: str) -> None:
        if self.compacting:
            raise PiContextError(
                f"Wait for the current compaction or tree navigation to finish before {what}."
            )

    # -- compaction and navigation ----------------------------------------------------------------

    async def compact(self, instructions: str | None = None) -> Mapping[str, Any]:
        """Compact now (pi's ``/compact``): abort any run, summarize, append; returns the result
        as pi reports it. Raises :class:`~pi_context.errors.CompactionError` (nothing appended)."""
        if self.busy:
            self.abort()
            await self._runs.wait()
        return await self._compaction.manual(instructions)

    async def navigate(
        self,
        entry_id: str,
        *,
        summarize: bool = False,
        instructions: str | None = None,
        replace_instructions: bool = False,
        label: str | None = None,
    ) -> NavigationResult:
        """Move the leaf to ``entry_id`` (pi's ``/tree``), optionally leaving a summary of the
        branch being left at the destination."""
        if self.busy:
            raise PiContextError(
                "Wait for the current response to finish before navigating the session tree."
            )
        self._ensure_idle_for("navigating the session tree")
        return await self._navigator.navigate(
            entry_id,
            summarize=summarize,
            instructions=instructions,
            replace_instructions=replace_instructions,
            label=label,
        )

    # -- resources, stats, closing ----------------------------------------------------------------

    async def reload(self) -> None:
        """Re-read settings, context files, skills, SYSTEM/APPEND files and ``mcp.json``
        (reconnecting the MCP servers); a coroutine: ``await sess.reload()``, since extensions'
        ``resources_discover`` handlers run. The changed sections are patched at the next run
        (nothing is sent or stored now)."""
        if self.busy:
            raise PiContextError("Wait for the current response to finish before reloading.")
        before = self._loadout.default_tool_names()
        self._state.resources = self._state.loader.reload()
        await extension_dispatch.discover_resources(self._state, "reload")
        if self._state.mcp is not None:  # mcp.json is read again and every server reconnects
            await self._state.mcp.restart()
        after = self._loadout.default_tool_names()
        self._loadout.register_tools(newly_default=[n for n in after if n not in before])

    def stats(self) -> SessionStats:
        """Token, cost and cache totals of the whole file, and the current context size."""
        state = self._state
        return session_stats(state.session, state.model, state.token_cache, state.positions)

    def context_tokens(self) -> int | None:
        """The current context size alone (``stats().context_tokens`` without the file totals);
        ``None`` right after a compaction until a response reports usage."""
        state = self._state
        return context_tokens(state.session, state.token_cache, state.positions)

    # -- extension notifications from synchronous calls -------------------------------------------

    async def _notify_model_select(
        self, model: Model, previous: Model | None, source: Literal["set", "cycle", "restore"]
    ) -> None:
        if self._state.extensions is not None:
            from pi_context.extensions.events import ModelSelectEvent

            await self._notify(
                ModelSelectEvent(
                    model.info, previous.info if previous is not None else None, source
                )
            )

    async def _notify(self, event: Event) -> None:
        runner = self._state.extensions
        if runner is not None and runner.has_handlers(event.type):
            await runner.emit(event)

    def _notify_soon(self, event: Event) -> None:
        """Tell extensions from a synchronous method (``set_model``, ``set_thinking_level``):
        the handlers run as a task of the running loop, in call order; :meth:`settle_notices`
        and :meth:`aclose` wait for them. Without a running loop (plain synchronous use)
        there is nobody to run them, and nothing is scheduled."""
        runner = self._state.extensions
        if runner is None or not runner.has_handlers(event.type):
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        previous = self._notices[-1] if self._notices else None

        async def deliver() -> None:
            if previous is not None:
                await asyncio.wait([previous])
            await runner.emit(event)

        task = loop.create_task(deliver())
        self._notices.append(task)
        task.add_done_callback(self._notices.remove)

    async def settle_notices(self) -> None:
        """Until every extension notification scheduled so far has been handled."""
        if self._notices:
            await asyncio.wait(list(self._notices))

    # -- session replacement ----------------------------------------------------------------------

    async def before_switch(
        self, reason: Literal["new", "resume"], target_session_file: str | None = None
    ) -> bool:
        """Extensions' ``session_before_switch``; ``True`` when one cancelled the switch."""
        runner = self._state.extensions
        if runner is None:
            return False
        from pi_context.extensions.events import SessionBeforeSwitchEvent  # loaded with the runner

        if not runner.has_handlers(SessionBeforeSwitchEvent.type):
            return False
        answer = await runner.emit_session_before_switch(
            SessionBeforeSwitchEvent(reason, target_session_file)
        )
        return bool(answer is not None and answer.cancel)

    async def before_fork(self, entry_id: str, position: Literal["before", "at"]) -> bool:
        """Extensions' ``session_before_fork``; ``True`` when one cancelled the fork."""
        runner = self._state.extensions
        if runner is None:
            return False
        from pi_context.extensions.events import SessionBeforeForkEvent  # loaded with the runner

        if not runner.has_handlers(SessionBeforeForkEvent.type):
            return False
        answer = await runner.emit_session_before_fork(SessionBeforeForkEvent(entry_id, position))
        return bool(answer is not None and answer.cancel)

    async def aclose(
        self, reason: ShutdownReason = "quit", target_session_file: str | None = None
    ) -> None:
        """Abort any run, tell extensions (``session_shutdown``) and close the session file.
        A second call does nothing (the session replacing this one may have closed it)."""
        if self._closed:
            return
        self._closed = True
        self.abort()
        await self._runs.wait()
        await self.settle_notices()
        if self._state.extensions is not None:
            from pi_context.extensions.events import SessionShutdownEvent

            await self._notify(SessionShutdownEvent(reason, target_session_file))
        if self._state.mcp is not None:
            await self._state.mcp.aclose()
        try:
            await self._state.commit()  # a stored session's last entries (raises on failure)
        finally:
            self.session.close()

    def close(self) -> None:
        """Close the session file (see :meth:`aclose` to also notify extensions).

        A stored session's store is asynchronous, so this cannot commit: with entries appended
        and not committed it raises :class:`~pi_context.errors.StoreError` and leaves the
        session open, rather than drop them; ``await aclose()`` (or ``await commit()`` first)
        stores them. With nothing uncommitted, or after :meth:`aclose` (which has committed
        or raised its commit's error), it closes."""
        binding = self._state.binding
        if binding is not None and binding.pending and not self._closed:
            count = len(binding.pending)
            raise StoreError(
                f"session {binding.ref} has {count} {'entry' if count == 1 else 'entries'} "
                "not committed to the store; close it with await aclose(), which commits them "
                "(close() cannot: the store is asynchronous)"
            )
        self.session.close()


class Opening(Coroutine[Any, Any, AgentSession]):
    """What :meth:`AgentSession.create` and :meth:`AgentSession.open` return: await it for the
    session, or enter it with ``async with`` to have the session closed at the block's end.
    It is a coroutine too (``asyncio.run``, ``create_task`` and ``gather`` take it)."""

    __slots__ = ("_coroutine", "_session")

    def __init__(self, coroutine: Coroutine[Any, Any, AgentSession]) -> None:
        self._coroutine = coroutine
        self._session: AgentSession | None = None

    def __await__(self) -> Generator[Any, None, AgentSession]:
        return self._coroutine.__await__()

    def send(self, value: Any) -> Any:
        return self._coroutine.send(value)

    def throw(self, *args: Any) -> Any:
        return self._coroutine.throw(*args)

    def close(self) -> None:
        self._coroutine.close()

    async def __aenter__(self) -> AgentSession:
        self._session = await self._coroutine
        return self._session

    async def __aexit__(self, *exc_info: object) -> None:
        if self._session is not None:
            await self._session.aclose()


class _PendingPrompt:
    """A :meth:`AgentSession.prompt` call whose iteration has not begun; abort marks it."""

    __slots__ = ("aborted",)

    def __init__(self) -> None:
        self.aborted = False
