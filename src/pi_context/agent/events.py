"""Typed events the agent emits while it runs.

Every event is a frozen dataclass with a ``type`` string and a ``to_json()`` that returns the
record pi 1.6.0 writes in its ``--mode json`` stream: one shared serializer writes the fields
under their camelCase names, as pi spells them.
Events pi does not have (cache accounting, extension errors) use their own ``type`` names and are
marked below; a client that only knows pi's stream can ignore them.

The CLI renders and serializes these; library users iterate them from ``AgentSession.prompt()``
or receive them through ``AgentSession.subscribe()``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, TypeAlias, cast

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


class _Wire:
    """Serializes a dataclass as pi's JSON record: each field under its camelCase name, in
    declaration order, fields left ``None`` omitted (``JSON.stringify`` drops ``undefined``).

    Subclasses adjust with ``_wire`` (field → key), ``_hidden`` (fields not written) and
    ``_keep_none`` (fields written as ``null``).
    """

    __slots__ = ()
    _wire: ClassVar[Mapping[str, str]] = {}
    _hidden: ClassVar[frozenset[str]] = frozenset()
    _keep_none: ClassVar[frozenset[str]] = frozenset()

    def _fields_json(self) -> dict[str, Any]:
        record: dict[str, Any] = {}
        for name, key, keep_none in _layout(type(self)):
            value = getattr(self, name)
            if value is not None or keep_none:
                record[key] = _plain(value)
        return record


class _Event(_Wire):
    """An agent event: ``{"type": ..., **fields}``."""

    __slots__ = ()
    type: ClassVar[str]

    def to_json(self) -> dict[str, Any]:
        """The record of pi's ``--mode json`` stream (or ours, for events beyond pi)."""
        return {"type": self.type, **self._fields_json()}


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


_LAYOUTS: dict[type, tuple[tuple[str, str, bool], ...]] = {}


def _layout(cls: type[_Wire]) -> tuple[tuple[str, str, bool], ...]:
    """``(attribute, key, keep None)`` per written field of ``cls``, computed once per class."""
    layout = _LAYOUTS.get(cls)
    if layout is None:
        layout = _LAYOUTS[cls] = tuple(
            (f.name, cls._wire.get(f.name, _camel(f.name)), f.name in cls._keep_none)
            for f in dataclasses.fields(cast(Any, cls))
            if f.name not in cls._hidden
        )
    return layout


def _plain(value: Any) -> Any:
    """Plain JSON values: nested records serialized, mappings as dicts, sequences as lists."""
    if isinstance(value, _Wire):
        return cast(Any, value).to_json()
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, tuple | list):
        return list(value)
    return value


@dataclass(frozen=True, slots=True)
class AgentStart(_Event):
    type: ClassVar[str] = "agent_start"


@dataclass(frozen=True, slots=True)
class TurnStart(_Event):
    type: ClassVar[str] = "turn_start"


@dataclass(frozen=True, slots=True)
class MessageStart(_Event):
    """A message is about to be added (user, system patch, assistant, tool result, custom)."""

    message: AgentMessage
    type: ClassVar[str] = "message_start"


@dataclass(frozen=True, slots=True)
class AssistantStreamEvent(_Wire):
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


@dataclass(frozen=True, slots=True)
class MessageUpdate(_Event):
    """A streaming update of the assistant message; ``usage`` is cumulative so far."""

    usage: Usage | None = field(default=None, kw_only=True)
    event: AssistantStreamEvent
    type: ClassVar[str] = "message_update"
    _wire: ClassVar[Mapping[str, str]] = {"event": "assistantMessageEvent"}


@dataclass(frozen=True, slots=True)
class MessageEnd(_Event):
    """The final form of a message; it has been persisted (``entry_id``) when a session is used."""

    message: AgentMessage
    entry_id: str | None = None
    type: ClassVar[str] = "message_end"
    _hidden: ClassVar[frozenset[str]] = frozenset({"entry_id"})


@dataclass(frozen=True, slots=True)
class ToolExecutionStart(_Event):
    tool_call_id: str
    tool_name: str
    args: Mapping[str, Any]
    type: ClassVar[str] = "tool_execution_start"


@dataclass(frozen=True, slots=True)
class ToolExecutionUpdate(_Event):
    tool_call_id: str
    tool_name: str
    args: Mapping[str, Any]
    partial_result: Any
    type: ClassVar[str] = "tool_execution_update"
    _keep_none: ClassVar[frozenset[str]] = frozenset({"partial_result"})


@dataclass(frozen=True, slots=True)
class ToolExecutionEnd(_Event):
    """``result`` is written as pi's ``{content, details}``."""

    tool_call_id: str
    tool_name: str
    result: ToolResultMessage
    is_error: bool
    duration_ms: int | None = None
    type: ClassVar[str] = "tool_execution_end"

    def to_json(self) -> dict[str, Any]:
        record = _Event.to_json(self)
        record["result"] = {
            "content": self.result["content"],
            "details": self.result.get("details"),
        }
        return record


@dataclass(frozen=True, slots=True)
class TurnEnd(_Event):
    message: AssistantMessage
    tool_results: Sequence[ToolResultMessage] = ()
    type: ClassVar[str] = "turn_end"


@dataclass(frozen=True, slots=True)
class AgentEnd(_Event):
    """One low-level run ended; ``will_retry`` when the session continues it (overflow recovery)."""

    messages: Sequence[AgentMessage] = ()
    will_retry: bool = False
    type: ClassVar[str] = "agent_end"


@dataclass(frozen=True, slots=True)
class AgentSettled(_Event):
    """The session is idle again (after retries, compactions and queued messages)."""

    aborted: bool = False
    type: ClassVar[str] = "agent_settled"


@dataclass(frozen=True, slots=True)
class QueueUpdate(_Event):
    """Messages waiting for the busy run (as their texts)."""

    steering: Sequence[str] = ()
    follow_up: Sequence[str] = ()
    type: ClassVar[str] = "queue_update"


@dataclass(frozen=True, slots=True)
class EntryAppended(_Event):
    """An entry was appended to the session file outside the message flow (e.g. a context edit)."""

    entry: Mapping[str, Any]
    type: ClassVar[str] = "entry_appended"


@dataclass(frozen=True, slots=True)
class CompactionStart(_Event):
    reason: CompactionReason
    type: ClassVar[str] = "compaction_start"


@dataclass(frozen=True, slots=True)
class CompactionEnd(_Event):
    """A compaction finished; ``result`` is absent on failure (then ``will_retry`` is false)."""

    reason: CompactionReason
    result: Mapping[str, Any] | None = None
    aborted: bool = False
    will_retry: bool = False
    error_message: str | None = None
    type: ClassVar[str] = "compaction_end"


@dataclass(frozen=True, slots=True)
class _RetryScheduled(_Event):
    """A failed request will be retried after ``delay_ms`` (attempt ``attempt`` of ``max_attempts``)."""

    attempt: int
    max_attempts: int
    delay_ms: int
    error_message: str


@dataclass(frozen=True, slots=True)
class AutoRetryStart(_RetryScheduled):
    """The session retries a model request that failed with a transient error."""

    type: ClassVar[str] = "auto_retry_start"


@dataclass(frozen=True, slots=True)
class AutoRetryEnd(_Event):
    success: bool
    attempt: int
    final_error: str | None = None
    type: ClassVar[str] = "auto_retry_end"


@dataclass(frozen=True, slots=True)
class SummarizationRetryScheduled(_RetryScheduled):
    """A summarization request (compaction or branch summary) will be retried."""

    type: ClassVar[str] = "summarization_retry_scheduled"


@dataclass(frozen=True, slots=True)
class SummarizationRetryAttemptStart(_Event):
    source: Literal["compaction", "branchSummary"]
    reason: CompactionReason | None = None
    type: ClassVar[str] = "summarization_retry_attempt_start"


@dataclass(frozen=True, slots=True)
class SummarizationRetryFinished(_Event):
    type: ClassVar[str] = "summarization_retry_finished"


@dataclass(frozen=True, slots=True)
class TreeNavigated(_Event):
    """Beyond pi: the leaf moved (``/tree``); ``summary_entry_id`` when a branch summary was stored."""

    new_leaf_id: str | None
    old_leaf_id: str | None
    summary_entry_id: str | None = None
    editor_text: str | None = None
    type: ClassVar[str] = "tree_navigated"


@dataclass(frozen=True, slots=True)
class ExtensionError(_Event):
    """Beyond pi's JSON stream: an extension handler raised; the session went on."""

    event: str
    extension: str | None = field(default=None, kw_only=True)
    error: str
    type: ClassVar[str] = "extension_error"


@dataclass(frozen=True, slots=True)
class CacheUpdate(_Event):
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
