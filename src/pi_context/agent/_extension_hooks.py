"""Extension events around the loop: lifecycle notifications, ``message_end`` replacement,
``tool_call`` blocking, ``tool_result`` rewriting and ``turn_end`` / ``agent_before_settle``
boundary drafts.

Notifications are the agent's own events (:data:`pi_context.events.NOTIFICATIONS`), passed to
the handlers as they are. Each function is a no-op when no handler is registered for its event,
so a session without extensions pays nothing; without a runner (nothing was loaded) the payload
classes are not even imported.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, cast

from pi_context.compaction.accounting import estimate_projected_context_tokens
from pi_context.events import NOTIFICATIONS
from pi_context.extensions.reasons import SessionReason
from pi_context.messages import AgentMessage, AssistantMessage, ToolCall, ToolResultMessage
from pi_context.prompt import get_current_system_message
from pi_context.session import Session
from pi_context.tools import ToolOutcome

from ._loop import StreamListener, handed_out
from ._state import AgentState

if TYPE_CHECKING:
    from pi_context.events import AgentEvent, MessageUpdate
    from pi_context.extensions.events import BoundaryResult
    from pi_context.extensions.runner import ExtensionRunner

__all__ = [
    "DRAFT_TYPES",
    "apply_boundary_drafts",
    "before_settle",
    "discover_resources",
    "finalize_message",
    "gate_tool_call",
    "notify",
    "rewrite_tool_result",
    "session_started",
    "stream_listener",
    "turn_end",
]

DRAFT_TYPES = frozenset({"custom", "custom_message", "context_edit", "compaction"})


async def notify(runner: ExtensionRunner | None, event: AgentEvent) -> None:
    """Pass a loop notification to the extensions that listen for it."""
    if runner is not None and event.type in NOTIFICATIONS and runner.has_handlers(event.type):
        await runner.emit(event)


def stream_listener(runner: ExtensionRunner | None) -> StreamListener | None:
    """Extension ``message_update``: what hands each streaming step to the handlers, or
    ``None`` when no handler listens (the stream then does no extra work)."""
    if runner is None:
        return None
    from pi_context.extensions.events import MessageUpdateEvent

    if not runner.has_handlers(MessageUpdateEvent.type):
        return None

    async def listener(update: MessageUpdate, message: AssistantMessage) -> None:
        await runner.emit(MessageUpdateEvent(message, update.event, update.usage))

    return listener


async def session_started(
    state: AgentState, reason: SessionReason, previous_session_file: str | None = None
) -> None:
    """Extension ``resources_discover`` (extra skill paths) and ``session_start``."""
    runner = state.extensions
    if runner is None:
        return
    await discover_resources(state, "startup")
    from pi_context.extensions.events import SessionStartEvent

    if runner.has_handlers(SessionStartEvent.type):
        await runner.emit(SessionStartEvent(reason, previous_session_file))


async def discover_resources(state: AgentState, reason: Literal["startup", "reload"]) -> None:
    """Extension ``resources_discover``: extra skill paths are loaded too."""
    runner = state.extensions
    if runner is None:
        return
    from pi_context.extensions.events import ResourcesDiscoverEvent  # loaded with the runner

    if not runner.has_handlers(ResourcesDiscoverEvent.type):
        return
    found = await runner.emit_resources_discover(ResourcesDiscoverEvent(state.cwd, reason))
    extra = [p for p in found.skill_paths if p not in state.loader.skill_paths]
    if extra:
        state.loader.skill_paths = (*state.loader.skill_paths, *extra)
        state.resources = state.loader.load()


async def finalize_message(runner: ExtensionRunner | None, message: AgentMessage) -> AgentMessage:
    """``message_end`` handlers may replace a message (same role) before it is stored."""
    if runner is None:
        return message
    from pi_context.extensions.events import MessageEndEvent  # loaded with the runner

    if not runner.has_handlers(MessageEndEvent.type):
        return message
    return await runner.emit_message_end(MessageEndEvent(message))


async def gate_tool_call(runner: ExtensionRunner | None, call: ToolCall) -> ToolOutcome | None:
    """An error outcome when a ``tool_call`` handler blocks the call, else ``None``."""
    if runner is None:
        return None
    from pi_context.extensions.events import ToolCallEvent  # loaded with the runner

    if not runner.has_handlers(ToolCallEvent.type):
        return None
    args = call["arguments"] if isinstance(call["arguments"], dict) else {}
    verdict = await runner.emit_tool_call(ToolCallEvent(call["id"], call["name"], dict(args)))
    if verdict is None or not verdict.block:
        return None
    reason = verdict.reason or f'Tool call "{call["name"]}" was blocked by an extension'
    return ToolOutcome([{"type": "text", "text": reason}], {}, True)


async def rewrite_tool_result(
    runner: ExtensionRunner | None, call: ToolCall, outcome: ToolOutcome
) -> ToolOutcome:
    """``tool_result`` handlers may change the content, details or error flag."""
    if runner is None:
        return outcome
    from pi_context.extensions.events import ToolResultEvent  # loaded with the runner

    if not runner.has_handlers(ToolResultEvent.type):
        return outcome
    args = call["arguments"] if isinstance(call["arguments"], dict) else {}
    result = await runner.emit_tool_result(
        ToolResultEvent(
            call["id"],
            call["name"],
            dict(args),
            list(outcome.content),
            outcome.details,
            outcome.is_error,
        )
    )
    return ToolOutcome(
        list(result.content if result.content is not None else outcome.content),
        result.details,
        bool(result.is_error) if result.is_error is not None else outcome.is_error,
        outcome.structured_content if result.content is None else None,  # stale once rewritten
    )


async def turn_end(
    runner: ExtensionRunner | None,
    session: Session,
    index: int,
    message: AssistantMessage,
    tool_results: Sequence[ToolResultMessage],
    report: Callable[[str], None],
) -> bool:
    """Dispatch ``turn_end``; apply the drafts handlers proposed; return their ``continue``."""
    if runner is None:
        return False
    from pi_context.extensions.events import TurnEndEvent  # loaded with the runner

    if not runner.has_handlers(TurnEndEvent.type):
        return False
    stop = message["stopReason"]
    outcome = "aborted" if stop == "aborted" else "error" if stop == "error" else "completed"
    count = 1 + len(tool_results)
    recent: list[str] = []  # ids of the turn's last ``count`` message entries, oldest first
    for entry in reversed(session.branch_view()):
        if entry.type == "message":
            recent.append(entry.id)
            if len(recent) == count:
                break
    recent.reverse()
    event = TurnEndEvent(
        index,
        handed_out(message),
        [handed_out(r) for r in tool_results],
        message_entry_id=recent[0] if recent else None,
        tool_result_entry_ids=recent[1:],
        outcome=cast(Any, outcome),
    )
    proposal = await runner.emit_boundary(event)
    apply_boundary_drafts(session, proposal.entries or [], report)
    return bool(proposal.continue_) and outcome == "completed"


async def before_settle(runner: ExtensionRunner | None, outcome: str) -> BoundaryResult | None:
    """Dispatch ``agent_before_settle`` (``None`` when nobody listens)."""
    if runner is None:
        return None
    from pi_context.extensions.events import AgentBeforeSettleEvent  # loaded with the runner

    if not runner.has_handlers(AgentBeforeSettleEvent.type):
        return None
    return await runner.emit_boundary(
        AgentBeforeSettleEvent(outcome="error" if outcome == "error" else "completed")
    )


def _problem(draft: Any, on_path: Callable[[Any], bool]) -> str | None:
    if not isinstance(draft, Mapping):
        return "a draft entry must be an object"
    kind = draft.get("type")
    if kind not in DRAFT_TYPES:
        return f"unknown draft entry type {kind!r}"
    if kind in ("custom", "custom_message") and not isinstance(draft.get("customType"), str):
        return f"a {kind} draft needs a string customType"
    if kind == "context_edit" and not on_path(draft.get("targetId")):
        return f"context_edit target {draft.get('targetId')!r} is not on the current branch"
    if kind == "compaction":
        if not isinstance(draft.get("summary"), str):
            return "a compaction draft needs a string summary"
        kept = draft.get("firstKeptEntryId")
        if kept is not None and not on_path(kept):
            return f"firstKeptEntryId {kept!r} is not on the current branch"
    return None


def apply_boundary_drafts(
    session: Session, drafts: Sequence[Any], report: Callable[[str], None]
) -> None:
    """Validate every draft first, then append them in order (all or nothing)."""
    if not drafts:
        return

    def on_path(entry_id: Any) -> bool:
        return isinstance(entry_id, str) and session.on_branch(entry_id)

    for draft in drafts:
        problem = _problem(draft, on_path)
        if problem is not None:
            report(f"turn_end drafts rejected: {problem}")
            return
    for draft in drafts:
        kind = draft["type"]
        if kind == "custom":
            session.append_custom(draft["customType"], draft.get("data"))
        elif kind == "custom_message":
            session.append_custom_message(
                draft["customType"],
                draft.get("content", ""),
                draft.get("display", True),
                draft.get("details"),
            )
        elif kind == "context_edit":
            session.append_context_edit(draft["targetId"], draft.get("replacement"))
        else:
            projection = session.stored_projection()
            tokens = estimate_projected_context_tokens(projection, session.branch_view()).tokens
            snapshot = get_current_system_message(projection.messages)
            system = dict(snapshot) if snapshot is not None else None
            if system is not None:
                system["timestamp"] = session.now_ms()
            session.append_compaction(
                draft["summary"],
                draft.get("firstKeptEntryId"),
                tokens,
                details=draft.get("details"),
                usage=draft.get("usage"),
                from_hook=True,
                system_message=system,
            )
