"""``AgentSession``: the library facade over a session file, a model, tools and extensions.

::

    sess = await AgentSession.create(cwd="/my/project", model=model)
    async for event in sess.prompt("Fix the failing test"):
        ...
    await sess.compact("keep the API decisions")
    await sess.navigate(entry_id, summarize=True)

A prompt runs as a background task whose events ``prompt()`` yields; ``abort()`` cancels it at
any point and leaves a valid session (see :mod:`pi_context.agent.loop`). A prompt sent while a
run is busy is queued and delivered before the run's next request (or as a follow-up turn).

Around the loop the session does what pi's ``AgentSession`` does: the pre-prompt compaction
check, ``before_agent_start``, the system-prompt patch at run start and between turns, the
between-turn threshold compaction, and after the run the overflow recovery (omit the failed
attempt with ``context_edit``, compact, retry once), agent-level retries of transient errors
and the post-run threshold check (:mod:`.recovery`). Compaction and navigation live in
:mod:`.operations`, extension dispatch around the loop in :mod:`.ext_glue`, totals in
:mod:`.stats`.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypedDict, Unpack, cast

from pi_context.errors import PiContextError
from pi_context.extensions import ExtensionContext, ExtensionRunner
from pi_context.extensions.events import (
    AgentBeforeSettleEvent,
    BeforeAgentStartEvent,
    CustomMessageDraft,
    ResourcesDiscoverEvent,
    SessionShutdownEvent,
    SessionStartEvent,
)
from pi_context.messages import (
    AgentMessage,
    AssistantMessage,
    ImageContent,
    Message,
    ToolCall,
    ToolResultMessage,
    text_block,
    text_of,
    user_message,
)
from pi_context.model import Model, ModelRequest, RequestOptions
from pi_context.prompt import (
    SystemPromptOptions,
    build_system_prompt,
)
from pi_context.providers.delivery import system_delivery_of
from pi_context.resources.loader import LoadedResources, ResourceLoader
from pi_context.resources.settings import (
    CompactionSettings,
    RetrySettings,
    compaction_settings_for,
    deep_merge_settings,
    retry_settings_for,
)
from pi_context.resources.skills import expand_skill_command
from pi_context.session import Session, convert_to_llm
from pi_context.tools import (
    Tool,
    ToolOutcome,
    default_tools,
    run_tool,
)

from . import ext_glue
from .cache import CacheTracker
from .checks import threshold_exceeded
from .events import (
    AgentEvent,
    AgentSettled,
    CacheUpdate,
    ExtensionError,
    QueueUpdate,
)
from .incremental import PrefixFlatMap
from .loadout import LoadoutOps
from .loop import AgentLoop
from .recovery import RecoveryOps
from .stats import SessionStats, context_tokens, session_stats
from .transform import TransformChain

__all__ = ["AgentOptions", "AgentSession", "SessionStats"]


class AgentOptions(TypedDict, total=False):
    """Options of :meth:`AgentSession.create` and :meth:`AgentSession.open` (all optional).

    ``model``: the model (``None``: prompting raises until one is set). ``agent_dir``: pi's
    ``~/.pi/agent`` (settings, skills, extensions). ``settings``: merged over the loaded settings
    files. ``tools``: replaces the four built-ins. ``extensions``: a ready runner, or
    ``load_extensions=True`` discovers them (agent dir, trusted project, entry points).
    ``trusted``: the project's trust decision (``None``: decided as pi does without asking). ``no_context_files``,
    ``system_prompt``, ``append_system_prompt``: pi's ``-nc``, ``--system-prompt`` and
    ``--append-system-prompt``. ``session_id``, ``timestamp``: the new session's header id and
    ISO-8601 time (``create`` only; pi names a session file after both). ``ids``, ``clock``,
    ``sleep``: injectable for tests.
    """

    model: Model | None
    agent_dir: str | os.PathLike[str] | None
    settings: Mapping[str, Any] | None
    tools: Sequence[Tool] | None
    extensions: ExtensionRunner | None
    trusted: bool | None
    no_context_files: bool
    system_prompt: str | None
    append_system_prompt: Sequence[str] | None
    load_extensions: bool
    ids: Callable[[], str] | None
    clock: Callable[[], int] | None
    sleep: Callable[[float], Any] | None
    session_id: str | None
    timestamp: str | None


class AgentSession(LoadoutOps, RecoveryOps):
    """One agent over one session. Create with :meth:`create` or :meth:`open`."""

    def __init__(
        self,
        session: Session,
        *,
        cwd: str,
        model: Model | None,
        loader: ResourceLoader,
        resources: LoadedResources,
        tools: Sequence[Tool],
        extensions: ExtensionRunner | None,
        settings_override: Mapping[str, Any] | None = None,
        sleep: Callable[[float], Any] | None = None,
    ) -> None:
        self.session = session
        self.cwd = cwd
        self._model = model
        self._loader = loader
        self._resources = resources
        self._settings_override = dict(settings_override or {})
        self._extensions = extensions
        self._run_options: SystemPromptOptions | None = None
        self._run_forced: str | None = None
        self._init_loadout(tools)
        self._listeners: list[Callable[[AgentEvent], None]] = []
        self._stream: asyncio.Queue[AgentEvent | None] | None = None
        self._run_task: asyncio.Task[None] | None = None
        self._unstarted: _PendingPrompt | None = None  # the latest prompt() not yet iterated
        self._queue: list[AgentMessage] = []
        self._recovery_attempted = False
        self._turn_index = 0
        self._sleep = sleep or asyncio.sleep
        self.cache = CacheTracker()
        # Per-request conversions, redone only for messages new since the previous request.
        self._llm_view: PrefixFlatMap[AgentMessage, Message] = PrefixFlatMap(
            lambda _i, message: convert_to_llm((message,))
        )
        self._chain = TransformChain(
            hidden_tools=lambda: self._options().hidden_tools,
            forced_prompt=lambda: self._run_forced,
            clock=lambda: self.session.now_ms(),
        )
        if extensions is not None:
            self._chain.context_phase = extensions.emit_context
            extensions.on_error(
                lambda f: self._emit(ExtensionError(f.event, f.error, extension=f.extension))
            )
        self._loop = AgentLoop(self, self._emit, clock=lambda: self.session.now_ms())
        super().__init__()

    # -- construction ---------------------------------------------------------------------------

    @classmethod
    async def create(
        cls,
        *,
        cwd: str | os.PathLike[str] | None = None,
        session_file: str | os.PathLike[str] | None = None,
        **options: Unpack[AgentOptions],
    ) -> AgentSession:
        """A new session in ``cwd`` (in memory when ``session_file`` is ``None``); ``options``
        are described in :class:`AgentOptions`."""
        work = os.path.abspath(os.fspath(cwd) if cwd is not None else os.getcwd())
        session = Session.create(  # in memory when session_file is None
            session_file,
            cwd=work,
            session_id=options.get("session_id"),
            timestamp=options.get("timestamp"),
            ids=options.get("ids"),
            clock=options.get("clock"),
        )
        sess = cls._assemble(session, work, options)
        await sess._started("startup")
        return sess

    @classmethod
    async def open(
        cls,
        path: str | os.PathLike[str],
        *,
        cwd: str | os.PathLike[str] | None = None,
        **options: Unpack[AgentOptions],
    ) -> AgentSession:
        """Resume a session file; it runs in its header's ``cwd`` unless ``cwd`` is given."""
        session = Session.open(path, ids=options.get("ids"), clock=options.get("clock"))
        work = os.fspath(cwd) if cwd is not None else (session.cwd or os.getcwd())
        sess = cls._assemble(session, os.path.abspath(work), options)
        await sess._started("resume")
        return sess

    @classmethod
    def _assemble(cls, session: Session, cwd: str, options: AgentOptions) -> AgentSession:
        loader = ResourceLoader(
            cwd,
            agent_dir=options.get("agent_dir"),
            trusted=options.get("trusted"),
            no_context_files=options.get("no_context_files", False),
            system_prompt=options.get("system_prompt"),
            append_system_prompt=options.get("append_system_prompt"),
        )
        resources = loader.load()
        extensions = options.get("extensions")
        if extensions is None and options.get("load_extensions", False):
            from pi_context.extensions import load_extensions as _load

            extensions = _load(cwd=cwd, agent_dir=loader.agent_dir, trusted=resources.trusted)
        tools = options.get("tools")
        sess = cls(
            session,
            cwd=cwd,
            model=options.get("model"),
            loader=loader,
            resources=resources,
            tools=list(tools) if tools is not None else default_tools(cwd),
            extensions=extensions,
            settings_override=options.get("settings"),
            sleep=options.get("sleep"),
        )
        if extensions is not None:
            extensions.bind_host(
                sess,
                lambda: ExtensionContext(
                    Path(cwd), session=sess, get_system_prompt=lambda: sess.system_prompt
                ),
            )
        return sess

    # -- events -----------------------------------------------------------------------------------

    def subscribe(self, callback: Callable[[AgentEvent], None]) -> Callable[[], None]:
        """Receive every event (also those outside ``prompt()``, e.g. of ``compact()``).

        Returns a function that unsubscribes.
        """
        self._listeners.append(callback)
        return lambda: self._listeners.remove(callback) if callback in self._listeners else None

    def _emit(self, event: AgentEvent) -> None:
        if self._stream is not None:
            self._stream.put_nowait(event)
        self._notify_listeners(event)

    def _notify_listeners(self, event: AgentEvent) -> None:
        for listener in list(self._listeners):
            listener(event)

    # -- state ------------------------------------------------------------------------------------

    @property
    def model(self) -> Model:
        if self._model is None:
            raise PiContextError("No model configured: pass model= or configure an API key")
        return self._model

    @property
    def model_or_none(self) -> Model | None:
        return self._model

    @property
    def busy(self) -> bool:
        return self._run_task is not None and not self._run_task.done()

    @property
    def resources(self) -> LoadedResources:
        return self._resources

    @property
    def extensions(self) -> ExtensionRunner | None:
        return self._extensions

    @property
    def settings_data(self) -> dict[str, Any]:
        return deep_merge_settings(self._resources.settings.data, self._settings_override)

    def compaction_settings(self) -> CompactionSettings:
        info = self._model.info if self._model is not None else None
        settings = compaction_settings_for(
            self.settings_data,
            info.provider if info is not None else None,
            info.id if info is not None else None,
        )
        return settings.fit_to_window(info.context_window) if info is not None else settings

    def retry_settings(self) -> RetrySettings:
        return retry_settings_for(self.settings_data)

    def set_model(self, model: Model) -> None:
        """Switch models (recorded as a ``model_change`` entry); the prompt cache starts cold."""
        self._model = model
        self.session.append_model_change(model.info.provider, model.info.id)
        self.cache.reset()

    # -- extension host API ---------------------------------------------------------------------

    def send_message(self, message: CustomMessageDraft, *, trigger_turn: bool = False) -> None:
        """An extension message: queued for the next turn of a busy run; while idle, with
        ``trigger_turn`` it starts a run (its events go to :meth:`subscribe` listeners),
        otherwise it waits for the next prompt."""
        custom = _custom_message(message, self.session.now_ms())
        if trigger_turn and not self.busy and not self.compacting:
            self._run_task = asyncio.get_running_loop().create_task(self._run(custom, None, ()))
        else:
            self._queue.append(custom)

    def append_entry(self, custom_type: str, data: Any = None) -> None:
        self.session.append_custom(custom_type, data)

    # -- resources ------------------------------------------------------------------------------

    def expand_skill_command(self, text: str) -> str:
        """``/skill:name args`` → the skill's block plus the args; other text unchanged."""
        return expand_skill_command(text, self._resources.skills)

    async def reload(self) -> None:
        """Re-read settings, context files, skills and SYSTEM/APPEND files; the changed
        sections are patched at the next run (nothing is sent or stored now)."""
        if self.busy:
            raise PiContextError("Wait for the current response to finish before reloading.")
        before = self._default_tool_names()
        self._resources = self._loader.reload()
        await self._discover_resources("reload")
        after = self._default_tool_names()
        self._set_tools(newly_default=[n for n in after if n not in before])

    # -- LoopHost ---------------------------------------------------------------------------------

    def request_options(self) -> RequestOptions:
        level = self.session.projection().thinking_level
        return RequestOptions(
            session_id=self.session.id,
            thinking_level=cast(Any, level) if self.model.info.reasoning else "off",
        )

    def persist(self, message: AgentMessage) -> str | None:
        if message.get("role") == "assistant" and message.get("stopReason") not in (
            "error",
            "length",
        ):
            self._recovery_attempted = False
        if message.get("role") == "custom":
            custom = cast(dict[str, Any], message)
            return self.session.append_custom_message(
                custom["customType"],
                custom["content"],
                custom.get("display", True),
                custom.get("details"),
            ).id
        return self.session.append_message(message).id

    def context_messages(self) -> list[AgentMessage]:
        return list(self.session.projection().messages)

    async def transform(self, messages: list[AgentMessage]) -> list[AgentMessage]:
        return await self._chain(messages)

    def to_llm(self, messages: list[AgentMessage]) -> list[Message]:
        return self._llm_view(messages)

    async def execute_tool(self, call: ToolCall) -> ToolOutcome:
        tool = self._tools.get(call["name"])
        if tool is None or call["name"] not in self._active:
            return ToolOutcome([text_block(f"Tool {call['name']} not found")], {}, True)
        blocked = await ext_glue.gate_tool_call(self._extensions, call)
        if blocked is not None:
            return blocked
        outcome = await run_tool(tool, call["id"], call["arguments"], cwd=Path(self.cwd))
        return await ext_glue.rewrite_tool_result(self._extensions, call, outcome)

    async def prepare_next_turn(self) -> list[AgentMessage]:
        model = self.model
        settings = self.compaction_settings()
        projection = self.session.projection()
        branch = self.session.branch_view()
        if threshold_exceeded(projection, branch, model.info, settings, self._token_cache):
            await self._auto_compact("threshold", will_retry=False)
        options = self._options().evolve(selected_tools=tuple(self._active))
        if self._run_options is not None:
            self._run_options = options
        patch = self._system_patch(options)
        return [patch] if patch is not None else []

    def take_queued(self) -> list[AgentMessage]:
        queued, self._queue = self._queue, []
        if queued:
            self._emit(QueueUpdate())
        return queued

    def has_queued(self) -> bool:
        return bool(self._queue)

    def after_request(self, request: ModelRequest, message: AssistantMessage) -> None:
        collapse = system_delivery_of(self.model) == "collapse"
        record = self.cache.record(
            request.messages, request.tools, message["usage"], collapse=collapse
        )
        self._emit(
            CacheUpdate(
                record.index,
                record.input,
                record.cache_read,
                record.cache_write,
                self.cache.hit_ratio,
                record.miss_cause,
            )
        )

    async def after_turn(
        self, message: AssistantMessage, tool_results: Sequence[ToolResultMessage]
    ) -> bool:
        index = self._turn_index
        self._turn_index += 1
        return await ext_glue.turn_end(
            self._extensions,
            self.session,
            index,
            message,
            tool_results,
            lambda error: self._emit(ExtensionError("turn_end", error)),
        )

    async def finalize_message(self, message: AgentMessage) -> AgentMessage:
        return await ext_glue.finalize_message(self._extensions, message)

    async def notify(self, event: AgentEvent) -> None:
        await ext_glue.notify(self._extensions, event, self._turn_index)

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
            self._queue.append(
                user_message(
                    self.expand_skill_command(text),
                    images=images,
                    timestamp=self.session.now_ms(),
                )
            )
            update = QueueUpdate(steering=[_text(m) for m in self._queue])
            self._emit(update)
            yield update
            return
        self._ensure_idle_for("prompt")
        stream: asyncio.Queue[AgentEvent | None] = asyncio.Queue()
        self._stream = stream
        task = asyncio.create_task(self._run_prompt(text, images))
        self._run_task = task
        task.add_done_callback(lambda _t: stream.put_nowait(None))
        try:
            while True:
                item = await stream.get()
                if item is None:
                    break
                yield item
        finally:
            if not task.done():
                task.cancel()
                await asyncio.wait([task])
            if self._stream is stream:
                self._stream = None
        if task.cancelled():  # aborted before its first step, so _run never settled it
            yield self._settle_unstarted()
            return
        task.result()

    def _settle_unstarted(self) -> AgentSettled:
        """The only event of a prompt aborted before its run started (listeners get it too)."""
        settled = AgentSettled(aborted=True)
        self._notify_listeners(settled)
        return settled

    async def run(self, text: str, *, images: Sequence[ImageContent] = ()) -> list[AgentEvent]:
        """Run a prompt to the end and return its events (a convenience over :meth:`prompt`)."""
        return [event async for event in self.prompt(text, images=images)]

    def abort(self) -> None:
        """Stop the running prompt (and its compaction or retry wait) as soon as possible;
        messages queued for it are dropped. A prompt requested but not started yet (see
        :meth:`prompt`) is cancelled as well."""
        if self._unstarted is not None:
            self._unstarted.aborted = True
            self._unstarted = None
        if self._run_task is not None and not self._run_task.done():
            self._run_task.cancel()
            if self._queue:  # messages queued for the aborted run are dropped with it
                self._queue.clear()
                self._emit(QueueUpdate())
        self._abort_operation()

    async def _run_prompt(self, text: str, images: Sequence[ImageContent]) -> None:
        expanded = self.expand_skill_command(text)
        message = user_message(expanded, images=images, timestamp=self.session.now_ms())
        await self._run(message, expanded, images)

    async def _run(
        self, trigger: AgentMessage, text: str | None, images: Sequence[ImageContent]
    ) -> None:
        """One run started by a user prompt or a triggering custom message, until it settles."""
        aborted = False
        self._turn_index = 0
        try:
            self._recovery_attempted = False
            self.model  # noqa: B018 - fail early without a model
            await self._pre_prompt_check()
            options, forced, extra = await self._before_agent_start(trigger, text, images)
            self._run_options = options
            self._run_forced = forced
            start: list[AgentMessage] = []
            patch = self._system_patch(options)
            if patch is not None:
                start.append(patch)
            start.append(trigger)
            start.extend(self.take_queued())  # extension messages waiting for the next run
            start.extend(extra)
            result = await self._loop.run(start)
            aborted = result.aborted
            if not aborted:
                aborted = await self._after_run(result)
            while not aborted and self._queue:  # queued while the run was settling
                result = await self._loop.run(self.take_queued())
                aborted = result.aborted or await self._after_run(result)
            if not aborted:
                aborted = await self._before_settle()
        except asyncio.CancelledError:
            aborted = True
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()
        finally:
            self._run_options = None
            self._run_forced = None
            self._emit(AgentSettled(aborted=aborted))

    async def _before_settle(self) -> bool:
        """Extension ``agent_before_settle`` (once per run): drafts are appended; ``continue``
        runs once more. Returns whether that continuation was aborted."""
        runner = self._extensions
        if runner is None or not runner.has_handlers(AgentBeforeSettleEvent.type):
            return False
        last = self._last_assistant()
        stop = last[0]["stopReason"] if last is not None else "stop"
        outcome = "error" if stop == "error" else "completed"
        proposal = await runner.emit_boundary(AgentBeforeSettleEvent(outcome=cast(Any, outcome)))
        ext_glue.apply_boundary_drafts(
            self.session,
            proposal.entries or [],
            lambda error: self._emit(ExtensionError("agent_before_settle", error)),
        )
        if not (proposal.continue_ or self._queue):
            return False
        result = await self._loop.run(self.take_queued())
        return result.aborted or await self._after_run(result)

    async def _before_agent_start(
        self, trigger: AgentMessage, text: str | None, images: Sequence[ImageContent]
    ) -> tuple[SystemPromptOptions, str | None, list[AgentMessage]]:
        options = self.base_options()
        runner = self._extensions
        if runner is None or not runner.has_handlers(BeforeAgentStartEvent.type):
            return options, None, []
        mutable = options.to_json()
        before_tools = list(mutable["selectedTools"])
        event = BeforeAgentStartEvent(
            message_type="user" if trigger.get("role") == "user" else "custom",
            system_prompt_options=mutable,
            prompt=text,
            images=list(images),
            message=None if trigger.get("role") == "user" else trigger,
            system_prompt=build_system_prompt(options),
        )
        outcome = await runner.emit_before_agent_start(event)
        if list(mutable.get("selectedTools") or []) == before_tools:
            mutable["selectedTools"] = list(self._active)
        else:
            self.set_active_tools(list(mutable.get("selectedTools") or []))
            mutable["selectedTools"] = list(self._active)
        forced = mutable.get("forceSystemPrompt")
        if outcome.system_prompt is not None:
            forced = outcome.system_prompt
        new_options = SystemPromptOptions.from_json(mutable).evolve(
            context_files=options.context_files,
            skills=options.skills,
            force_system_prompt=None,
        )
        extra = [_custom_message(draft, self.session.now_ms()) for draft in outcome.messages]
        return new_options, forced if isinstance(forced, str) else None, extra

    # -- stats ------------------------------------------------------------------------------------

    def stats(self) -> SessionStats:
        """Token, cost and cache totals of the whole file, and the current context size."""
        return session_stats(self.session, self._model, self._token_cache, self._path_facts)

    def context_tokens(self) -> int | None:
        """The current context size alone (``stats().context_tokens`` without the file totals);
        ``None`` right after a compaction until a response reports usage."""
        return context_tokens(self.session, self._token_cache, self._path_facts)

    def _ensure_idle_for(self, what: str) -> None:
        if self.compacting:
            raise PiContextError(
                f"Wait for the current compaction or tree navigation to finish before {what}."
            )

    async def _started(self, reason: str) -> None:
        """Extension ``resources_discover`` (extra skill paths) and ``session_start``."""
        if reason == "resume":
            self._restore_tools()
        runner = self._extensions
        if runner is None:
            return
        await self._discover_resources("startup")
        if runner.has_handlers(SessionStartEvent.type):
            await runner.emit(SessionStartEvent(cast(Any, reason)))

    async def _discover_resources(self, reason: str) -> None:
        """Extension ``resources_discover``: extra skill paths are loaded too."""
        runner = self._extensions
        if runner is None or not runner.has_handlers(ResourcesDiscoverEvent.type):
            return
        found = await runner.emit_resources_discover(
            ResourcesDiscoverEvent(self.cwd, cast(Any, reason))
        )
        extra = [p for p in found.skill_paths if p not in self._loader.skill_paths]
        if extra:
            self._loader.skill_paths = (*self._loader.skill_paths, *extra)
            self._resources = self._loader.load()

    async def aclose(self) -> None:
        """Abort any run, tell extensions (``session_shutdown``) and close the session file."""
        self.abort()
        if self._run_task is not None:
            await asyncio.wait([self._run_task])
        runner = self._extensions
        if runner is not None and runner.has_handlers(SessionShutdownEvent.type):
            await runner.emit(SessionShutdownEvent())
        self.session.close()

    def close(self) -> None:
        """Close the session file (see :meth:`aclose` to also notify extensions)."""
        self.session.close()


class _PendingPrompt:
    """A :meth:`AgentSession.prompt` call whose iteration has not begun; abort marks it."""

    __slots__ = ("aborted",)

    def __init__(self) -> None:
        self.aborted = False


def _text(message: AgentMessage) -> str:
    content: Any = message.get("content")
    return text_of(content) if isinstance(content, str | list) else ""


def _custom_message(draft: CustomMessageDraft, timestamp: int) -> AgentMessage:
    msg: dict[str, Any] = {
        "role": "custom",
        "customType": draft.custom_type,
        "content": draft.content,
        "display": draft.display,
    }
    if draft.details is not None:
        msg["details"] = draft.details
    msg["timestamp"] = timestamp
    return cast(AgentMessage, msg)
