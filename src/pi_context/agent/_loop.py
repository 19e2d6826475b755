"""The agent loop: turns of model requests and tool batches (pi-agent-core's ``agentLoop``).

One run starts with the messages of a prompt (system patch, user message, extension messages),
then repeats a *turn*: build the request (a :class:`RequestSource`, in the agent session its
request pipeline: a fresh session projection through the transform chain, :mod:`._request`),
stream the assistant message, execute its tool calls, and continue while there were tool calls
or queued messages (steering after the tool results, follow-ups when the run would stop, from
a :class:`DeliveryQueue`). Between turns the session may compact and patch the system prompt
(:meth:`LoopCallbacks.prepare_next_turn`).

The loop owns no state beyond the run: what it needs is handed to it at construction, the
requests, the queue and the :class:`LoopCallbacks` (the agent session's private
:class:`~pi_context.agent._run.SessionLoopCallbacks` in production, small fakes in
tests). Every message is persisted through the callbacks as soon as it is final, so an abort
at any point leaves a valid session:

- during streaming, the partial assistant message is stored with ``stopReason: "aborted"`` and
  without its (incomplete) tool calls (the loop accumulates the deltas it relays with the
  adapters' own :class:`~pi_context.model.message_builder.MessageBuilder`, as the adapter
  does for the final message: an abort leaves no final message to take them from);
- during tool execution, finished results are kept and every other call gets an error result
  ``Operation aborted`` marked ``details: {"aborted": true}``.

Cancellation is asyncio cancellation of the task running :meth:`AgentLoop.run`; the loop finishes
its bookkeeping, emits ``turn_end``/``agent_end`` and returns a result with ``aborted=True``.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol, cast

from msgspec import Struct, field

from pi_context.errors import ProviderError, ToolError
from pi_context.events import (
    AgentEnd,
    AgentStart,
    AssistantStreamEvent,
    MessageEnd,
    MessageStart,
    MessageUpdate,
    ToolExecutionEnd,
    ToolExecutionStart,
    ToolExecutionUpdate,
    ToolPartial,
    TurnEnd,
    TurnStart,
)
from pi_context.messages import (
    AgentMessage,
    AssistantMessage,
    StopReason,
    ToolCall,
    ToolResultMessage,
    Usage,
    assistant_message,
    empty_usage,
    now_ms,
    text_block,
    tool_result_message,
    with_thinking_level,
)
from pi_context.model import (
    Model,
    ModelInfo,
    ModelRequest,
    StreamDone,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolCallStart,
)
from pi_context.model.message_builder import MessageBuilder
from pi_context.session.projection import handed_out
from pi_context.tools.base import ToolOutcome, UpdateCallback

if TYPE_CHECKING:
    from pi_context.events import AgentEvent

__all__ = [
    "ABORTED_TOOL_TEXT",
    "AgentLoop",
    "DeliveryQueue",
    "LoopCallbacks",
    "RequestSource",
    "RunResult",
    "ToolOutcome",
    "aborted_tool_result",
    "handed_out",
]

ABORTED_TOOL_TEXT = "Operation aborted"


class RequestSource(Protocol):
    """Where the loop's requests come from."""

    @property
    def model(self) -> Model:
        """The model the next request goes to."""

    async def build(self) -> ModelRequest:
        """The next request, from a fresh projection of the session through the transform
        chain (never changes the stored session)."""


class DeliveryQueue(Protocol):
    """The messages waiting for the loop's delivery points."""

    def take_steering(self) -> list[AgentMessage]:
        """Steering messages for this delivery point (one, or all in ``all`` mode)."""

    def take_follow_up(self) -> list[AgentMessage]:
        """Follow-up messages, asked for only when the run would otherwise stop."""


StreamListener = Callable[[MessageUpdate, AssistantMessage], Awaitable[None]]
"""Awaits one streaming update with the assistant message received so far."""


class LoopCallbacks(Protocol):
    """What the loop calls back into at each step of a turn."""

    def persist(self, message: AgentMessage) -> str | None:
        """Store a final message; return its entry id (``None`` without a session)."""

    async def execute_tool(self, call: ToolCall, on_update: UpdateCallback) -> ToolOutcome:
        """Run one tool call, passing ``on_update`` to the tool for its partial results.
        Raising makes an error result; unknown tools are the callbacks' to report."""

    async def prepare_next_turn(self) -> list[AgentMessage]:
        """Between turns: compaction check and system patch; returns messages to add first."""

    def after_request(self, request: ModelRequest, message: AssistantMessage) -> None:
        """Called once per model request with its final message (cache accounting)."""

    async def after_turn(
        self, index: int, message: AssistantMessage, tool_results: Sequence[ToolResultMessage]
    ) -> bool:
        """Turn ``index``'s messages are persisted (extension ``turn_end``); ``True`` asks for
        one more request even when the model called no tool."""

    async def finalize_message(self, message: AgentMessage) -> AgentMessage:
        """The final form of a message before it is stored (extension ``message_end``)."""

    def will_retry(self, result: RunResult) -> bool:
        """Whether the owner will continue this run (``agent_end.willRetry``)."""

    async def notify(self, event: AgentEvent) -> None:
        """Lifecycle events for extensions (``agent_start``, ``turn_start``, tool execution
        incl. its updates, ``agent_end``); awaited in order, never on the abort path."""

    def stream_listener(self) -> StreamListener | None:
        """Asked once per model request: who awaits its streaming updates (extension
        ``message_update``), or ``None`` when nobody does (the stream then does no extra work)."""


class RunResult(Struct):
    """What one run added and how it ended."""

    messages: list[AgentMessage] = field(default_factory=list)
    last_assistant: AssistantMessage | None = None
    last_assistant_entry_id: str | None = None
    last_error: ProviderError | None = None
    aborted: bool = False
    turns: int = 0


def aborted_tool_result(call: ToolCall, timestamp: int | None = None) -> ToolResultMessage:
    """The result a tool call gets when the run is aborted before it finished."""
    return tool_result_message(
        call["id"],
        call["name"],
        [text_block(ABORTED_TOOL_TEXT)],
        is_error=True,
        details={"aborted": True},
        timestamp=timestamp,
    )


def _length_stop_result(call: ToolCall, timestamp: int) -> ToolResultMessage:
    text = (
        f'Tool call "{call["name"]}" was not executed: the response hit the output token limit, '
        "so its arguments may be incomplete. Retry with a shorter call."
    )
    return tool_result_message(
        call["id"], call["name"], [text_block(text)], is_error=True, details={}, timestamp=timestamp
    )


class _Partial:
    """The stream so far: its content accumulated by a :class:`MessageBuilder`, plus which
    block each content index is and which are open (for pi's ``*_start``/``*_end`` events)."""

    def __init__(self, info: ModelInfo, *, close_at_end: bool = False) -> None:
        self.builder = MessageBuilder(info)
        self.blocks: dict[int, dict[str, Any]] = {}
        """By content index: the builder's text or thinking block, or a tool call's id."""
        self.open_index: int | None = None
        self.close_at_end = close_at_end
        """Blocks end together when the stream ends, in the order they started, as pi-ai's
        Chat Completions adapter reports them (the other APIs end a block when the next one
        starts)."""
        self.unclosed: list[int] = []
        self.usage: Usage = empty_usage()
        """The usage known so far, carried by every ``message_update`` (pi's cumulative usage):
        the provider's report arrives with the end of the stream."""
        self.updates: list[MessageUpdate] | None = None
        """Updates not yet handed to the request's stream listener (``None``: no listener)."""


def _unfinished(
    partial: _Partial,
    info: ModelInfo,
    stop_reason: StopReason,
    timestamp: int,
    error: str | None = None,
) -> AssistantMessage:
    """The assistant message of a stream that did not finish: the text and thinking received so
    far, without its (possibly incomplete) tool calls."""
    return assistant_message(
        partial.builder.content(calls=False),
        api=info.api,
        provider=info.provider,
        model=info.id,
        stop_reason=stop_reason,
        error_message=error,
        timestamp=timestamp,
    )


async def _hand_over(
    partial: _Partial, listener: StreamListener, info: ModelInfo, timestamp: int
) -> None:
    """Await ``listener`` on each pending update with the message received so far (its
    blocks; stop reason ``pending``)."""
    updates = partial.updates
    if not updates:
        return
    partial.updates = []
    for update in updates:
        message = assistant_message(
            partial.builder.content(),
            api=info.api,
            provider=info.provider,
            model=info.id,
            usage=partial.usage,
            stop_reason="pending",
            timestamp=timestamp,
        )
        await listener(update, message)


class AgentLoop:
    """Runs the turns of one prompt; ``emit`` receives every event synchronously, in order.

    A loop serves one prompt: :meth:`run` may be called again for its retries and
    continuations, and the turn index runs on over those calls. ``clock`` (Unix milliseconds)
    stamps every message the loop makes and times tool calls; the agent passes its session's
    clock, so a run with a fixed clock is reproducible.
    """

    def __init__(
        self,
        callbacks: LoopCallbacks,
        emit: Callable[[AgentEvent], None],
        *,
        requests: RequestSource,
        queue: DeliveryQueue,
        clock: Callable[[], int] = now_ms,
    ) -> None:
        self.callbacks = callbacks
        self.requests = requests
        self.queue = queue
        self.emit = emit
        self.clock = clock
        self.turn_index = 0
        """The next turn's index, counted over the prompt's runs."""

    # -- messages -----------------------------------------------------------------------------

    async def _add(self, message: AgentMessage, result: RunResult) -> str | None:
        self.emit(MessageStart(handed_out(message)))
        message = await self.callbacks.finalize_message(message)
        return self._store(message, result)

    def _store(self, message: AgentMessage, result: RunResult) -> str | None:
        """Persist without awaiting anything (the abort path)."""
        entry_id = self.callbacks.persist(message)
        result.messages.append(message)
        self.emit(MessageEnd(handed_out(message), entry_id))
        return entry_id

    async def _notify(self, event: AgentEvent) -> None:
        self.emit(event)
        await self.callbacks.notify(event)

    # -- the run ------------------------------------------------------------------------------

    async def run(self, start: Sequence[AgentMessage]) -> RunResult:
        """Run until the model stops asking for tools and nothing is queued (or an abort)."""
        result = RunResult()
        try:
            await self._notify(AgentStart())
            await self._turns(list(start), result)
        except asyncio.CancelledError:
            result.aborted = True
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()
        will_retry = not result.aborted and self.callbacks.will_retry(result)
        end = AgentEnd(tuple(handed_out(m) for m in result.messages), will_retry)
        if result.aborted:
            self.emit(end)
        else:
            await self._notify(end)
        return result

    async def _turns(self, start: list[AgentMessage], result: RunResult) -> None:
        """pi's delivery points: steering after a turn's tool results (or before the run would
        stop), follow-ups only when nothing else would continue the run (:mod:`.queues`)."""
        batch = start
        pending: list[AgentMessage] = []
        first = True
        while True:
            if not first:
                batch = await self.callbacks.prepare_next_turn()
                batch.extend(pending or self.queue.take_steering())
                pending = []
            await self._notify(TurnStart(self.turn_index))
            first = False
            for message in batch:
                await self._add(message, result)
            result.turns += 1
            assistant = await self._request(result)
            if assistant["stopReason"] in ("error", "aborted"):
                self.emit(TurnEnd(handed_out(assistant), ()))
                await self._after_turn(assistant, ())
                if assistant["stopReason"] == "aborted":
                    raise asyncio.CancelledError
                return
            calls: list[ToolCall] = [b for b in assistant["content"] if b["type"] == "toolCall"]
            tool_results = await self._execute(assistant, calls, result)
            self.emit(TurnEnd(handed_out(assistant), tuple(map(handed_out, tool_results))))
            more = await self._after_turn(assistant, tool_results)
            pending = self.queue.take_steering()
            if calls or pending or more:
                continue
            pending = self.queue.take_follow_up()
            if not pending:
                return

    async def _after_turn(
        self, assistant: AssistantMessage, tool_results: Sequence[ToolResultMessage]
    ) -> bool:
        index = self.turn_index
        self.turn_index += 1
        return await self.callbacks.after_turn(index, assistant, tool_results)

    async def _request(self, result: RunResult) -> AssistantMessage:
        callbacks = self.callbacks
        request = await self.requests.build()
        model = self.requests.model
        info = model.info
        partial = _Partial(info, close_at_end=info.api == "openai-completions")
        # the reply is stamped with the session's clock when its request starts (as pi stamps
        # it), not by the model: a run under a fixed clock writes the same bytes every time
        started = self.clock()
        self.emit(
            MessageStart(
                assistant_message(
                    [],
                    api=info.api,
                    provider=info.provider,
                    model=info.id,
                    timestamp=started,
                )
            )
        )
        listener = callbacks.stream_listener()
        if listener is not None:
            partial.updates = []
        done: StreamDone | None = None
        try:
            async for event in model.stream(request):
                if isinstance(event, StreamDone):
                    done = event
                    break
                self._on_delta(partial, event)
                if listener is not None:
                    await _hand_over(partial, listener, info, started)
        except asyncio.CancelledError:
            self._close_open(partial)
            message = with_thinking_level(
                _unfinished(partial, info, "aborted", started), request.options.thinking_level
            )
            self._store_assistant(message, result)
            return message
        except ProviderError as exc:
            done = StreamDone(_unfinished(partial, info, "error", started, str(exc)), exc)
        if done is None:
            missing = ProviderError(f"{info.provider}/{info.id}: stream ended without a result")
            done = StreamDone(_unfinished(partial, info, "error", started, str(missing)), missing)
        # pi records the level each answer was requested with
        stamped = cast(AssistantMessage, {**done.message, "timestamp": started})
        done = StreamDone(with_thinking_level(stamped, request.options.thinking_level), done.error)
        partial.usage = done.message["usage"]
        self._close_open(partial, done.message)
        if listener is not None:
            await _hand_over(partial, listener, info, started)
        result.last_error = done.error
        callbacks.after_request(request, done.message)
        final = cast(AssistantMessage, await callbacks.finalize_message(done.message))
        self._store_assistant(final, result)
        return final

    def _store_assistant(self, message: AssistantMessage, result: RunResult) -> None:
        entry_id = self._store(message, result)
        result.last_assistant = message
        result.last_assistant_entry_id = entry_id

    # -- streaming events ---------------------------------------------------------------------

    def _update(self, partial: _Partial, event: AssistantStreamEvent) -> None:
        update = MessageUpdate(event, usage=partial.usage)
        self.emit(update)
        if partial.updates is not None:
            partial.updates.append(update)

    def _close_open(self, partial: _Partial, final: AssistantMessage | None = None) -> None:
        if partial.close_at_end:
            partial.open_index = None
            for unclosed in partial.unclosed:
                self._close_block(partial, unclosed, final)
            partial.unclosed.clear()
            return
        open_index = partial.open_index
        if open_index is None:
            return
        partial.open_index = None
        self._close_block(partial, open_index, final)

    def _close_block(self, partial: _Partial, index: int, final: AssistantMessage | None) -> None:
        block = partial.blocks[index]
        kind = block["type"]
        if kind in ("text", "thinking"):
            self._update(partial, AssistantStreamEvent(f"{kind}_end", index, content=block[kind]))
        else:
            call: dict[str, Any] | None = None
            if final is not None:
                for b in final["content"]:
                    if b["type"] == "toolCall" and b["id"] == block["id"]:
                        call = dict(b)
            self._update(partial, AssistantStreamEvent("toolcall_end", index, tool_call=call))

    def _on_delta(
        self, partial: _Partial, event: TextDelta | ThinkingDelta | ToolCallStart | ToolCallDelta
    ) -> None:
        index = event.index
        if partial.close_at_end:
            if index not in partial.blocks:
                partial.unclosed.append(index)
        elif partial.open_index is not None and partial.open_index != index:
            self._close_open(partial)
        builder = partial.builder
        if isinstance(event, TextDelta | ThinkingDelta):
            kind = "text" if isinstance(event, TextDelta) else "thinking"  # also the text's key
            if isinstance(event, TextDelta):
                builder.text(event.text, index)
            else:
                builder.thinking(event.text, index)
            if index not in partial.blocks:
                partial.blocks[index] = builder.last_block(kind) or {"type": kind, kind: ""}
                partial.open_index = index
                self._update(partial, AssistantStreamEvent(f"{kind}_start", index))
            self._update(partial, AssistantStreamEvent(f"{kind}_delta", index, delta=event.text))
        elif isinstance(event, ToolCallStart):
            builder.tool_start(event.id, event.name)
            partial.blocks[index] = {"type": "toolCall", "id": event.id}
            partial.open_index = index
            self._update(
                partial,
                AssistantStreamEvent(
                    "toolcall_start", index, tool_call_id=event.id, tool_name=event.name
                ),
            )
        else:
            builder.tool_arguments(event.id, event.arguments_json)
            partial.blocks.setdefault(index, {"type": "toolCall", "id": event.id})
            partial.open_index = index
            self._update(
                partial, AssistantStreamEvent("toolcall_delta", index, delta=event.arguments_json)
            )

    # -- tools --------------------------------------------------------------------------------

    async def _execute(
        self, assistant: AssistantMessage, calls: list[ToolCall], result: RunResult
    ) -> list[ToolResultMessage]:
        if not calls:
            return []
        if assistant["stopReason"] == "length":
            refused = [_length_stop_result(call, self.clock()) for call in calls]
            for r in refused:
                await self._add(r, result)
            return refused
        done: dict[str, ToolResultMessage] = {}
        notes: list[asyncio.Task[None]] = []

        async def run_one(call: ToolCall) -> None:
            # Calls run concurrently; ``write``/``edit`` serialize per file themselves (PathLocks).
            updates = _LiveUpdates(self, call, notes)
            started = self.clock()
            outcome = await self._run_tool(call, updates.on_update)
            finished = self.clock()
            duration = max(0, finished - started)
            message = tool_result_message(
                call["id"],
                call["name"],
                list(outcome.content),
                is_error=outcome.is_error,
                details=outcome.details,
                duration_ms=duration,
                timestamp=finished,
            )
            done[call["id"]] = message
            await updates.delivered()
            await self._notify(
                ToolExecutionEnd(
                    call["id"],
                    call["name"],
                    handed_out(message),
                    outcome.is_error,
                    duration,
                    structured_content=outcome.structured_content,
                )
            )

        aborted = False
        try:
            for call in calls:
                args = MappingProxyType(call["arguments"])  # read-only for extensions
                await self._notify(ToolExecutionStart(call["id"], call["name"], args))
            await asyncio.gather(*(run_one(call) for call in calls))
        except asyncio.CancelledError:
            aborted = True
            for note in notes:  # no extension hears of an update after the abort
                note.cancel()
        results: list[ToolResultMessage] = []
        for call in calls:
            message = done.get(call["id"])
            if message is None:
                message = aborted_tool_result(call, self.clock())
                self.emit(ToolExecutionEnd(call["id"], call["name"], handed_out(message), True))
            if aborted:
                self._store(message, result)
            else:
                await self._add(message, result)
            results.append(message)
        if aborted:
            self.emit(TurnEnd(handed_out(assistant), tuple(map(handed_out, results))))
            raise asyncio.CancelledError
        return results

    async def _run_tool(self, call: ToolCall, on_update: UpdateCallback) -> ToolOutcome:
        if "argumentsError" in call:
            text = f'Invalid arguments for tool "{call["name"]}": {call["argumentsError"]}'
            return ToolOutcome([text_block(text)], details={}, is_error=True)
        try:
            return await self.callbacks.execute_tool(call, on_update)
        except ToolError as exc:
            return ToolOutcome([text_block(str(exc))], details={}, is_error=True)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - tool code (incl. extension tools) must not end the run
            return ToolOutcome(
                [text_block(str(exc) or type(exc).__name__)], details={}, is_error=True
            )


class _LiveUpdates:
    """A tool call's partial results: each becomes a ``tool_execution_update`` event at once
    (the tool calls back synchronously, e.g. from its output pipe; a call from another thread
    is passed to the loop's thread), and reaches the extensions in order without holding up
    the tool; :meth:`delivered` waits for those deliveries, so extensions hear every update
    before the call's ``tool_execution_end``. Updates after that are ignored."""

    def __init__(self, loop: AgentLoop, call: ToolCall, notes: list[asyncio.Task[None]]) -> None:
        self._loop = loop
        self._call = call
        self._args = MappingProxyType(call["arguments"])
        self._notes = notes
        self._last: asyncio.Task[None] | None = None
        self._events = asyncio.get_running_loop()
        self._thread = threading.get_ident()
        self._ended = False

    def on_update(self, partial: ToolOutcome) -> None:
        if threading.get_ident() != self._thread:
            self._events.call_soon_threadsafe(self.on_update, partial)
            return
        if self._ended:
            return
        call = self._call
        event = ToolExecutionUpdate(
            call["id"],
            call["name"],
            self._args,
            ToolPartial(list(partial.content), partial.details),
        )
        self._loop.emit(event)
        self._last = asyncio.ensure_future(self._deliver(self._last, event))
        self._notes.append(self._last)

    async def _deliver(self, previous: asyncio.Task[None] | None, event: AgentEvent) -> None:
        if previous is not None:
            await asyncio.wait([previous])
        await self._loop.callbacks.notify(event)

    async def delivered(self) -> None:
        self._ended = True
        if self._last is not None:
            await asyncio.wait([self._last])
