"""One run of an agent session, from its trigger until the session is idle again.

A run starts with a user prompt or a triggering extension message and goes: the pre-prompt
compaction check, ``before_agent_start`` (which may change this run's prompt options, force a
prompt or add messages), the system-prompt patch, the loop, and after the loop the retries and
recoveries, messages queued meanwhile, and ``agent_before_settle``. It ends with
``agent_settled``. :class:`RunControl` owns the run's task, so :meth:`RunControl.abort` can
cancel it at any point and leave a valid session. The run's parts:

- **the user prompt** (:func:`user_prompt`), built the same way whether it starts a run or
  waits in a queue: its ``/skill:name`` command expanded, its images fitted to the current
  model (:func:`prepare_images`: pi normalizes a prompt's images as part of run preparation;
  each is scaled to the model's ``inputLimits.images.resize``, setting ``images.autoResize``,
  on by default, and an unusable one is dropped with a note in the prompt text; the session
  stores the fitted images, so what is on disk is exactly what was sent), stamped with the
  session's clock. ``before_agent_start`` handlers are given the same text and images.
- **recovery** (:class:`Recovery`): the pre-prompt compaction check, and after the loop
  agent-level retries of transient errors, overflow recovery (omit the failed attempt with
  ``context_edit``, compact, retry once) and the threshold check. Whether to retry and how
  long to wait is the one :class:`~pi_context.model.retry.RetryPolicy` (the summarizer asks
  the same); :class:`Recovery` decides what a retry does to the session.
- **the loop's callbacks into the session** (:class:`SessionLoopCallbacks`, the
  :class:`~pi_context.agent._loop.LoopCallbacks` of a session): messages are persisted in the
  session file, tools run from the loadout behind the extensions' ``tool_call`` gate and
  ``tool_result`` rewrite, between turns the compaction control checks the threshold and the
  loadout patches the system prompt, the cache tracker accounts each request, and the loop's
  notifications reach the extensions. The library user never sees this object;
  :class:`~pi_context.agent.session.AgentSession` is their facade.
- **what extensions may do to the live session** (:class:`SessionExtensionActions`, pi's
  extension API actions over the session's collaborators): the loadout (active tools), the run
  control (messages, which may start a run) and the session file (``append_entry``).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

from msgspec import Struct
from msgspec.structs import replace

from pi_context.errors import ProviderError, SessionBusyError
from pi_context.events import (
    AgentSettled,
    AutoRetryEnd,
    AutoRetryStart,
    CacheUpdate,
    EntryAppended,
    ExtensionFailure,
)
from pi_context.messages import (
    AgentMessage,
    AssistantMessage,
    ImageContent,
    ToolCall,
    ToolResultMessage,
    text_block,
    user_message,
)
from pi_context.model import ModelRequest, system_delivery_of
from pi_context.model.retry import RetryPolicy
from pi_context.prompt import SystemPromptOptions, build_system_prompt
from pi_context.resources.prompt_templates import expand_commands
from pi_context.resources.settings import session_fsync_for
from pi_context.tools import ToolOutcome, UpdateCallback, run_tool

from . import _extension_hooks
from ._compaction import CompactionControl, CompactionDecision, OperationGuard
from ._loop import AgentLoop, LoopCallbacks, RequestSource, RunResult, StreamListener
from ._state import AgentState
from .loadout import Loadout
from .stats import CacheTracker

if TYPE_CHECKING:
    from pi_context.events import AgentEvent
    from pi_context.extensions.context import ToolInfo
    from pi_context.extensions.events import CustomMessageDraft

__all__ = [
    "Recovery",
    "RunControl",
    "RunMore",
    "SessionExtensionActions",
    "SessionLoopCallbacks",
    "UserPrompt",
    "auto_resize_enabled",
    "custom_message",
    "prepare_images",
    "user_prompt",
]


# -- the user prompt -------------------------------------------------------------------------------


def auto_resize_enabled(settings: object) -> bool:
    """Setting ``images.autoResize`` (default true; only an explicit ``false`` turns it off)."""
    images = settings.get("images") if isinstance(settings, dict) else None
    return not (isinstance(images, dict) and images.get("autoResize") is False)


def prepare_images(
    state: AgentState, text: str, images: Sequence[ImageContent]
) -> tuple[str, tuple[ImageContent, ...]]:
    """``(text, images)`` ready for the current model (see the module docstring)."""
    if not images:
        return text, ()
    from pi_context.images import DEFAULT_IMAGE_LIMITS, image_limits_from, prepare_prompt_images

    model = state.model
    limits = image_limits_from(model.info.input_limits) if model is not None else None
    prepared = prepare_prompt_images(
        text,
        images,
        limits or DEFAULT_IMAGE_LIMITS,
        resize=auto_resize_enabled(state.settings_data),
    )
    return prepared.text, prepared.images


async def fit_read_images(state: AgentState, outcome: ToolOutcome) -> ToolOutcome:
    """The ``read`` tool's image fitted to the current model as a prompt's images are (the
    ``images.autoResize`` setting, the model's ``inputLimits.images.resize``), off the event
    loop; a text result comes back as it is."""
    if not any(block["type"] == "image" for block in outcome.content):
        return outcome
    from pi_context.images import DEFAULT_IMAGE_LIMITS, fit_read_result, image_limits_from

    model = state.model
    limits = (image_limits_from(model.info.input_limits) if model is not None else None) or (
        DEFAULT_IMAGE_LIMITS
    )
    resize = auto_resize_enabled(state.settings_data)
    content = await asyncio.to_thread(fit_read_result, outcome.content, limits, resize=resize)
    return replace(outcome, content=content)


class UserPrompt(Struct, frozen=True):
    """A prompt ready to send: its message, and the text and images that message holds."""

    message: AgentMessage
    text: str
    images: tuple[ImageContent, ...]


def user_prompt(state: AgentState, text: str, images: Sequence[ImageContent]) -> UserPrompt:
    """``text`` and ``images`` as the session sends them (see the module docstring)."""
    expanded = expand_commands(text, state.resources.skills, state.resources.prompt_templates)
    expanded, fitted = prepare_images(state, expanded, images)
    message = user_message(expanded, images=fitted, timestamp=state.now_ms())
    return UserPrompt(message, expanded, fitted)


# -- the run ---------------------------------------------------------------------------------------


class RunControl:
    """Starts, runs and aborts the runs of one agent session (one at a time)."""

    def __init__(
        self,
        state: AgentState,
        loadout: Loadout,
        recovery: Recovery,
        *,
        callbacks: LoopCallbacks,
        requests: RequestSource,
    ) -> None:
        self._state = state
        self._loadout = loadout
        self._recovery = recovery
        self._callbacks = callbacks
        self._requests = requests
        self._task: asyncio.Task[None] | None = None

    @property
    def busy(self) -> bool:
        return self._task is not None and not self._task.done()

    def _emit(self, event: AgentEvent) -> None:
        self._state.queue.delivered(event)  # a queued text's queue_update comes first
        self._state.events.emit(event)

    def start_prompt(self, text: str, images: Sequence[ImageContent]) -> asyncio.Task[None]:
        """A run for a user prompt (``/skill:name`` expanded)."""
        prompt = user_prompt(self._state, text, images)
        return self._start(prompt.message, prompt.text, prompt.images)

    def deliver(self, draft: CustomMessageDraft, *, trigger_turn: bool) -> None:
        """An extension message: queued for the next turn of a busy run; while idle, with
        ``trigger_turn`` it starts a run (its events go to subscribers), otherwise it waits for
        the next prompt."""
        message = custom_message(draft, self._state.now_ms())
        if trigger_turn and not self.busy:
            task = self._start(message, None, ())
            task.add_done_callback(lambda done: self._unawaited_run_ended(done, message))
        else:
            self._state.queue.add(message)

    def _unawaited_run_ended(self, task: asyncio.Task[None], message: AgentMessage) -> None:
        """A run an extension message started has nobody awaiting it: its failure goes to the
        subscribers as an ``extension_error`` event (``send_message``) instead of being lost
        with the task. Another holder's lease (:class:`~pi_context.errors.SessionBusyError`)
        stopped it before anything was stored: the message then waits for the next run."""
        if task.cancelled() or (error := task.exception()) is None:
            return
        said = f"{type(error).__name__}: {error}"
        if isinstance(error, SessionBusyError):
            self._state.queue.add(message)
            said += " (the message waits for the next run)"
        self._state.events.emit(
            ExtensionFailure("send_message", f"the run the message triggered failed: {said}")
        )

    async def stream_prompt(
        self, text: str, images: Sequence[ImageContent]
    ) -> AsyncIterator[AgentEvent]:
        """Start a run for ``text`` and yield its events until it settles. Closing the
        iteration early cancels the run; a run cancelled before its first step yields only
        ``agent_settled`` (aborted)."""
        events = self._state.events
        stream: asyncio.Queue[AgentEvent | None] = asyncio.Queue()
        events.attach(stream)
        task = self.start_prompt(text, images)
        task.add_done_callback(lambda _t: stream.put_nowait(None))
        try:
            while (item := await stream.get()) is not None:
                yield item
        finally:
            if not task.done():
                task.cancel()
                await asyncio.wait([task])
            events.detach(stream)
        if task.cancelled():  # aborted before its first step, so the run never settled
            settled = AgentSettled(aborted=True)
            events.notify_subscribers(settled)
            yield settled
            return
        task.result()

    def _start(
        self, trigger: AgentMessage, text: str | None, images: Sequence[ImageContent]
    ) -> asyncio.Task[None]:
        task = asyncio.get_running_loop().create_task(self._leased_run(trigger, text, images))
        self._task = task
        return task

    def abort(self) -> None:
        """Cancel the running run; queued steering and follow-ups stay queued for the next
        run, as in pi."""
        if self._task is not None and not self._task.done():
            self._task.cancel()

    async def wait(self) -> None:
        """Until the current run (if any) has ended."""
        if self._task is not None:
            await asyncio.wait([self._task])

    async def _leased_run(
        self, trigger: AgentMessage, text: str | None, images: Sequence[ImageContent]
    ) -> None:
        # A stored session's run holds its lease (another holder: SessionBusyError, before
        # anything is appended or emitted) and commits what it appended before it settles.
        # agent_settled comes once the lease is released too, so that a caller who starts
        # the next run on agent_settled finds the session idle.
        ended: list[bool] = []  # whether the run was aborted, once it has ended
        try:
            async with self._state.turn():
                await self._run(trigger, text, images, ended)
        except asyncio.CancelledError:
            if not ended:
                raise
            task = asyncio.current_task()  # the run had ended: only the release was cut short
            if task is not None:
                task.uncancel()
        finally:
            if ended:
                settled = AgentSettled(aborted=ended[0])
                self._state.events.emit(settled)
                # extension ``agent_settled``: once the run has committed and released its session
                await _extension_hooks.notify(self._state.extensions, settled)

    async def _run(
        self,
        trigger: AgentMessage,
        text: str | None,
        images: Sequence[ImageContent],
        ended: list[bool],
    ) -> None:
        state = self._state
        aborted = False
        loop = AgentLoop(
            self._callbacks,
            self._emit,
            requests=self._requests,
            queue=state.queue,
            clock=state.now_ms,
        )
        try:
            state.require_usable_model()  # fail early without a model or its key
            await self._recovery.before_prompt()
            if state.mcp is not None:
                await state.mcp.wait_for_first_prompt()
            self._loadout.settle_restored()
            options, forced, extra = await self._before_agent_start(trigger, text, images)
            self._loadout.begin_run(options, forced)
            start: list[AgentMessage] = []
            patch = self._loadout.system_patch(options, state.session.stored_projection().entries)
            if patch is not None:
                start.append(patch)
            start.append(trigger)
            start.extend(state.queue.take_steering())  # steering queued before the run
            start.extend(extra)
            result = await loop.run(start)
            aborted = result.aborted
            if not aborted:
                aborted = await self._recovery.after_run(result, loop.run)
            while not aborted and state.queue:  # queued while the run was settling
                result = await loop.run(state.queue.take())
                aborted = result.aborted or await self._recovery.after_run(result, loop.run)
            if not aborted:
                aborted = await self._before_settle(loop)
        except asyncio.CancelledError:
            aborted = True
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()
        finally:
            self._loadout.end_run()
            try:
                await state.commit()
            finally:
                ended.append(aborted)

    async def _before_settle(self, loop: AgentLoop) -> bool:
        """Extension ``agent_before_settle`` (once per run): drafts are appended; ``continue``
        runs once more. Returns whether that continuation was aborted."""
        state = self._state
        last = self._recovery.last_assistant()
        stop = last[0]["stopReason"] if last is not None else "stop"
        proposal = await _extension_hooks.before_settle(state.extensions, stop)
        if proposal is None:
            return False
        _extension_hooks.apply_boundary_drafts(
            state.session,
            proposal.entries or [],
            lambda error: state.events.emit(ExtensionFailure("agent_before_settle", error)),
        )
        if not (proposal.continue_ or state.queue):
            return False
        result = await loop.run(state.queue.take())
        return result.aborted or await self._recovery.after_run(result, loop.run)

    async def _before_agent_start(
        self, trigger: AgentMessage, text: str | None, images: Sequence[ImageContent]
    ) -> tuple[SystemPromptOptions, str | None, list[AgentMessage]]:
        loadout = self._loadout
        options = loadout.base_options()
        runner = self._state.extensions
        if runner is None:
            return options, None, []
        from pi_context.extensions.events import BeforeAgentStartEvent  # loaded with the runner

        if not runner.has_handlers(BeforeAgentStartEvent.type):
            return options, None, []
        mutable = options.to_json()
        before_tools = list(mutable["selectedTools"])
        kind: Literal["user", "custom"] = "user" if trigger.get("role") == "user" else "custom"
        event = BeforeAgentStartEvent(
            message_type=kind,
            system_prompt_options=mutable,
            prompt=text,
            images=list(images),
            message=None if kind == "user" else trigger,
            system_prompt=build_system_prompt(options),
        )
        outcome = await runner.emit_before_agent_start(event)
        if list(mutable.get("selectedTools") or []) != before_tools:
            loadout.set_active_tools(list(mutable.get("selectedTools") or []))
        mutable["selectedTools"] = loadout.active_tools()
        forced = mutable.get("forceSystemPrompt")
        if outcome.system_prompt is not None:
            forced = outcome.system_prompt
        new_options = SystemPromptOptions.from_json(mutable).evolve(
            context_files=options.context_files,
            skills=options.skills,
            force_system_prompt=None,
        )
        extra = [custom_message(draft, self._state.now_ms()) for draft in outcome.messages]
        return new_options, forced if isinstance(forced, str) else None, extra


def custom_message(draft: CustomMessageDraft, timestamp: int) -> AgentMessage:
    """The ``custom`` message of an extension's draft."""
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


# -- retries and recoveries ------------------------------------------------------------------------


RunMore = Callable[[Sequence[AgentMessage]], Awaitable[RunResult]]
"""Continue the run with these messages first (the loop's ``run``)."""


class Recovery:
    """Checks before a prompt, and retries and recoveries after a run."""

    def __init__(self, state: AgentState, compaction: CompactionControl) -> None:
        self._state = state
        self._compaction = compaction
        self._retries = 0
        self._retry_wait: asyncio.Future[object] | None = None
        self._overflow_recovered = False
        """One overflow recovery was tried in this run and no response has succeeded since:
        a second overflow is ``exhausted``. Only this class writes it."""

    def abort_retry(self) -> bool:
        """Cancel a pending automatic-retry delay (the run then ends with the failed attempt,
        ``auto_retry_end`` saying ``Retry cancelled``); returns whether one was pending."""
        wait = self._retry_wait
        if wait is None or wait.done():
            return False
        wait.cancel()
        return True

    def last_assistant(self) -> tuple[AssistantMessage, str] | None:
        """The newest assistant message on the branch and its entry id."""
        for entry in reversed(self._state.session.branch_view()):
            if entry.type == "message" and entry.role == "assistant" and entry.message is not None:
                return cast(AssistantMessage, entry.message), entry.id
        return None

    async def before_prompt(self) -> None:
        """Before a new prompt: the last response (aborted ones too) may call for a compaction,
        and so may a pause that let the prompt cache expire (``idleCompactPercent``); else a
        batch of old tool results may be masked (``maskBatchTokens``)."""
        self._overflow_recovered = False
        last = self.last_assistant()
        if last is None:
            return
        decision = self._compaction.decide(*last, skip_aborted=False)
        if decision.action == "threshold" or (
            decision.action == "none" and self._compaction.idle_due(last[0])
        ):
            await self._compaction.auto("threshold", will_retry=False)
        elif decision.action == "none":
            self._compaction.mask_batch()
        elif decision.action == "overflow":
            if decision.will_retry:
                self._omit_attempt(*last)
            await self._compaction.auto("overflow", will_retry=False)

    def will_retry(self, result: RunResult) -> bool:
        """Whether the session will continue this run (``agent_end.willRetry``): an automatic
        retry of a transient error, or an overflow recovery."""
        message = result.last_assistant
        if message is None or result.aborted:
            return False
        if self._should_retry(message, result.last_error, self._retries):
            return True
        decision = self._decide(result)
        return bool(decision.action == "overflow" and decision.will_retry)

    async def after_run(self, result: RunResult, run_more: RunMore) -> bool:
        """Post-run handling (``run_more`` continues the run); returns whether the run was
        aborted meanwhile."""
        state = self._state
        self._retries = 0
        while True:
            retries = self._retries
            message = result.last_assistant
            entry_id = result.last_assistant_entry_id
            if message is None:
                return False
            if self._should_retry(message, result.last_error, retries):
                self._retries = retries = retries + 1
                retried = await self._auto_retry(message, entry_id, result, retries, run_more)
                if retried is None:  # the delay was cancelled (abort_retry)
                    state.events.emit(AutoRetryEnd(False, retries, "Retry cancelled"))
                    self._retries = 0
                    return False
                result = retried
                if result.aborted:
                    return True
                continue
            if retries:
                state.events.emit(
                    AutoRetryEnd(
                        message["stopReason"] != "error", retries, message.get("errorMessage")
                    )
                )
                self._retries = 0
            decision = self._decide(result)
            if decision.action == "exhausted":
                from pi_context.compaction.events import CompactionEnd  # on the rare failure

                state.events.emit(
                    CompactionEnd("overflow", None, False, False, decision.error_message)
                )
                await self._compaction.report_failed(
                    "overflow", decision.error_message, aborted=False, from_extension=False
                )
                return False
            if decision.action == "none":
                return False
            if decision.action == "overflow" and decision.will_retry:
                self._overflow_recovered = True
                self._omit_attempt(message, entry_id)
                go_on = await self._compaction.auto("overflow", will_retry=True)
            else:
                go_on = await self._compaction.auto(
                    "overflow" if decision.action == "overflow" else "threshold",
                    will_retry=False,
                )
            if not go_on:
                return False
            result = await run_more(state.queue.take())
            if result.aborted:
                return True

    def _decide(self, result: RunResult) -> CompactionDecision:
        """The compaction decision after ``result``'s last response. A response that succeeded
        (neither an error nor cut at the length limit) ends an overflow recovery: a later
        overflow in the same run may be recovered again."""
        if any(
            m.get("role") == "assistant" and m.get("stopReason") not in ("error", "length")
            for m in result.messages
        ):
            self._overflow_recovered = False
        message = result.last_assistant
        assert message is not None
        return self._compaction.decide(
            message,
            result.last_assistant_entry_id,
            recovery_attempted=self._overflow_recovered,
        )

    def _should_retry(
        self, message: AssistantMessage, error: ProviderError | None, attempts: int
    ) -> bool:
        return RetryPolicy(self._state.retry_settings()).should_retry(message, error, attempts)

    async def _auto_retry(
        self,
        message: AssistantMessage,
        entry_id: str | None,
        result: RunResult,
        attempt: int,
        run_more: RunMore,
    ) -> RunResult | None:
        state = self._state
        policy = RetryPolicy(state.retry_settings())
        retry_after = result.last_error.retry_after if result.last_error is not None else None
        delay = policy.delay_ms(attempt, retry_after)
        state.events.emit(
            AutoRetryStart(attempt, policy.max_attempts, delay, message.get("errorMessage") or "")
        )
        self._omit_attempt(message, entry_id)
        wait: asyncio.Future[object] = asyncio.ensure_future(state.sleep(delay / 1000))
        self._retry_wait = wait
        try:
            await wait
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if not wait.cancelled() or (task is not None and task.cancelling()):
                raise  # the run itself was aborted
            return None
        finally:
            self._retry_wait = None
        return await run_more(state.queue.take())

    def _omit_attempt(self, message: AssistantMessage, entry_id: str | None) -> None:
        """Hide a failed attempt and its tool results from the model with ``context_edit``s."""
        if entry_id is None:
            return
        session = self._state.session
        call_ids = {b["id"] for b in message["content"] if b["type"] == "toolCall"}
        targets = [entry_id]
        seen = False
        for projected in session.stored_projection().entries:
            entry = projected.entry
            if entry.id == entry_id:
                seen = True
                continue
            if not seen or entry.type != "message":
                continue
            if entry.role == "assistant":
                break
            msg = entry.message
            if entry.role == "toolResult" and msg is not None and msg.get("toolCallId") in call_ids:
                targets.append(entry.id)
        for target in targets:
            appended = session.append_context_edit(target, None)
            self._state.events.emit(EntryAppended(appended.data))


# -- the loop's callbacks into the session ---------------------------------------------------------


class SessionLoopCallbacks:
    """Implements :class:`~pi_context.agent._loop.LoopCallbacks` over one agent session."""

    def __init__(
        self,
        state: AgentState,
        *,
        loadout: Loadout,
        compaction: CompactionControl,
        recovery: Recovery,
        cache: CacheTracker,
    ) -> None:
        self._state = state
        self._loadout = loadout
        self._compaction = compaction
        self._recovery = recovery
        self._cache = cache

    def persist(self, message: AgentMessage) -> str | None:
        session = self._state.session
        if message.get("role") == "custom":
            custom = cast(dict[str, Any], message)
            return session.append_custom_message(
                custom["customType"],
                custom["content"],
                custom.get("display", True),
                custom.get("details"),
            ).id
        return session.append_message(message).id

    async def execute_tool(self, call: ToolCall, on_update: UpdateCallback) -> ToolOutcome:
        tool = self._loadout.active_tool(call["name"])
        if tool is None:
            return ToolOutcome([text_block(f"Tool {call['name']} not found")], {}, True)
        runner = self._state.extensions
        blocked = await _extension_hooks.gate_tool_call(runner, call)
        if blocked is not None:
            return blocked
        outcome = await run_tool(
            tool, call["id"], call["arguments"], cwd=Path(self._state.cwd), on_update=on_update
        )
        if call["name"] == "read" and not outcome.is_error:
            outcome = await fit_read_images(self._state, outcome)
        return await _extension_hooks.rewrite_tool_result(runner, call, outcome)

    async def prepare_next_turn(self) -> list[AgentMessage]:
        """Between turns: the threshold compaction (or a batch of masked tool results), then
        the system-prompt patch."""
        session = self._state.session
        projection = session.stored_projection()
        if self._compaction.over_threshold(projection, session.branch_view()):
            await self._compaction.auto("threshold", will_retry=False)
            projection = session.stored_projection()
        elif self._compaction.mask_batch():
            projection = session.stored_projection()
        options = self._loadout.next_turn_options()
        patch = self._loadout.system_patch(options, projection.entries)
        return [patch] if patch is not None else []

    def after_request(self, request: ModelRequest, message: AssistantMessage) -> None:
        collapse = system_delivery_of(self._state.require_model()) == "collapse"
        record = self._cache.record(
            request.messages, request.tools, message["usage"], collapse=collapse
        )
        self._state.events.emit(
            CacheUpdate(
                record.index,
                record.input,
                record.cache_read,
                record.cache_write,
                self._cache.hit_ratio,
                record.miss_cause,
            )
        )

    async def after_turn(
        self, index: int, message: AssistantMessage, tool_results: Sequence[ToolResultMessage]
    ) -> bool:
        # The turn's entries are in the file: make them durable (the ``sessionFsync`` setting),
        # off the event loop; a stored session's are committed to its store.
        session = self._state.session
        session.fsync = session_fsync_for(self._state.settings_data)
        await self._state.make_durable()
        return await _extension_hooks.turn_end(
            self._state.extensions,
            self._state.session,
            index,
            message,
            tool_results,
            lambda error: self._state.events.emit(ExtensionFailure("turn_end", error)),
        )

    async def finalize_message(self, message: AgentMessage) -> AgentMessage:
        return await _extension_hooks.finalize_message(self._state.extensions, message)

    def will_retry(self, result: RunResult) -> bool:
        return self._recovery.will_retry(result)

    async def notify(self, event: AgentEvent) -> None:
        await _extension_hooks.notify(self._state.extensions, event)

    def stream_listener(self) -> StreamListener | None:
        return _extension_hooks.stream_listener(self._state.extensions)


# -- what extensions may do ------------------------------------------------------------------------


class SessionExtensionActions:
    """The actions extensions may take on one agent session."""

    __slots__ = ("_guard", "_loadout", "_runs", "_set_name", "_state")

    def __init__(
        self,
        state: AgentState,
        loadout: Loadout,
        runs: RunControl,
        guard: OperationGuard,
        set_name: Callable[[str], None],
    ) -> None:
        self._state = state
        self._set_name = set_name
        self._loadout = loadout
        self._runs = runs
        self._guard = guard

    def get_active_tools(self) -> list[str]:
        return self._loadout.active_tools()

    def set_active_tools(self, names: Sequence[str]) -> None:
        self._loadout.set_active_tools(names)

    def get_all_tools(self) -> list[ToolInfo]:
        from pi_context.extensions.context import ToolInfo as Info

        runner = self._state.extensions
        owners = {
            id(tool): ext.name
            for ext in (runner.extensions if runner else ())
            for tool in ext.tools
        }
        return [
            Info(
                tool.name,
                tool.description,
                tool.parameters,
                tuple(tool.prompt_guidelines),
                tool.exposure,
                owners.get(id(tool)),
            )
            for tool in self._loadout.registered_tool_objects()
        ]

    def send_message(self, message: CustomMessageDraft, *, trigger_turn: bool = False) -> None:
        self._runs.deliver(message, trigger_turn=trigger_turn and not self._guard.running)

    def append_entry(self, custom_type: str, data: Any = None) -> None:
        self._state.session.append_custom(custom_type, data)

    def set_session_name(self, name: str) -> None:
        self._set_name(name)

    def get_session_name(self) -> str | None:
        return self._state.session.name
