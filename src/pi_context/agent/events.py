"""Typed events the agent emits while it runs.

Every event is a frozen dataclass with a ``type`` string and a :meth:`to_json` that returns the
record pi 1.6.0 writes in its ``--mode json`` stream (field names in camelCase, as pi spells them).
Events pi does not have (cache accounting, extension errors) use their own ``type`` names and are
marked below; a client that only knows pi's stream can ignore them.

The CLI renders and serializes these; library users iterate them from ``AgentSession.prompt()``
or receive them through ``AgentSession.subscribe()``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, TypeAlias

from pi_context.messages import AgentMessage, AssistantMessage, ToolResultMessage, Usage

__all__ = [
    "AgentEnd",
    "AgentEvent",
    "AgentSettled",
    "AgentStart",
    "AssistantStreamEvent",
    "AutoRetryEnd",
    "AutoRetryStart",
    "CacheUpdate",
    "CompactionEnd",
    "CompactionReason",
    "CompactionStart",
    "EntryAppended",
    "ExtensionError",
    "MessageEnd",
    "MessageStart",
    "MessageUpdate",
    "QueueUpdate",
    "SummarizationRetryAttemptStart",
    "SummarizationRetryFinished",
    "SummarizationRetryScheduled",
    "ToolExecutionEnd",
    "ToolExecutionStart",
    "ToolExecutionUpdate",
    "TreeNavigated",
    "TurnEnd",
    "TurnStart",
]

CompactionReason = Literal["manual", "threshold", "overflow"]


def _drop_none(record: dict[str, Any]) -> dict[str, Any]:
    """JSON.stringify omits ``undefined`` fields; we model them as ``None``."""
    return {k: v for k, v in record.items() if v is not None}


@dataclass(frozen=True, slots=True)
class AgentStart:
    type: ClassVar[str] = "agent_start"

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type}


@dataclass(frozen=True, slots=True)
class TurnStart:
    type: ClassVar[str] = "turn_start"

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type}


@dataclass(frozen=True, slots=True)
class MessageStart:
    """A message is about to be added (user, system patch, assistant, tool result, custom)."""

    message: AgentMessage
    type: ClassVar[str] = "message_start"

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "message": self.message}


@dataclass(frozen=True, slots=True)
class AssistantStreamEvent:
    """One streaming step of the assistant message (pi's ``assistantMessageEvent``).

    ``kind`` is one of ``text_start``, ``text_delta``, ``text_end``, ``thinking_start``,
    ``thinking_delta``, ``thinking_end``, ``toolcall_start``, ``toolcall_delta``,
    ``toolcall_end``.
    """

    kind: str
    content_index: int
    delta: str | None = None
    content: str | None = None
    tool_call_id: str | None = None
    tool_name: str | None = None
    tool_call: Mapping[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return _drop_none(
            {
                "type": self.kind,
                "contentIndex": self.content_index,
                "id": self.tool_call_id,
                "toolName": self.tool_name,
                "delta": self.delta,
                "content": self.content,
                "toolCall": self.tool_call,
            }
        )


@dataclass(frozen=True, slots=True)
class MessageUpdate:
    """A streaming update of the assistant message; ``usage`` is cumulative so far."""

    event: AssistantStreamEvent
    usage: Usage | None = None
    type: ClassVar[str] = "message_update"

    def to_json(self) -> dict[str, Any]:
        return _drop_none(
            {"type": self.type, "usage": self.usage, "assistantMessageEvent": self.event.to_json()}
        )


@dataclass(frozen=True, slots=True)
class MessageEnd:
    """The final form of a message; it has been persisted (``entry_id``) when a session is used."""

    message: AgentMessage
    entry_id: str | None = None
    type: ClassVar[str] = "message_end"

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "message": self.message}


@dataclass(frozen=True, slots=True)
class ToolExecutionStart:
    tool_call_id: str
    tool_name: str
    args: Mapping[str, Any]
    type: ClassVar[str] = "tool_execution_start"

    def to_json(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "toolCallId": self.tool_call_id,
            "toolName": self.tool_name,
            "args": dict(self.args),
        }


@dataclass(frozen=True, slots=True)
class ToolExecutionUpdate:
    tool_call_id: str
    tool_name: str
    args: Mapping[str, Any]
    partial_result: Any
    type: ClassVar[str] = "tool_execution_update"

    def to_json(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "toolCallId": self.tool_call_id,
            "toolName": self.tool_name,
            "args": dict(self.args),
            "partialResult": self.partial_result,
        }


@dataclass(frozen=True, slots=True)
class ToolExecutionEnd:
    tool_call_id: str
    tool_name: str
    result: ToolResultMessage
    is_error: bool
    duration_ms: int | None = None
    type: ClassVar[str] = "tool_execution_end"

    def to_json(self) -> dict[str, Any]:
        return _drop_none(
            {
                "type": self.type,
                "toolCallId": self.tool_call_id,
                "toolName": self.tool_name,
                "result": {
                    "content": self.result["content"],
                    "details": self.result.get("details"),
                },
                "isError": self.is_error,
                "durationMs": self.duration_ms,
            }
        )


@dataclass(frozen=True, slots=True)
class TurnEnd:
    message: AssistantMessage
    tool_results: Sequence[ToolResultMessage] = ()
    type: ClassVar[str] = "turn_end"

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "message": self.message, "toolResults": list(self.tool_results)}


@dataclass(frozen=True, slots=True)
class AgentEnd:
    """One low-level run ended; ``will_retry`` when the session continues it (overflow recovery)."""

    messages: Sequence[AgentMessage] = ()
    will_retry: bool = False
    type: ClassVar[str] = "agent_end"

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "messages": list(self.messages), "willRetry": self.will_retry}


@dataclass(frozen=True, slots=True)
class AgentSettled:
    """The session is idle again (after retries, compactions and queued messages)."""

    aborted: bool = False
    type: ClassVar[str] = "agent_settled"

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "aborted": self.aborted}


@dataclass(frozen=True, slots=True)
class QueueUpdate:
    """Messages waiting for the busy run (as their texts)."""

    steering: Sequence[str] = ()
    follow_up: Sequence[str] = ()
    type: ClassVar[str] = "queue_update"

    def to_json(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "steering": list(self.steering),
            "followUp": list(self.follow_up),
        }


@dataclass(frozen=True, slots=True)
class EntryAppended:
    """An entry was appended to the session file outside the message flow (e.g. a context edit)."""

    entry: Mapping[str, Any]
    type: ClassVar[str] = "entry_appended"

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "entry": dict(self.entry)}


@dataclass(frozen=True, slots=True)
class CompactionStart:
    reason: CompactionReason
    type: ClassVar[str] = "compaction_start"

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "reason": self.reason}


@dataclass(frozen=True, slots=True)
class CompactionEnd:
    """A compaction finished; ``result`` is absent on failure (then ``will_retry`` is false)."""

    reason: CompactionReason
    result: Mapping[str, Any] | None = None
    aborted: bool = False
    will_retry: bool = False
    error_message: str | None = None
    type: ClassVar[str] = "compaction_end"

    def to_json(self) -> dict[str, Any]:
        return _drop_none(
            {
                "type": self.type,
                "reason": self.reason,
                "result": dict(self.result) if self.result is not None else None,
                "aborted": self.aborted,
                "willRetry": self.will_retry,
                "errorMessage": self.error_message,
            }
        )


@dataclass(frozen=True, slots=True)
class AutoRetryStart:
    attempt: int
    max_attempts: int
    delay_ms: int
    error_message: str
    type: ClassVar[str] = "auto_retry_start"

    def to_json(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "attempt": self.attempt,
            "maxAttempts": self.max_attempts,
            "delayMs": self.delay_ms,
            "errorMessage": self.error_message,
        }


@dataclass(frozen=True, slots=True)
class AutoRetryEnd:
    success: bool
    attempt: int
    final_error: str | None = None
    type: ClassVar[str] = "auto_retry_end"

    def to_json(self) -> dict[str, Any]:
        return _drop_none(
            {
                "type": self.type,
                "success": self.success,
                "attempt": self.attempt,
                "finalError": self.final_error,
            }
        )


@dataclass(frozen=True, slots=True)
class SummarizationRetryScheduled:
    attempt: int
    max_attempts: int
    delay_ms: int
    error_message: str
    type: ClassVar[str] = "summarization_retry_scheduled"

    def to_json(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "attempt": self.attempt,
            "maxAttempts": self.max_attempts,
            "delayMs": self.delay_ms,
            "errorMessage": self.error_message,
        }


@dataclass(frozen=True, slots=True)
class SummarizationRetryAttemptStart:
    source: Literal["compaction", "branchSummary"]
    reason: CompactionReason | None = None
    type: ClassVar[str] = "summarization_retry_attempt_start"

    def to_json(self) -> dict[str, Any]:
        return _drop_none({"type": self.type, "source": self.source, "reason": self.reason})


@dataclass(frozen=True, slots=True)
class SummarizationRetryFinished:
    type: ClassVar[str] = "summarization_retry_finished"

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type}


@dataclass(frozen=True, slots=True)
class TreeNavigated:
    """Beyond pi: the leaf moved (``/tree``); ``summary_entry_id`` when a branch summary was stored."""

    new_leaf_id: str | None
    old_leaf_id: str | None
    summary_entry_id: str | None = None
    editor_text: str | None = None
    type: ClassVar[str] = "tree_navigated"

    def to_json(self) -> dict[str, Any]:
        return _drop_none(
            {
                "type": self.type,
                "newLeafId": self.new_leaf_id,
                "oldLeafId": self.old_leaf_id,
                "summaryEntryId": self.summary_entry_id,
                "editorText": self.editor_text,
            }
        )


@dataclass(frozen=True, slots=True)
class ExtensionError:
    """Beyond pi's JSON stream: an extension handler raised; the session went on."""

    event: str
    error: str
    extension: str | None = None
    type: ClassVar[str] = "extension_error"

    def to_json(self) -> dict[str, Any]:
        return _drop_none(
            {
                "type": self.type,
                "event": self.event,
                "extension": self.extension,
                "error": self.error,
            }
        )


@dataclass(frozen=True, slots=True)
class CacheUpdate:
    """Beyond pi: prompt-cache accounting of one model request.

    ``miss_cause`` names what changed in the request prefix when the provider read less from its
    cache than the previous request had cached (``section:<name>``, ``tools``, ``message:<i>:<role>``
    or ``unchanged prefix`` when the cache expired), else ``None``.
    """

    request_index: int
    input: int
    cache_read: int
    cache_write: int
    hit_ratio: float
    miss_cause: str | None = None
    type: ClassVar[str] = "cache_update"

    def to_json(self) -> dict[str, Any]:
        return _drop_none(
            {
                "type": self.type,
                "requestIndex": self.request_index,
                "input": self.input,
                "cacheRead": self.cache_read,
                "cacheWrite": self.cache_write,
                "hitRatio": self.hit_ratio,
                "missCause": self.miss_cause,
            }
        )


AgentEvent: TypeAlias = (
    AgentStart
    | TurnStart
    | MessageStart
    | MessageUpdate
    | MessageEnd
    | ToolExecutionStart
    | ToolExecutionUpdate
    | ToolExecutionEnd
    | TurnEnd
    | AgentEnd
    | AgentSettled
    | QueueUpdate
    | EntryAppended
    | CompactionStart
    | CompactionEnd
    | AutoRetryStart
    | AutoRetryEnd
    | SummarizationRetryScheduled
    | SummarizationRetryAttemptStart
    | SummarizationRetryFinished
    | TreeNavigated
    | ExtensionError
    | CacheUpdate
)
"""Everything the agent emits."""
