"""pi's entry and message shapes as compiled types: a whole line checked in one C pass.

:mod:`~pi_context.session.validation` walks a decoded mapping in Python and says precisely
what is wrong with it. Nearly every line of a real session is well-typed, and for those the
walk finds nothing at a cost of about twice the decoding. Here the same field rules are
declared once more as ``msgspec`` Structs (tagged unions on the entry ``type``, the message
``role`` and the block ``type``), so :func:`head_of_line` decodes a line into a few small
objects while checking every field the walk checks, skipping the rest of the line without
building it, and hands back the entry's :data:`Head`. The long strings (a block's text,
thinking, image data) are not built either: they are taken as raw spans of the line and only
their first byte is looked at. Their lengths also answer the depth limit for nearly every
line: what is left of the line outside them is too short to nest that deep.

The rule that keeps the two in step: **a line this module accepts is one the full check
returns unchanged with no fault, and that nests within the depth limit**
(``tests/session/test_shapes.py`` holds them together). It may refuse more than the full
check faults (an entry type or role it does not list, a block type pi may add, a duplicated
key, text JSON spells in a way only the fallback decoder reads); a refused line simply goes
the precise way, so every warning keeps its wording.

Scalars are declared with a default of their own type (``provider: str = ""``): an absent
field decodes to the default, a ``null`` or another type is refused, as the full check ignores
it with a fault. Objects whose contents are not checked (tool-call arguments, tool parameters)
decode into a Struct without fields, which tests that the value is an object and skips it.
The Structs are made untracked by the garbage collector (``gc=False``): each lives for one
line and holds no cycle, and tracking a few per line costs the loader time for nothing.
"""

# No ``from __future__ import annotations``: msgspec reads a Struct's field types when the
# class is made, and string annotations would each be compiled and evaluated there (a third of
# this module's import time, paid by every session command).
from typing import Any, ClassVar, Final

import msgspec
from msgspec import UNSET, Struct, UnsetType

from pi_context.session.depth import SHALLOW_LENGTH, shallow_line

__all__ = ["Head", "head_of_line"]


class _AnyObject(Struct, gc=False):
    """Any JSON object (its members skipped, not built)."""


# -- usage ------------------------------------------------------------------------------------


class _Cost(Struct, gc=False):
    input: float = 0
    output: float = 0
    cacheRead: float = 0
    cacheWrite: float = 0
    total: float = 0
    totalFromProvider: bool = False


class _Usage(Struct, gc=False):
    input: float = 0
    output: float = 0
    cacheRead: float = 0
    cacheWrite: float = 0
    cacheWrite1h: float = 0
    reasoning: float = 0
    totalTokens: float = 0
    cost: _Cost | UnsetType = UNSET


# -- content blocks ---------------------------------------------------------------------------


# The long strings of a line (a block's text, thinking, image data) are taken as raw JSON
# spans instead of being built, all under the one attribute ``span``: :func:`_outside_strings`
# then tests that each is a string.
class _Text(Struct, gc=False, tag_field="type", tag="text"):
    span: msgspec.Raw = msgspec.field(name="text")


class _Thinking(Struct, gc=False, tag_field="type", tag="thinking"):
    span: msgspec.Raw = msgspec.field(name="thinking")


class _Image(Struct, gc=False, tag_field="type", tag="image"):
    span: msgspec.Raw = msgspec.field(name="data")
    mimeType: str


class _ToolCall(Struct, gc=False, tag_field="type", tag="toolCall"):
    span: ClassVar[None] = None  # no long string
    id: str
    name: str
    arguments: _AnyObject | UnsetType = UNSET


_Block = _Text | _Thinking | _Image | _ToolCall

# ``text_ok`` content (a string or blocks) and blocks-only content. A tagged Struct decoded on
# its own does not require its tag, so blocks (and a compaction's system message) are always
# decoded through a union, which does. (A system message's blocks other than text are not
# checked by the full check at all: checking them here only refuses more.)
_Content = str | list[_Block] | None
_BlockContent = list[_Block] | None


# -- messages ---------------------------------------------------------------------------------


class _Message(Struct, gc=False, tag_field="role"):
    pass


class _User(_Message, tag="user"):
    content: _Content = None
    timestamp: float = 0


class _Assistant(_Message, tag="assistant"):
    content: _BlockContent = None
    api: str = ""
    provider: str = ""
    model: str = ""
    responseModel: str = ""
    responseId: str = ""
    stopReason: str = ""
    errorMessage: str = ""
    rawStopReason: str = ""
    thinkingLevel: str = ""
    providerThinkingLevel: str = ""
    usage: _Usage | UnsetType = UNSET
    timestamp: float = 0


class _ToolResult(_Message, tag="toolResult"):
    toolCallId: str
    content: _BlockContent = None
    toolName: str = ""
    isError: bool = False
    usage: _Usage | UnsetType = UNSET
    timestamp: float = 0


class _ToolAdded(Struct, gc=False):
    name: str
    description: str = ""
    parameters: _AnyObject | UnsetType = UNSET


class _ToolRemoved(Struct, gc=False):
    name: str


class _System(_Message, tag="system"):
    content: _Content = None
    sections: dict[str, str | None] | UnsetType = UNSET
    toolsAdded: list[_ToolAdded] | UnsetType = UNSET
    toolsRemoved: list[_ToolRemoved] | UnsetType = UNSET
    timestamp: float = 0


class _Bash(_Message, tag="bashExecution"):
    command: str = ""
    output: str = ""
    exitCode: float | None = None
    cancelled: bool = False
    truncated: bool = False
    fullOutputPath: str = ""
    excludeFromContext: bool = False
    timestamp: float = 0


class _Custom(_Message, tag="custom"):
    customType: str = ""
    display: bool = False
    content: _Content = None


class _HookMessage(_Message, tag="hookMessage"):
    customType: str = ""
    display: bool = False
    content: _Content = None


_AnyMessage = _User | _Assistant | _ToolResult | _System | _Bash | _Custom | _HookMessage


# -- entries ----------------------------------------------------------------------------------


class _Entry(Struct, gc=False, tag_field="type", kw_only=True):
    id: str = ""
    parentId: str | None = None


class _MessageEntry(_Entry, tag="message"):
    message: _AnyMessage


class _Compaction(_Entry, tag="compaction"):
    summary: str = ""
    firstKeptEntryId: str = ""
    tokensBefore: float = 0
    fromHook: bool = False
    usage: _Usage | UnsetType = UNSET
    systemMessage: _AnyMessage | UnsetType = UNSET  # a system message: see head_of_line


class _BranchSummary(_Entry, tag="branch_summary"):
    summary: str = ""
    fromId: str = ""
    fromHook: bool = False
    usage: _Usage | UnsetType = UNSET


class _CustomMessage(_Entry, tag="custom_message"):
    customType: str = ""
    display: bool = False
    content: _Content = None


class _CustomEntry(_Entry, tag="custom"):
    customType: str = ""


class _ModelChange(_Entry, tag="model_change"):
    provider: str = ""
    modelId: str = ""


class _ThinkingLevelChange(_Entry, tag="thinking_level_change"):
    thinkingLevel: str = ""


class _Label(_Entry, tag="label"):
    targetId: str = ""
    label: str = ""


class _SessionInfo(_Entry, tag="session_info"):
    name: str = ""


class _Replacement(Struct, gc=False):
    content: _Content = None


class _ContextEdit(_Entry, tag="context_edit"):
    targetId: str = ""
    replacement: _Replacement | UnsetType | None = UNSET


class _UsageEntry(_Entry, tag="usage"):
    kind_: str = msgspec.field(default="", name="kind")
    provider: str = ""
    model: str = ""
    usage: _Usage | UnsetType = UNSET
    note: str = ""


_ENTRY_TYPES: Final = (
    _MessageEntry,
    _Compaction,
    _BranchSummary,
    _CustomMessage,
    _CustomEntry,
    _ModelChange,
    _ThinkingLevelChange,
    _Label,
    _SessionInfo,
    _ContextEdit,
    _UsageEntry,
)
_KINDS: Final[dict[type, str]] = {cls: str(cls.__struct_config__.tag) for cls in _ENTRY_TYPES}
_ROLES: Final[dict[type, str]] = {
    cls: str(cls.__struct_config__.tag)
    for cls in (_User, _Assistant, _ToolResult, _System, _Bash, _Custom, _HookMessage)
}

_AnyEntry = (
    _MessageEntry
    | _Compaction
    | _BranchSummary
    | _CustomMessage
    | _CustomEntry
    | _ModelChange
    | _ThinkingLevelChange
    | _Label
    | _SessionInfo
    | _ContextEdit
    | _UsageEntry
)
_decode: Final = msgspec.json.Decoder(_AnyEntry).decode
_QUOTE: Final = ord('"')


def _outside_strings(content: Any, size: int) -> int | None:
    """``size`` (a line's length) less the bytes of ``content``'s strings, or ``None`` when a
    raw span of its blocks is not a JSON string.

    A span is the value as written, without the whitespace around it, so a string's starts
    with its quote and is all string. A content string decoded in full counts its characters,
    never more than the bytes that spelled it."""
    if content is None:
        return size
    if type(content) is str:
        return size - len(content)
    for block in content:
        span = block.span
        if span is None:
            continue
        if memoryview(span)[0] != _QUOTE:
            return None
        size -= len(span)
    return size


Head = tuple[str, str, str | None, str | None]
"""``(type, id, parentId, role)`` of a checked entry; the role of a ``message`` entry's
message, else ``None``."""


def head_of_line(line: bytes) -> Head | None:
    """The :data:`Head` of a session line whose every checked field has pi's type and that
    nests no deeper than :data:`~pi_context.session.depth.CONTEXT_MAX_DEPTH`, or ``None`` when
    the line must go the precise way (decoded in full, measured, and walked by
    :func:`~pi_context.session.validation.checked_entry`, which names what is wrong)."""
    try:
        entry: Any = _decode(line)
    except (msgspec.ValidationError, msgspec.DecodeError, RecursionError):
        return None  # RecursionError: nested deeper than the decoder recurses
    kind = type(entry)
    role: str | None = None
    if kind is _MessageEntry:
        message = entry.message
        role = _ROLES[type(message)]
        content = getattr(message, "content", None)
    elif kind is _CustomMessage:
        content = entry.content
    elif kind is _ContextEdit:
        content = entry.replacement.content if type(entry.replacement) is _Replacement else None
    elif kind is _Compaction:
        system = entry.systemMessage
        if system is UNSET:
            content = None
        elif type(system) is _System:
            content = system.content
        else:
            return None  # the full check ignores it, with a fault
    else:
        content = None
    # The depth: nesting ``d`` levels takes ``2 * d`` bracket bytes outside the strings, so a
    # line whose bytes outside its content's strings are few enough is shallow without being
    # looked at again (nearly every line: their bulk is text); others are counted.
    outside = _outside_strings(content, len(line))
    if outside is None or (outside > SHALLOW_LENGTH and not shallow_line(line)):
        return None
    return _KINDS[kind], entry.id, entry.parentId, role
