"""The lifecycle vocabulary: every event the agent emits while it runs, defined once.

Every event is a frozen ``msgspec.Struct`` (an :class:`~pi_context._records.Event`) with a
``type`` string and a ``to_json()`` that returns the record pi 1.6.0 writes in its ``--mode json``
stream. Events are read by attribute, compared with ``==`` and taken apart with ``match`` as
frozen dataclasses are; a copy with changes is ``msgspec.structs.replace(event, ...)``.

The compaction engine's events (``compaction_start``, ``compaction_end``, the
``summarization_retry_*`` records, and this project's ``compaction_fallback``,
``compaction_paused`` and ``observations_masked``) are defined where they are emitted, in
:mod:`pi_context.compaction`, and re-exported here; the agent emits them unchanged. The loop's
notifications (:data:`NOTIFICATIONS`) go to extension handlers as they are; the extension hooks
that answer with a result (``before_agent_start``, ``context``, ``turn_end`` proposals, ...)
have their payloads in :mod:`pi_context.extensions.events`.
Events pi does not have (cache accounting, extension errors) use their own ``type`` names and are
marked below; a client that only knows pi's stream can ignore them.

The CLI renders and serializes these; library users iterate them from ``AgentSession.prompt()``
or receive them through ``AgentSession.subscribe()``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, TypeAlias

from msgspec import Struct

from pi_context import _lazy
from pi_context._records import Event, Record
from pi_context.messages import (
    AgentMessage,
    AssistantMessage,
    ToolResultMessage,
    Usage,
    UserContent,
)

if TYPE_CHECKING:
    # The compaction engine's events, re-exported here and imported on first use
    # (``_lazy.attach_stub`` reads this block): a session that never compacts never defines them.
    from pi_context.compaction.events import CompactionEnd as CompactionEnd
    from pi_context.compaction.events import CompactionFallback as CompactionFallback
    from pi_context.compaction.events import CompactionPaused as CompactionPaused
    from pi_context.compaction.events import CompactionStart as CompactionStart
    from pi_context.compaction.events import ObservationsMasked as ObservationsMasked
    from pi_context.compaction.retry_events import CompactionReason as CompactionReason
    from pi_context.compaction.retry_events import (
        SummarizationRetryAttemptStart as SummarizationRetryAttemptStart,
    )
    from pi_context.compaction.retry_events import (
        SummarizationRetryFinished as SummarizationRetryFinished,
    )
    from pi_context.compaction.retry_events import (
        SummarizationRetryScheduled as SummarizationRetryScheduled,
    )

__all__ = [
    "NOTIFICATIONS",
    "AgentEnd",
    "AgentEvent",
    "AgentSettled",
    "AgentStart",
    "AssistantStreamEvent",
    "AutoRetryEnd",
    "AutoRetryStart",
    "CacheUpdate",
    "CompactionEnd",
    "CompactionFallback",
    "CompactionPaused",
    "CompactionReason",
    "CompactionStart",
    "EntryAppended",
    "Event",
    "ExtensionFailure",
    "MessageEnd",
    "MessageStart",
    "MessageUpdate",
    "ObservationsMasked",
    "QueueUpdate",
    "Record",
    "SummarizationRetryAttemptStart",
    "SummarizationRetryFinished",
    "SummarizationRetryScheduled",
    "ToolExecutionEnd",
    "ToolExecutionStart",
    "ToolExecutionUpdate",
    "ToolPartial",
    "TreeNavigated",
    "TurnEnd",
    "TurnStart",
]

NOTIFICATIONS: frozenset[str] = frozenset(
    {
        "agent_start",
        "turn_start",
        "agent_end",
        "agent_settled",
        "tool_execution_start",
        "tool_execution_update",
        "tool_execution_end",
    }
)
"""The loop events that extensions receive as they are (``pi.on("agent_end", ...)``)."""


class AgentStart(Event, Struct, frozen=True):
    """A run begins (before its first turn)."""

    type: ClassVar[str] = "agent_start"


class TurnStart(Event, Struct, frozen=True):
    """A turn begins; ``turn_index`` counts the run's turns from 0 (for extensions; pi's JSON
    record carries no fields)."""

    turn_index: int = 0
    type: ClassVar[str] = "turn_start"
    _hidden: ClassVar[frozenset[str]] = frozenset({"turn_index"})


class MessageStart(Event, Struct, frozen=True):
    """A message is about to be added (user, system patch, assistant, tool result, custom)."""

    message: AgentMessage
    type: ClassVar[str] = "message_start"


class AssistantStreamEvent(Record, Struct, frozen=True):
    """One streaming step of the assistant message (pi's ``assistantMessageEvent``).

    ``kind`` is one of ``text_start``, ``text_delta``, ``text_end``, ``thinking_start``,
    ``thinking_delta``, ``thinking_end``, ``toolcall_start``, ``toolcall_delta``,
    ``toolcall_end``; it is the record's ``type``.
    """

    kind: str
    content_index: int
    tool_call_id: str | None = None
    tool_name: str | None = None
    delta: str | None = None
    content: str | None = None
    tool_call: Mapping[str, Any] | None = None
    _wire: ClassVar[Mapping[str, str]] = {"tool_call_id": "id"}
    _hidden: ClassVar[frozenset[str]] = frozenset({"kind"})

    def to_json(self) -> dict[str, Any]:
        return {"type": self.kind, **self._fields_json()}


class MessageUpdate(Event, Struct, frozen=True):
    """A streaming update of the assistant message; ``usage`` is cumulative so far."""

    event: AssistantStreamEvent
    usage: Usage | None = None
    type: ClassVar[str] = "message_update"
    _wire: ClassVar[Mapping[str, str]] = {"event": "assistantMessageEvent"}
    _order: ClassVar[tuple[str, ...]] = ("usage", "event")


class MessageEnd(Event, Struct, frozen=True):
    """The final form of a message; it has been persisted (``entry_id``) when a session is used."""

    message: AgentMessage
    entry_id: str | None = None
    type: ClassVar[str] = "message_end"
    _hidden: ClassVar[frozenset[str]] = frozenset({"entry_id"})


class ToolExecutionStart(Event, Struct, frozen=True):
    """A tool call starts, with the validated arguments."""

    tool_call_id: str
    tool_name: str
    args: Mapping[str, Any]
    type: ClassVar[str] = "tool_execution_start"


class ToolExecutionUpdate(Event, Struct, frozen=True):
    """A running tool's partial result (``bash``: its output so far, throttled).

    ``partial_result`` is written as pi's ``{content, details?}``; a tool that streams sends a
    first, empty update as soon as it starts (``{"content": []}``), so a client can show that
    output is on its way.
    """

    tool_call_id: str
    tool_name: str
    args: Mapping[str, Any]
    partial_result: ToolPartial
    type: ClassVar[str] = "tool_execution_update"


class ToolPartial(Struct, frozen=True):
    """What a tool reported so far: content blocks and details (``None``: no details key)."""

    content: Sequence[UserContent]
    details: Any = None

    def to_json(self) -> dict[str, Any]:
        record: dict[str, Any] = {"content": list(self.content)}
        if self.details is not None:
            record["details"] = self.details
        return record


class ToolExecutionEnd(Event, Struct, frozen=True):
    """``result`` is written as the tool's own result, as pi sends it: ``{content, details?,
    structuredContent?}``, with ``isError`` inside it too when the tool itself returned a
    structured result flagged as an error (``bash`` with a non-zero exit code); the stored
    tool-result message never carries ``structured_content``."""

    tool_call_id: str
    tool_name: str
    result: ToolResultMessage
    is_error: bool
    duration_ms: int | None = None
    structured_content: Any = None
    type: ClassVar[str] = "tool_execution_end"
    _hidden: ClassVar[frozenset[str]] = frozenset({"structured_content"})

    def to_json(self) -> dict[str, Any]:
        record = Event.to_json(self)
        result: dict[str, Any] = {"content": self.result["content"]}
        if "details" in self.result:
            result["details"] = self.result["details"]
        if self.structured_content is not None:
            result["structuredContent"] = self.structured_content
            if self.is_error:
                result["isError"] = True
        record["result"] = result
        return record


class TurnEnd(Event, Struct, frozen=True):
    """A turn ends: its assistant message and the results of the calls it made."""

    message: AssistantMessage
    tool_results: Sequence[ToolResultMessage] = ()
    type: ClassVar[str] = "turn_end"


class AgentEnd(Event, Struct, frozen=True):
    """One low-level run ended; ``will_retry`` when the session continues it (overflow recovery)."""

    messages: Sequence[AgentMessage] = ()
    will_retry: bool = False
    type: ClassVar[str] = "agent_end"


class AgentSettled(Event, Struct, frozen=True):
    """The session is idle again (after retries, compactions and queued messages)."""

    aborted: bool = False
    type: ClassVar[str] = "agent_settled"


class QueueUpdate(Event, Struct, frozen=True):
    """Messages waiting for the busy run (as their texts)."""

    steering: Sequence[str] = ()
    follow_up: Sequence[str] = ()
    type: ClassVar[str] = "queue_update"


class EntryAppended(Event, Struct, frozen=True):
    """An entry was appended to the session file outside the message flow (e.g. a context edit)."""

    entry: Mapping[str, Any]
    type: ClassVar[str] = "entry_appended"


class AutoRetryStart(Event, Struct, frozen=True):
    """The session retries a model request that failed with a transient error, after
    ``delay_ms`` (attempt ``attempt`` of ``max_attempts``)."""

    attempt: int
    max_attempts: int
    delay_ms: int
    error_message: str
    type: ClassVar[str] = "auto_retry_start"


class AutoRetryEnd(Event, Struct, frozen=True):
    """The automatic retries of a failed request are over: ``success`` or the final error."""

    success: bool
    attempt: int
    final_error: str | None = None
    type: ClassVar[str] = "auto_retry_end"


class TreeNavigated(Event, Struct, frozen=True):
    """Beyond pi: the leaf moved (``/tree``); ``summary_entry_id`` when a branch summary was stored."""

    new_leaf_id: str | None
    old_leaf_id: str | None
    summary_entry_id: str | None = None
    editor_text: str | None = None
    type: ClassVar[str] = "tree_navigated"


class ExtensionFailure(Event, Struct, frozen=True):
    """Beyond pi's JSON stream: an extension handler raised or returned something unusable, or
    its proposal was rejected; the session went on. ``traceback`` is kept for logs, not
    written."""

    event: str
    error: str
    extension: str | None = None
    traceback: str = ""
    type: ClassVar[str] = "extension_error"
    _order: ClassVar[tuple[str, ...]] = ("event", "extension", "error")
    _hidden: ClassVar[frozenset[str]] = frozenset({"traceback"})


class CacheUpdate(Event, Struct, frozen=True):
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


if TYPE_CHECKING:
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
        | CompactionFallback
        | CompactionPaused
        | ObservationsMasked
        | AutoRetryStart
        | AutoRetryEnd
        | SummarizationRetryScheduled
        | SummarizationRetryAttemptStart
        | SummarizationRetryFinished
        | TreeNavigated
        | ExtensionFailure
        | CacheUpdate
    )
    """Everything the agent emits: what ``AgentSession.prompt()`` yields and subscribers receive."""

__getattr__, __dir__ = _lazy.attach_stub(__name__, __file__)
"""The compaction events and :data:`AgentEvent` (the union of the alias above, built from its
members on first use), imported or made on first use and then kept."""
