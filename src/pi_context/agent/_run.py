"""One run of an agent session, from its trigger until the session is idle again.

A run starts with a user prompt or a triggering extension message and goes: the pre-prompt
compaction check, ``before_agent_start`` (which may change this run's prompt options, force a
prompt or add messages), the system-prompt patch, the loop, and after the loop the retries and
recoveries (:mod:`.recovery`), messages queued meanwhile, and ``agent_before_settle``. It ends
with ``agent_settled``. :class:`RunControl` owns the run's task, so :meth:`RunControl.abort`
can cancel it at any point and leave a valid session.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any, Literal, cast

from pi_context.events import AgentSettled, ExtensionFailure
from pi_context.messages import AgentMessage, ImageContent
from pi_context.prompt import SystemPromptOptions, build_system_prompt

from . import _extension_hooks
from ._loop import AgentLoop, LoopCallbacks, RequestSource
from ._state import AgentState
from .loadout import Loadout
from .recovery import Recovery
from .user_prompt import user_prompt

if TYPE_CHECKING:
    from pi_context.events import AgentEvent
    from pi_context.extensions.events import CustomMessageDraft

__all__ = ["RunControl", "custom_message"]


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
            self._start(message, None, ())
        else:
            self._state.queue.add(message)

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
        task = asyncio.get_running_loop().create_task(self._run(trigger, text, images))
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

    async def _run(
        self, trigger: AgentMessage, text: str | None, images: Sequence[ImageContent]
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
            state.events.emit(AgentSettled(aborted=aborted))

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
