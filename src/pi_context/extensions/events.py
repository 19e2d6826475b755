"""Payloads of the extension hooks and the results handlers may return.

Every event is a dataclass with a class-level ``type`` (pi's event name). Handlers receive
``(event, ctx)`` and may return the matching ``*Result`` (or ``None``). Field names are the
Python spelling of pi's payload keys (``willRetry`` → ``will_retry``).

The hooks defined here are the ones that answer (``before_agent_start``, ``context``,
``turn_end`` proposals, ``tool_call``, ...) or that only extensions receive (``session_start``,
``input``). Notifications of the loop (``agent_start``, ``turn_start``, ``agent_end``,
``tool_execution_*``) are the agent's own events from :mod:`pi_context.events`, and the
compaction hooks are the compaction engine's (:mod:`pi_context.compaction.events`): handlers
receive the very objects the agent streams.

``BeforeAgentStartEvent.system_prompt_options`` is the run's options as a mutable mapping
(pi's ``systemPromptOptions``), or an object with the same attributes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from pi_context._records import Event
from pi_context.compaction.events import BeforeCompact, CompactionFailed, SessionCompact
from pi_context.events import (
    AgentEnd,
    AgentSettled,
    AgentStart,
    AssistantStreamEvent,
    MessageStart,
    ToolExecutionEnd,
    ToolExecutionStart,
    ToolExecutionUpdate,
    TurnStart,
)
from pi_context.extensions.reasons import SessionReason, ShutdownReason
from pi_context.messages import (
    AgentMessage,
    AssistantMessage,
    ImageContent,
    ToolResultMessage,
    Usage,
    UserContent,
)
from pi_context.model import ModelInfo
from pi_context.session.entries import Entry

__all__ = [
    "EVENT_TYPES",
    "AgentBeforeSettleEvent",
    "BeforeAgentStartEvent",
    "BeforeAgentStartResult",
    "BeforeProviderHeadersEvent",
    "BeforeProviderRequestEvent",
    "BoundaryResult",
    "BranchSummaryDraft",
    "CompactionDraft",
    "ContextEvent",
    "ContextResult",
    "ContextWithSystemEvent",
    "CustomMessageDraft",
    "Event",
    "InputEvent",
    "InputResult",
    "MessageEndEvent",
    "MessageEndResult",
    "MessageUpdateEvent",
    "ModelSelectEvent",
    "ResourcesDiscoverEvent",
    "ResourcesDiscoverResult",
    "SessionBeforeCompactResult",
    "SessionBeforeForkEvent",
    "SessionBeforeForkResult",
    "SessionBeforeSwitchEvent",
    "SessionBeforeSwitchResult",
    "SessionBeforeTreeEvent",
    "SessionBeforeTreeResult",
    "SessionInfoChangedEvent",
    "SessionReason",
    "SessionShutdownEvent",
    "SessionStartEvent",
    "SessionTreeEvent",
    "ShutdownReason",
    "ThinkingLevelSelectEvent",
    "ToolCallEvent",
    "ToolCallResult",
    "ToolResultEvent",
    "ToolResultResult",
    "TreePreparation",
    "TurnEndEvent",
]

Outcome = Literal["completed", "aborted", "error"]


# --- drafts handlers hand back --------------------------------------------------------------


@dataclass(slots=True)
class CustomMessageDraft:
    """A ``custom`` message an extension adds (persisted as a ``custom_message`` entry)."""

    custom_type: str
    content: str | list[UserContent]
    display: bool = True
    details: Any = None


@dataclass(slots=True)
class CompactionDraft:
    """An extension's own compaction: stored verbatim with ``fromHook: true``.

    ``first_kept_entry_id`` ``None`` means retain-none.
    """

    summary: str
    first_kept_entry_id: str | None
    tokens_before: int
    usage: Usage | None = None
    details: Any = None


@dataclass(slots=True)
class BranchSummaryDraft:
    """An extension's own branch summary (used only when the user asked for a summary)."""

    summary: str
    details: Any = None
    usage: Usage | None = None


# --- run start and context -------------------------------------------------------------------


@dataclass(slots=True)
class BeforeAgentStartEvent(Event):
    """Once per run started by a prompt or a triggering custom message, before the run's
    system-prompt patch is computed. ``system_prompt_options`` is the mutable option object
    (a mapping or an object with attributes); changes are used for this run."""

    type: ClassVar[str] = "before_agent_start"
    message_type: Literal["user", "custom"]
    system_prompt_options: Any
    prompt: str | None = None
    images: list[ImageContent] = field(default_factory=list)
    message: AgentMessage | None = None
    system_prompt: str = ""
    """The prompt as it stands (a forced prompt once a handler set one)."""

    def _options_field(self, name: str) -> Any:
        opts = self.system_prompt_options
        return opts.get(name) if isinstance(opts, Mapping) else getattr(opts, name, None)

    def _set_options_field(self, name: str, value: Any) -> None:
        opts = self.system_prompt_options
        if isinstance(opts, MutableMapping):
            opts[name] = value
        else:
            setattr(opts, name, value)

    def set_section(self, name: str, text: str | None) -> None:
        """Add, replace (``text``) or drop (``None``) a custom prompt section for this run."""
        sections = self._options_field("sections")
        if sections is None:
            sections = {}
            self._set_options_field("sections", sections)
        if text is None:
            sections.pop(name, None)
        else:
            sections[name] = text

    @property
    def selected_tools(self) -> list[str]:
        return list(
            self._options_field("selectedTools") or self._options_field("selected_tools") or []
        )

    def set_selected_tools(self, names: list[str]) -> None:
        """Change the run's tool loadout (declarations and ``<tools>``/``<rules>`` follow)."""
        opts = self.system_prompt_options
        key = "selectedTools"
        if not isinstance(opts, Mapping) and not hasattr(opts, key):
            key = "selected_tools"
        self._set_options_field(key, list(names))


@dataclass(slots=True)
class BeforeAgentStartResult:
    message: CustomMessageDraft | None = None
    system_prompt: str | None = None
    """Force this text as the run's whole system prompt."""


@dataclass(slots=True)
class ContextEvent(Event):
    """Before every request: the conversation without system messages (phase 1)."""

    type: ClassVar[str] = "context"
    messages: list[AgentMessage]


@dataclass(slots=True)
class ContextWithSystemEvent(Event):
    """Before every request, after ``context``: the full transcript, system messages included."""

    type: ClassVar[str] = "context_with_system"
    messages: list[AgentMessage]


@dataclass(slots=True)
class BeforeProviderHeadersEvent(Event):
    """Before each request goes out, once its HTTP headers are assembled: handlers change
    ``headers`` in place (a string adds or replaces a header, ``None`` removes it); return
    values are ignored. Only the Anthropic Messages and OpenAI Chat Completions adapters
    assemble their headers where this can see them; requests of the others skip it."""

    type: ClassVar[str] = "before_provider_headers"
    headers: dict[str, str | None]


@dataclass(slots=True)
class BeforeProviderRequestEvent(Event):
    """Before each request goes out: ``payload`` is the JSON body the provider adapter built
    (for the Gemini API, the SDK call's ``model``, ``contents`` and ``config``). A handler that
    returns a value other than ``None`` replaces the payload for later handlers and for the
    request actually sent. Requests to the embedded local model have no such body and skip
    this hook."""

    type: ClassVar[str] = "before_provider_request"
    payload: dict[str, Any]


@dataclass(slots=True)
class ContextResult:
    messages: list[AgentMessage] | None = None


# --- compaction ------------------------------------------------------------------------------


@dataclass(slots=True)
class SessionBeforeCompactResult:
    cancel: bool = False
    compaction: CompactionDraft | None = None


# --- tree navigation -------------------------------------------------------------------------


@dataclass(slots=True)
class TreePreparation:
    target_id: str
    old_leaf_id: str | None
    common_ancestor_id: str | None
    entries_to_summarize: list[Entry]
    user_wants_summary: bool
    custom_instructions: str | None = None
    replace_instructions: bool | None = None
    label: str | None = None


@dataclass(slots=True)
class SessionBeforeTreeEvent(Event):
    type: ClassVar[str] = "session_before_tree"
    preparation: TreePreparation
    signal: asyncio.Event = field(default_factory=asyncio.Event)


@dataclass(slots=True)
class SessionBeforeTreeResult:
    cancel: bool = False
    summary: BranchSummaryDraft | None = None
    custom_instructions: str | None = None
    replace_instructions: bool | None = None
    label: str | None = None


@dataclass(slots=True)
class SessionTreeEvent(Event):
    type: ClassVar[str] = "session_tree"
    new_leaf_id: str | None
    old_leaf_id: str | None
    summary_entry: Entry | None = None
    from_extension: bool | None = None


# --- boundaries ------------------------------------------------------------------------------


@dataclass(slots=True)
class TurnEndEvent(Event):
    """After an assistant message and its tool results are persisted. ``entries`` (draft
    entries to append) and ``continue_`` form the proposal a handler may replace."""

    type: ClassVar[str] = "turn_end"
    turn_index: int
    message: AssistantMessage
    tool_results: list[ToolResultMessage]
    message_entry_id: str | None = None
    tool_result_entry_ids: list[str] = field(default_factory=list)
    outcome: Outcome = "completed"
    entries: list[dict[str, Any]] = field(default_factory=list)
    continue_: bool = False


@dataclass(slots=True)
class AgentBeforeSettleEvent(Event):
    type: ClassVar[str] = "agent_before_settle"
    outcome: Outcome = "completed"
    entries: list[dict[str, Any]] = field(default_factory=list)
    continue_: bool = False


@dataclass(slots=True)
class BoundaryResult:
    """Each field given replaces the proposal: draft ``entries`` (``custom``,
    ``custom_message``, ``context_edit``, ``compaction``) and whether to ``continue_``."""

    entries: list[dict[str, Any]] | None = None
    continue_: bool | None = None


# --- messages, tools, input ------------------------------------------------------------------


@dataclass(slots=True)
class MessageUpdateEvent(Event):
    """One streaming step of an assistant answer: ``assistant_message_event`` (text, thinking
    or tool-call ``*_start`` / ``*_delta`` / ``*_end``) and ``message``, the answer received so
    far (stop reason ``pending``; a copy, so changing it changes nothing). ``usage`` is the
    usage known so far. A notification: return values are ignored."""

    type: ClassVar[str] = "message_update"
    message: AssistantMessage
    assistant_message_event: AssistantStreamEvent
    usage: Usage | None = None


@dataclass(slots=True)
class MessageEndEvent(Event):
    type: ClassVar[str] = "message_end"
    message: AgentMessage


@dataclass(slots=True)
class MessageEndResult:
    """Replace the finalized message before it is persisted (same role only)."""

    message: AgentMessage | None = None


@dataclass(slots=True)
class _ToolEvent(Event):
    """What every tool event starts with: the call's id and the tool's name."""

    tool_call_id: str
    tool_name: str


@dataclass(slots=True)
class ToolCallEvent(_ToolEvent):
    """Before a tool runs; a handler may block it (the model sees ``reason`` as the error)."""

    type: ClassVar[str] = "tool_call"
    input: dict[str, Any]


@dataclass(slots=True)
class ToolCallResult:
    block: bool = False
    reason: str | None = None


@dataclass(slots=True)
class ToolResultEvent(_ToolEvent):
    """After a tool ran, before its result is stored; handlers may rewrite the result."""

    type: ClassVar[str] = "tool_result"
    input: dict[str, Any]
    content: list[UserContent]
    details: Any
    is_error: bool


@dataclass(slots=True)
class ToolResultResult:
    content: list[UserContent] | None = None
    details: Any = None
    is_error: bool | None = None


@dataclass(slots=True)
class InputEvent(Event):
    """Text the user submitted, before slash commands and templates are expanded."""

    type: ClassVar[str] = "input"
    text: str
    images: list[ImageContent] = field(default_factory=list)
    source: Literal["interactive", "rpc", "extension", "cli"] = "interactive"


@dataclass(slots=True)
class InputResult:
    """``text`` transforms the input (later handlers see it); ``handled`` swallows it."""

    text: str | None = None
    handled: bool = False


@dataclass(slots=True)
class ResourcesDiscoverEvent(Event):
    type: ClassVar[str] = "resources_discover"
    cwd: str
    reason: Literal["startup", "reload"]


@dataclass(slots=True)
class ResourcesDiscoverResult:
    skill_paths: list[str] = field(default_factory=list)
    prompt_paths: list[str] = field(default_factory=list)
    theme_paths: list[str] = field(default_factory=list)


# --- notifications ---------------------------------------------------------------------------


@dataclass(slots=True)
class SessionStartEvent(Event):
    type: ClassVar[str] = "session_start"
    reason: SessionReason = "startup"
    previous_session_file: str | None = None
    """The file of the session this one replaced (new, resume, fork), when it had one."""


@dataclass(slots=True)
class SessionShutdownEvent(Event):
    type: ClassVar[str] = "session_shutdown"
    reason: ShutdownReason = "quit"
    target_session_file: str | None = None
    """The file of the session that replaces this one, when known."""


@dataclass(slots=True)
class SessionInfoChangedEvent(Event):
    """The session was named (``/name``, RPC ``set_session_name``,
    ``AgentSession.set_session_name``): ``name`` as stored, ``None`` when cleared."""

    type: ClassVar[str] = "session_info_changed"
    name: str | None = None


@dataclass(slots=True)
class ModelSelectEvent(Event):
    """The model changed: ``set`` (``/model``, RPC ``set_model``, extensions), ``cycle``
    (Ctrl+P, RPC ``cycle_model``) or ``restore`` (a resumed or forked session's model)."""

    type: ClassVar[str] = "model_select"
    model: ModelInfo
    previous_model: ModelInfo | None
    source: Literal["set", "cycle", "restore"]


@dataclass(slots=True)
class ThinkingLevelSelectEvent(Event):
    """The thinking level in effect changed (after clamping to the model)."""

    type: ClassVar[str] = "thinking_level_select"
    level: str
    previous_level: str


# --- session replacement ---------------------------------------------------------------------


@dataclass(slots=True)
class SessionBeforeSwitchEvent(Event):
    """Before ``/new`` or ``/resume`` (RPC ``new_session`` / ``switch_session``) replaces the
    session; a handler may cancel."""

    type: ClassVar[str] = "session_before_switch"
    reason: Literal["new", "resume"]
    target_session_file: str | None = None


@dataclass(slots=True)
class SessionBeforeSwitchResult:
    cancel: bool = False


@dataclass(slots=True)
class SessionBeforeForkEvent(Event):
    """Before ``/fork`` (``position: "before"`` the user message ``entry_id``) or ``/clone``
    (``position: "at"`` the leaf) replaces the session; a handler may cancel."""

    type: ClassVar[str] = "session_before_fork"
    entry_id: str
    position: Literal["before", "at"]


@dataclass(slots=True)
class SessionBeforeForkResult:
    cancel: bool = False
    skip_conversation_restore: bool = False
    """Accepted for pi compatibility; pictx has no conversation view to restore."""


EVENT_CLASSES: tuple[type[Event], ...] = (
    AgentStart,
    TurnStart,
    AgentEnd,
    AgentSettled,
    MessageStart,
    MessageUpdateEvent,
    ToolExecutionStart,
    ToolExecutionUpdate,
    ToolExecutionEnd,
    BeforeAgentStartEvent,
    ContextEvent,
    ContextWithSystemEvent,
    BeforeProviderHeadersEvent,
    BeforeProviderRequestEvent,
    BeforeCompact,
    SessionCompact,
    CompactionFailed,
    SessionBeforeTreeEvent,
    SessionTreeEvent,
    TurnEndEvent,
    AgentBeforeSettleEvent,
    MessageEndEvent,
    ToolCallEvent,
    ToolResultEvent,
    InputEvent,
    ResourcesDiscoverEvent,
    SessionStartEvent,
    SessionShutdownEvent,
    SessionInfoChangedEvent,
    ModelSelectEvent,
    ThinkingLevelSelectEvent,
    SessionBeforeSwitchEvent,
    SessionBeforeForkEvent,
)
"""The events with their payload classes here or in the agent's modules; ``ui_prompt_start``
and ``ui_prompt_end`` (:mod:`pi_context.extensions.ui_prompts`) complete :data:`EVENT_TYPES`."""

EVENT_TYPES: frozenset[str] = frozenset(
    {*(cls.type for cls in EVENT_CLASSES), "ui_prompt_start", "ui_prompt_end"}
)
"""Every event name ``pi.on`` accepts."""
