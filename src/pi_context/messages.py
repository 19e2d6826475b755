"""The pi 1.6.0 message model.

Messages are JSON objects, exactly as they stand in a session file; these ``TypedDict``
types describe them for the type checker. Keeping the JSON mapping itself as the value (rather
than converting to classes and back) is what gives an exact round trip: key order, unknown
fields a newer pi adds, and number spelling all survive untouched. Build new messages with
the constructors below: they write keys in the order pi writes them and omit optional keys.

Roles: ``user``, ``assistant``, ``toolResult``, ``system`` (prompt sections and tool
declarations as patches), ``bashExecution``, ``custom`` (extension messages), and the two
runtime-only summary roles ``compactionSummary`` and ``branchSummary``.
"""

# No ``from __future__ import annotations``: a TypedDict checks its field types when the class is
# made, and string annotations would each be compiled there first (a large share of this
# module's import time, paid by every command that reads a message: benchmarks/README.md,
# "Start-up").
import time
from collections.abc import Mapping, Sequence
from typing import Any, Literal, NotRequired, TypeAlias, TypedDict, cast

__all__ = [
    "AgentMessage",
    "AssistantContent",
    "AssistantMessage",
    "BashExecutionMessage",
    "BranchSummaryMessage",
    "CompactionSummaryMessage",
    "Cost",
    "CustomMessage",
    "ImageContent",
    "Message",
    "Role",
    "StopReason",
    "SystemMessage",
    "TextContent",
    "ThinkingContent",
    "ThinkingLevel",
    "ToolCall",
    "ToolDeclaration",
    "ToolResultMessage",
    "Usage",
    "UserContent",
    "UserMessage",
    "assistant_message",
    "bash_execution_message",
    "empty_usage",
    "image_block",
    "now_ms",
    "text_block",
    "text_of",
    "tool_call",
    "tool_result_message",
    "user_message",
    "with_thinking_level",
]

Role = Literal[
    "user",
    "assistant",
    "toolResult",
    "system",
    "bashExecution",
    "custom",
    "compactionSummary",
    "branchSummary",
]
StopReason = Literal["stop", "length", "toolUse", "error", "aborted", "deferred", "pending"]
ThinkingLevel = Literal["off", "minimal", "low", "medium", "high", "xhigh", "max"]


class TextContent(TypedDict):
    type: Literal["text"]
    text: str
    textSignature: NotRequired[str]


class ImageContent(TypedDict):
    type: Literal["image"]
    data: str
    mimeType: str


class ThinkingContent(TypedDict):
    type: Literal["thinking"]
    thinking: str
    thinkingSignature: NotRequired[str]
    redacted: NotRequired[bool]


class ToolCall(TypedDict):
    type: Literal["toolCall"]
    id: str
    name: str
    arguments: dict[str, Any]
    thoughtSignature: NotRequired[str]
    namespace: NotRequired[str]
    argumentsError: NotRequired[str]


UserContent: TypeAlias = TextContent | ImageContent
AssistantContent: TypeAlias = TextContent | ThinkingContent | ToolCall


class Cost(TypedDict):
    input: float
    output: float
    cacheRead: float
    cacheWrite: float
    total: float
    totalFromProvider: NotRequired[bool]


class Usage(TypedDict):
    input: int
    output: int
    cacheRead: int
    cacheWrite: int
    cacheWrite1h: NotRequired[int]
    reasoning: NotRequired[int]
    totalTokens: int
    cost: Cost


class ToolDeclaration(TypedDict):
    name: str
    description: str
    parameters: dict[str, Any]
    constrainedSampling: NotRequired[dict[str, Any]]
    """pi declares ``{"type": "json_schema", "strict": "prefer"}`` for its built-in tools."""


class ToolRemoval(TypedDict):
    name: str


class SystemMessage(TypedDict):
    role: Literal["system"]
    content: str | list[TextContent]
    sections: NotRequired[dict[str, str | None]]
    toolsAdded: NotRequired[list[ToolDeclaration]]
    toolsRemoved: NotRequired[list[ToolRemoval]]
    timestamp: int


class UserMessage(TypedDict):
    role: Literal["user"]
    content: str | list[UserContent]
    timestamp: int


class AssistantMessage(TypedDict):
    role: Literal["assistant"]
    content: list[AssistantContent]
    api: str
    provider: str
    model: str
    responseModel: NotRequired[str]
    responseId: NotRequired[str]
    providerThinkingLevel: NotRequired[str]
    thinkingLevel: NotRequired[str]
    diagnostics: NotRequired[Any]
    usage: Usage
    stopReason: StopReason
    deferred: NotRequired[Any]
    errorMessage: NotRequired[str]
    rawStopReason: NotRequired[str]
    endTurn: NotRequired[bool]
    timestamp: int
    durationMs: NotRequired[int]


class ToolResultMessage(TypedDict):
    role: Literal["toolResult"]
    toolCallId: str
    toolName: str
    content: list[UserContent]
    details: NotRequired[Any]
    usage: NotRequired[Usage]
    nestedCalls: NotRequired[Any]
    isError: bool
    timestamp: int
    durationMs: NotRequired[int]


class BashExecutionMessage(TypedDict):
    role: Literal["bashExecution"]
    command: str
    output: str
    exitCode: NotRequired[int]
    cancelled: bool
    truncated: bool
    fullOutputPath: NotRequired[str]
    timestamp: int
    excludeFromContext: NotRequired[bool]


class CustomMessage(TypedDict):
    role: Literal["custom"]
    customType: str
    content: str | list[UserContent]
    display: bool
    details: NotRequired[Any]
    timestamp: int


class BranchSummaryMessage(TypedDict):
    role: Literal["branchSummary"]
    summary: str
    fromId: str
    timestamp: int


class CompactionSummaryMessage(TypedDict):
    role: Literal["compactionSummary"]
    summary: str
    tokensBefore: int
    timestamp: int


AgentMessage: TypeAlias = (
    UserMessage
    | AssistantMessage
    | ToolResultMessage
    | SystemMessage
    | BashExecutionMessage
    | CustomMessage
    | BranchSummaryMessage
    | CompactionSummaryMessage
)
"""Any message that can stand in a session's context."""

Message: TypeAlias = UserMessage | AssistantMessage | ToolResultMessage | SystemMessage
"""A message a provider understands (after ``convert_to_llm``)."""


def now_ms() -> int:
    """The current time in Unix milliseconds (message timestamps)."""
    return time.time_ns() // 1_000_000


def text_block(text: str) -> TextContent:
    return {"type": "text", "text": text}


def image_block(data: str, mime_type: str) -> ImageContent:
    return {"type": "image", "data": data, "mimeType": mime_type}


def tool_call(call_id: str, name: str, arguments: Mapping[str, Any]) -> ToolCall:
    return {"type": "toolCall", "id": call_id, "name": name, "arguments": dict(arguments)}


def empty_usage() -> Usage:
    return {
        "input": 0,
        "output": 0,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": 0,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
    }


def user_message(
    text: str, *, images: Sequence[ImageContent] = (), timestamp: int | None = None
) -> UserMessage:
    """A user prompt as pi stores it: a text block first, then any images."""
    content: list[UserContent] = [text_block(text), *images]
    return {
        "role": "user",
        "content": content,
        "timestamp": now_ms() if timestamp is None else timestamp,
    }


def assistant_message(
    content: Sequence[AssistantContent],
    *,
    api: str,
    provider: str,
    model: str,
    usage: Usage | None = None,
    stop_reason: StopReason = "stop",
    error_message: str | None = None,
    timestamp: int | None = None,
) -> AssistantMessage:
    msg: dict[str, Any] = {
        "role": "assistant",
        "content": list(content),
        "api": api,
        "provider": provider,
        "model": model,
        "usage": usage if usage is not None else empty_usage(),
        "stopReason": stop_reason,
    }
    if error_message is not None:
        msg["errorMessage"] = error_message
    msg["timestamp"] = now_ms() if timestamp is None else timestamp
    return cast(AssistantMessage, msg)


def with_thinking_level(message: AssistantMessage, level: str) -> AssistantMessage:
    """``message`` recording the requested thinking ``level`` where pi puts it (after
    ``model``); a new mapping, ``message`` itself is not changed."""
    out: dict[str, Any] = {}
    for key, value in message.items():
        if key == "thinkingLevel":
            continue
        out[key] = value
        if key == "model":
            out["thinkingLevel"] = level
    if "thinkingLevel" not in out:
        out["thinkingLevel"] = level
    return cast(AssistantMessage, out)


def tool_result_message(
    tool_call_id: str,
    tool_name: str,
    content: Sequence[UserContent],
    *,
    is_error: bool = False,
    details: Any = None,
    duration_ms: int | None = None,
    timestamp: int | None = None,
) -> ToolResultMessage:
    """A tool result in pi's key order (``durationMs`` before ``timestamp``)."""
    msg: dict[str, Any] = {
        "role": "toolResult",
        "toolCallId": tool_call_id,
        "toolName": tool_name,
        "content": list(content),
    }
    if details is not None:
        msg["details"] = details
    msg["isError"] = is_error
    if duration_ms is not None:
        msg["durationMs"] = duration_ms
    msg["timestamp"] = now_ms() if timestamp is None else timestamp
    return cast(ToolResultMessage, msg)


def bash_execution_message(
    command: str,
    output: str,
    *,
    exit_code: int | None,
    cancelled: bool,
    truncated: bool,
    full_output_path: str | None = None,
    exclude_from_context: bool | None = None,
    timestamp: int | None = None,
) -> BashExecutionMessage:
    """A user shell command's record as pi writes it: ``exitCode``, ``fullOutputPath`` and
    ``excludeFromContext`` are left out when unset (no ``null``, no default ``false``)."""
    msg: dict[str, Any] = {"role": "bashExecution", "command": command, "output": output}
    if exit_code is not None:
        msg["exitCode"] = exit_code
    msg["cancelled"] = cancelled
    msg["truncated"] = truncated
    if full_output_path is not None:
        msg["fullOutputPath"] = full_output_path
    msg["timestamp"] = now_ms() if timestamp is None else timestamp
    if exclude_from_context is not None:
        msg["excludeFromContext"] = exclude_from_context
    return cast(BashExecutionMessage, msg)


def text_of(content: str | Sequence[Mapping[str, Any]] | None, sep: str = "") -> str:
    """The text blocks of a content value joined with ``sep`` (a string is returned as is)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return sep.join(block.get("text", "") for block in content if block.get("type") == "text")
