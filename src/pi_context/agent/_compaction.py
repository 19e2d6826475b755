"""When and how an agent session compacts: manual, threshold, overflow and idle compactions.

**When** is pi's ``_checkCompaction`` as a pure decision: the session calls
:func:`check_compaction` before a new prompt (with aborted responses considered) and after a run
(aborted responses skipped); the between-turn threshold test is :func:`threshold_exceeded`;
:func:`idle_compaction_due` is this project's early compaction after a pause that let the
provider's prompt cache expire. The decision (:class:`CompactionDecision`) says what to do; the
session does it (omit a failed attempt, compact, retry once).

**How**: the compaction engine (:class:`~pi_context.compaction.engine.Compactor`) prepares,
summarizes and appends; :class:`CompactionControl` hands each compaction to its
:class:`~._compaction_runner.CompactionRunner`, made on the first one: it configures the engine
for the current model and settings, passes the engine's events on to the session's event bus,
answers the engine's ``session_before_compact`` hook with the extensions (cancel, or a
compaction of their own) and dispatches ``session_compact`` / ``session_compact_failed`` to them
once the engine returns, in the order the engine reported them. A session that never compacts
never imports the engine (the runner's module is imported on first use). pi's failure rules: a
manual compaction raises, an automatic one reports and returns ``None``.

:class:`OperationGuard` makes a manual compaction or a tree navigation the session's one
abortable operation.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from msgspec import Struct

from pi_context.compaction.accounting import (
    TokenCache,
    calculate_context_tokens,
    estimate_context_tokens,
    estimate_projected_context_tokens,
    should_compact,
)
from pi_context.errors import CompactionCancelledError, CompactionError
from pi_context.messages import AssistantMessage
from pi_context.model import ModelInfo, ModelRequest
from pi_context.model.classify import is_context_overflow
from pi_context.resources.settings import CompactionSettings
from pi_context.session.entries import Entry
from pi_context.session.projection import Projection, js_date_ms

from ._state import AgentState, BranchPositions

if TYPE_CHECKING:  # the engine and its events load with the runner, on the first compaction
    from pi_context.compaction.retry_events import CompactionReason

    from ._compaction_runner import CompactionRunner

__all__ = [
    "CompactionControl",
    "CompactionDecision",
    "OperationGuard",
    "check_compaction",
    "idle_compaction_due",
    "latest_compaction_ms",
    "threshold_exceeded",
]


# -- when: the decision ----------------------------------------------------------------------------


class CompactionDecision(Struct, frozen=True):
    """``none``; ``threshold``; ``overflow`` (``will_retry``: omit the attempt, compact, retry);
    ``exhausted`` (a second overflow after one recovery: report ``error_message``, do nothing)."""

    action: Literal["none", "threshold", "overflow", "exhausted"]
    will_retry: bool = False
    error_message: str | None = None


NONE = CompactionDecision("none")


def latest_compaction_ms(
    branch: Sequence[Entry], facts: BranchPositions | None = None
) -> float | None:
    """The time (ms) of the last compaction on the branch, if any."""
    last = (facts or BranchPositions()).last_compaction(branch)
    if last < 0:
        return None
    value = js_date_ms(branch[last].get("timestamp"))
    return float(value) if value is not None else None


def _older_than_compaction(
    message: AssistantMessage,
    entry_id: str | None,
    branch: Sequence[Entry],
    at: float | None,
    facts: BranchPositions,
) -> bool:
    """pi compares the message timestamp with the latest compaction's; a response stored in
    the same millisecond would count as stale. With the entry known, its position on the
    branch decides instead (deterministic)."""
    if at is None:
        return False
    if entry_id is not None:
        position = facts.position(branch, entry_id)
        if position is not None:
            return position < facts.last_compaction(branch)
    timestamp = message.get("timestamp")
    return isinstance(timestamp, int | float) and timestamp <= at


def threshold_exceeded(
    projection: Projection,
    branch: Sequence[Entry],
    info: ModelInfo,
    settings: CompactionSettings,
    cache: TokenCache | None = None,
) -> bool:
    """The between-turn test: the projected estimate is over ``window - reserveTokens``.

    ``cache`` (kept across calls) spares re-measuring unchanged entries."""
    if info.context_window <= 0 or not settings.enabled:
        return False
    tokens = estimate_projected_context_tokens(projection, branch, cache).tokens
    return bool(should_compact(tokens, info.context_window, settings))


def idle_compaction_due(
    message: AssistantMessage,
    now_ms: int,
    projection: Projection,
    branch: Sequence[Entry],
    info: ModelInfo,
    settings: CompactionSettings,
    cache: TokenCache | None = None,
) -> bool:
    """Whether a prompt arriving at ``now_ms`` after ``message`` (the newest response) should
    compact first because the prompt cache has expired (``compaction.idleCompactPercent``).

    A provider keeps a prompt's cached prefix for a few minutes after its last use; after a
    longer pause the next request is billed for its whole prompt however it is built. The
    context is then shrunk by a summary when it is past ``idleCompactPercent`` of the
    threshold: the summary request and the first request after it cost about what the lone
    rewrite would, and every request until the next compaction re-reads a smaller prompt.
    The pause is measured from the response's timestamp (when its request was sent)."""
    percent = settings.idle_compact_percent
    window = info.context_window
    if not settings.enabled or percent <= 0 or window <= 0:
        return False
    sent = message.get("timestamp")
    if not isinstance(sent, int | float) or now_ms - sent <= settings.idle_seconds * 1000:
        return False
    threshold = window - settings.reserve_tokens
    tokens = estimate_projected_context_tokens(projection, branch, cache).tokens
    return tokens > threshold * percent / 100


def check_compaction(
    message: AssistantMessage,
    entry_id: str | None,
    *,
    branch: Sequence[Entry],
    projection: Projection,
    info: ModelInfo,
    settings: CompactionSettings,
    skip_aborted: bool = True,
    recovery_attempted: bool = False,
    cache: TokenCache | None = None,
    facts: BranchPositions | None = None,
) -> CompactionDecision:
    """Decide what the session does after ``message`` (pi's ``_checkCompaction``, in its order).

    ``cache`` and ``facts`` (kept across calls) spare re-measuring and re-scanning what did not
    change since the previous check."""
    facts = facts or BranchPositions()
    if not settings.enabled:
        return NONE
    stop = message.get("stopReason")
    if skip_aborted and stop == "aborted":
        return NONE
    same_model = message.get("provider") == info.provider and message.get("model") == info.id
    window = info.context_window
    if window <= 0:
        return NONE
    compacted_at = latest_compaction_ms(branch, facts)
    if _older_than_compaction(message, entry_id, branch, compacted_at, facts):
        return NONE

    # The message is normally at the end: scan from there.
    projected = entry_id is None or any(
        p.entry.id == entry_id and any(m.get("role") == "assistant" for m in p.messages)
        for p in reversed(projection.entries)
    )
    after: Sequence[Entry] = ()
    if entry_id is not None:
        for i in range(len(branch) - 1, -1, -1):
            if branch[i].id == entry_id:
                after = branch[i + 1 :]
                break
    edit_after = any(e.type == "context_edit" for e in after)
    last_edit_on_msg: Entry | None = None
    for e in after:
        if e.type == "context_edit" and e.get("targetId") == entry_id:
            last_edit_on_msg = e
    retained = entry_id is None or (
        not any(e.type == "compaction" for e in after)
        and (last_edit_on_msg is None or last_edit_on_msg.get("replacement") is not None)
    )
    usage_matches = projected and not edit_after
    explicit = stop == "error" and is_context_overflow(message)
    overflow = same_model and (
        (explicit and retained) or (usage_matches and is_context_overflow(message, window))
    )
    raw_usage: Any = message.get("usage")
    usage: Mapping[str, Any] = raw_usage if isinstance(raw_usage, Mapping) else {}
    recoverable_length = (
        same_model
        and projected
        and stop == "length"
        and info.max_tokens > 0
        and int(usage.get("output", 0) or 0) < info.max_tokens
    )
    if overflow or recoverable_length:
        will_retry = stop != "stop"
        if not will_retry:
            return CompactionDecision("overflow", will_retry=False)
        if recovery_attempted:
            what = "Context overflow" if overflow else "Truncated-response"
            return CompactionDecision(
                "exhausted",
                error_message=(
                    f"{what} recovery failed after one compact-and-retry attempt; "
                    "the request still does not fit the model's context window"
                ),
            )
        return CompactionDecision("overflow", will_retry=True)

    if facts.has_context_edit(projection.entries):
        tokens = estimate_projected_context_tokens(projection, branch, cache).tokens
    elif stop == "error" or calculate_context_tokens(usage) == 0:
        estimate = estimate_context_tokens(projection.messages)
        if estimate.last_usage_index is not None and compacted_at is not None:
            used = projection.messages[estimate.last_usage_index]
            ts = used.get("timestamp")
            if isinstance(ts, int | float) and ts <= compacted_at:
                return NONE
        tokens = estimate.tokens
    else:
        tokens = int(calculate_context_tokens(usage))
    if should_compact(tokens, window, settings):
        return CompactionDecision("threshold")
    return NONE


# -- how: the control ------------------------------------------------------------------------------


_T = TypeVar("_T")


def cancelling() -> bool:
    """Whether the current task itself is being cancelled (not just the awaited operation)."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


class OperationGuard:
    """The session's abortable operation (a manual compaction or a tree navigation)."""

    __slots__ = ("_depth", "_task")

    def __init__(self) -> None:
        self._task: asyncio.Task[Any] | None = None
        self._depth = 0

    @property
    def running(self) -> bool:
        return self._depth > 0

    async def run(self, task: asyncio.Task[_T]) -> _T:
        """Await ``task`` as the operation :meth:`abort` cancels."""
        self._depth += 1
        self._task = task
        try:
            return await task
        finally:
            self._depth -= 1
            self._task = None

    def abort(self) -> None:
        if self._task is not None and not self._task.done():
            self._task.cancel()


class CompactionControl:
    """Decides and starts the compactions of one agent session; its runner keeps the engine
    across calls (the engine's failure count drives the auto-compaction pause)."""

    def __init__(
        self,
        state: AgentState,
        guard: OperationGuard,
        conversation: Callable[[], Awaitable[ModelRequest]] | None = None,
    ) -> None:
        self._state = state
        self._guard = guard
        self._runner: CompactionRunner | None = None
        self._conversation = conversation
        """Builds the request the agent would send now (a shared summary request continues it)."""

    # -- decisions --------------------------------------------------------------------------------

    def decide(
        self,
        message: AssistantMessage,
        entry_id: str | None,
        *,
        skip_aborted: bool = True,
        recovery_attempted: bool = False,
    ) -> CompactionDecision:
        """What to do after ``message`` (pi's ``_checkCompaction``); ``recovery_attempted``: an
        overflow recovery was already tried in this run (a second overflow is ``exhausted``)."""
        state = self._state
        session = state.session
        return check_compaction(
            message,
            entry_id,
            branch=session.branch_view(),
            projection=session.stored_projection(),
            info=state.require_model().info,
            settings=state.compaction_settings(),
            skip_aborted=skip_aborted,
            recovery_attempted=recovery_attempted,
            cache=state.token_cache,
            facts=state.positions,
        )

    def over_threshold(self, projection: Projection, branch: Sequence[Entry]) -> bool:
        """The between-turn test on the given projection of ``branch``."""
        state = self._state
        return threshold_exceeded(
            projection,
            branch,
            state.require_model().info,
            state.compaction_settings(),
            state.token_cache,
        )

    def idle_due(self, message: AssistantMessage) -> bool:
        """Whether a prompt now, after ``message``, follows a pause long enough to compact
        early (``compaction.idleCompactPercent``)."""
        state = self._state
        session = state.session
        return idle_compaction_due(
            message,
            state.now_ms(),
            session.stored_projection(),
            session.branch_view(),
            state.require_model().info,
            state.compaction_settings(),
            state.token_cache,
        )

    def mask_batch(self) -> bool:
        """Mask old tool results now when a batch's worth can be masked
        (``compaction.maskBatchTokens`` with ``maskObservations``); whether it masked."""
        settings = self._state.compaction_settings()
        batch = settings.mask_batch_tokens
        if not settings.enabled or not settings.mask_observations or batch <= 0:
            return False
        from pi_context.compaction.masking import find_maskable, placeholder_for  # option on

        items = self._state.session.stored_projection().entries
        candidates = find_maskable(items, settings.mask_keep_turns)
        saving = sum(c.tokens - len(placeholder_for(c.tool_name, c.chars)) // 4 for c in candidates)
        if saving < batch:
            return False  # the engine is not loaded until there is a batch to mask
        return self._running().mask()

    # -- running ----------------------------------------------------------------------------------

    async def auto(self, reason: CompactionReason, *, will_retry: bool) -> bool:
        """pi's ``_runAutoCompaction``: ``True`` when the caller should continue the run."""
        result = await self._running().run(reason, None, will_retry=will_retry, manual=False)
        if result is None:
            return False
        await self._state.commit()  # a stored session's compaction is stored at once
        return True if will_retry else bool(self._state.queue)

    async def manual(self, instructions: str | None) -> Mapping[str, Any]:
        """pi's ``/compact`` (the caller has stopped any run). Raises
        :class:`~pi_context.errors.CompactionError` (nothing appended)."""
        text = instructions.strip() if instructions else None
        async with self._state.turn():  # a stored session's lease, as for a run
            task = asyncio.create_task(
                self._running().run("manual", text or None, will_retry=False, manual=True)
            )
            try:
                result = await self._guard.run(task)
            except asyncio.CancelledError:
                if task.cancelled() and not cancelling():
                    raise CompactionCancelledError("Compaction cancelled") from None
                raise
            if result is None:  # pragma: no cover - manual compactions raise instead
                raise CompactionError("Nothing to compact (session too small)")
            await self._state.commit()
        return result.to_json()

    async def report_failed(
        self, reason: CompactionReason, error: str | None, *, aborted: bool, from_extension: bool
    ) -> None:
        """``session_compact_failed`` for a failure decided outside the engine (exhausted)."""
        await self._running().report_failed(
            reason, error, aborted=aborted, from_extension=from_extension
        )

    def _running(self) -> CompactionRunner:
        runner = self._runner
        if runner is None:
            from ._compaction_runner import CompactionRunner

            runner = self._runner = CompactionRunner(self._state, self._conversation)
        return runner
