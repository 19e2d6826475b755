"""The fields of pi's entries, stated once, and the checks made from them.

A session line can be valid JSON and still hold a number where pi writes a string (``content:
5``, ``provider: 5``, a tool call with ``name: 7``, ``sections: {"a": 5}``), or nest deeper
than a request can carry. Such values must not reach the projection, the token estimate, the
providers or the CLI, each of which would have to guard every field. The tables below say, for
every entry type, message role and content block, which fields it has, of which JSON type,
and which are required. Two checks are made from them:

* :func:`head_if_well_typed_and_shallow`, the compiled check, run on nearly every line read. The tables become
  ``msgspec`` Structs (tagged unions on the entry ``type``, the message ``role`` and the block
  ``type``), so a line is decoded into a few small objects while every field in the tables is
  checked, the rest of the line skipped without being built. The long strings (a block's text,
  thinking, image data) are not built either: they are taken as raw spans of the line and only
  their first byte is looked at. Their lengths also answer the depth limit for nearly every
  line: what is left of the line outside them is too short to nest that deep.
* :func:`checked_entry`, the full check, for a decoded mapping (a line the compiled check
  refused, an exported file). It returns the view the rest of the code reads, with every field
  in the tables of the type pi writes, and says what it changed:

  - a field of the wrong type is treated as absent (``provider: 5`` → no provider);
  - a content block that is not an object, or whose fields have the wrong type, is dropped
    from its content list; a content value of the wrong type reads as empty (a string where
    pi writes blocks becomes one text block);
  - a tool result without a string ``toolCallId``, or a message without a string ``role``,
    contributes no message; a context edit with a replacement that is neither ``null`` nor
    an object is ignored (it must not turn into an omission).

  Each change is described in a fault (``message.content[1] (toolCall) name is a number,
  expected a string: block dropped``) that the loader reports with the file and line. Fields
  the tables do not name are kept as they are, and the raw line is never changed: a session
  written back keeps its bytes. A well-typed entry (everything pi writes) is returned as the
  same object, after a fast pass over the same tables that allocates nothing.

The rule that keeps the two in step: **a line the compiled check accepts is one the full check
returns unchanged with no fault, and that nests within** :data:`CONTEXT_MAX_DEPTH`. The
compiled check may refuse more (an entry type or role the tables do not list, a block type pi
may add, an ``id`` that is not a string, a duplicated key, text JSON spells in a way only the
fallback decoder reads); a refused line simply goes the full way, so every warning keeps its
wording. ``tests/session/test_checks.py`` holds the two together on generated lines.

In the Structs a field that is not required is declared with a default of its own type
(``provider: str = ""``): an absent field decodes to the default, a ``null`` or another type is
refused, as the full check ignores it with a fault. Objects whose contents are not checked
(tool-call arguments, tool parameters) decode into a Struct without fields, which tests that
the value is an object and skips it. The Structs are not tracked by the garbage collector
(``gc=False``): each lives for one line and holds no cycle, and tracking a few per line costs
the loader time for nothing.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable
from functools import reduce
from typing import Any, Final

import msgspec
from msgspec import UNSET, Struct, UnsetType

__all__ = [
    "CONTEXT_MAX_DEPTH",
    "SHALLOW_LENGTH",
    "Head",
    "checked_entry",
    "head_if_well_typed_and_shallow",
    "json_kind",
    "nests_deeper_than",
    "shallow_line",
]


# -- depth ------------------------------------------------------------------------------------

CONTEXT_MAX_DEPTH: Final = 500
"""The deepest an entry's JSON may nest (objects and arrays inside each other, the entry's own
object counted) and still reach the context.

Every line pi writes loads (up to ``_json.MAX_DEPTH``) and is kept, shown and exported. But a
request goes out through encoders that recurse (the provider SDKs hand the body to the
standard library's JSON encoder, which stops near Python's recursion limit, less the frames
already on the stack: about 950 levels in a plain agent run), so an entry nested deeper is
left out of the context, wherever it came from (a file, or a model reply stored in this
process), and reported with its line; the session goes on without it. Half the encoder's
reach leaves room for the frames of extensions and nested calls.
"""

SHALLOW_LENGTH: Final = 2 * CONTEXT_MAX_DEPTH + 1
"""No JSON text of at most this many bytes (outside its strings) nests deeper than
:data:`CONTEXT_MAX_DEPTH`: every level takes two of them."""

_NOT_OPENING: Final = bytes(b for b in range(256) if b not in b"{[")


def shallow_line(line: bytes) -> bool:
    """Whether the JSON text ``line`` is sure to nest no deeper than :data:`CONTEXT_MAX_DEPTH`:
    it has at most :data:`SHALLOW_LENGTH` bytes, or at most ``CONTEXT_MAX_DEPTH`` opening
    brackets (in strings or not). Any other line may, and needs its value walked."""
    return (
        len(line) <= SHALLOW_LENGTH
        # the opening brackets kept, the rest deleted: one pass over the line
        or len(line.translate(None, _NOT_OPENING)) <= CONTEXT_MAX_DEPTH
    )


def nests_deeper_than(value: Any, limit: int) -> bool:
    """Whether ``value`` holds objects and arrays (tuples too) more than ``limit`` levels
    inside each other (``[]`` is one level); iterative, so any depth is measured."""
    containers = (dict, list, tuple)
    if type(value) not in containers:
        return False
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        for child in item.values() if type(item) is dict else item:
            if type(child) in containers:
                stack.append((child, depth + 1))
    return False


# -- the kinds of field -----------------------------------------------------------------------


def json_kind(value: Any) -> str:
    """The JSON type of ``value`` in words (``a number``, ``an object``...)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


_MISSING: Final = object()


class _AnyObject(Struct, gc=False):
    """Any JSON object (its members skipped, not built)."""


class _Rule:
    """How one field is checked. A :class:`_Type` is tested in the first pass over an object's
    fields; the others (nested values) after it, each by its own :meth:`check`."""

    __slots__ = ()

    def annotation(self, required: bool) -> Any:
        """The field's type in the compiled check."""
        raise NotImplementedError

    def default(self) -> Any:
        """What an absent field decodes to in the compiled check."""
        return UNSET

    def typed(self, value: Any) -> bool:
        """Whether :meth:`check` would keep ``value`` (present) as it is, finding no fault."""
        raise NotImplementedError

    def check(self, checker: _Checker, obj: dict[str, Any], key: str, prefix: str) -> Any:
        """``obj`` with the value of ``key`` checked (faults recorded in ``checker``)."""
        raise NotImplementedError


class _Type(_Rule):
    """A field whose value is tested by its JSON type alone: the exact Python types it may have
    (``type(v) in types``: a bool is not a number here, as it is not in JSON), in words."""

    __slots__ = ("_annotation", "_default", "span", "types", "words")

    def __init__(
        self,
        types: Iterable[type],
        words: str,
        annotation: Any,
        default: Any,
        *,
        span: bool = False,
    ) -> None:
        self.types = frozenset(types)
        self.words = words
        self._annotation = annotation
        self._default = default
        self.span = span

    def annotation(self, required: bool) -> Any:
        return self._annotation

    def default(self) -> Any:
        return self._default


_STR: Final = _Type({str}, "a string", str, "")
_LONG_STR: Final = _Type({str}, "a string", msgspec.Raw, None, span=True)
"""A string that may be long (a block's text): the compiled check takes it as a raw span of
the line (the attribute ``span``, one per block) and :func:`_outside_strings` tests it."""
_NUMBER: Final = _Type({int, float}, "a number", float, 0)
_BOOL: Final = _Type({bool}, "a boolean", bool, False)
_NUMBER_OR_NULL: Final = _Type({int, float, type(None)}, "a number", float | None, None)
_STR_OR_NULL: Final = _Type({str, type(None)}, "a string or null", str | None, None)
_OBJECT: Final = _Type({dict}, "an object", _AnyObject | UnsetType, UNSET)
"""An object whose contents are not checked (tool-call arguments, tool parameters)."""


class _Shape:
    """The fields of one kind of JSON object, in the order pi writes them.

    ``spec`` holds the first pass's tests (the :class:`_Type` fields and the type test of each
    nested :class:`_Object`); :meth:`typed` runs it in one pass over the object's own keys, no
    allocation, and only when it says no does :meth:`wrong` walk it to name what is wrong.
    ``later`` holds the nested values, checked after it in their order, content last.
    ``fallback`` maps a field to what it reads as when it has the wrong type (else absent).
    """

    __slots__ = (
        "_later_typed",
        "_types",
        "fallback",
        "fields",
        "later",
        "required",
        "required_in_order",
        "spec",
    )

    def __init__(
        self,
        fields: dict[str, _Rule],
        *,
        required: Iterable[str] = (),
        fallback: dict[str, Any] | None = None,
    ) -> None:
        self.fields = fields
        self.required = frozenset(required)
        self.required_in_order = tuple(key for key in fields if key in self.required)
        self.fallback = fallback or {}
        self.spec: dict[str, tuple[frozenset[type], str]] = {}
        for key, rule in fields.items():
            if isinstance(rule, _Type):
                self.spec[key] = (rule.types, rule.words)
            elif isinstance(rule, _Object):
                self.spec[key] = (_OBJECT.types, _OBJECT.words)
        self._types = {key: types for key, (types, _) in self.spec.items()}
        later = [(key, rule) for key, rule in fields.items() if not isinstance(rule, _Type)]
        self.later = sorted(later, key=lambda item: isinstance(item[1], _Content))
        # a nested object present here is one: the first pass tested its type
        self._later_typed = tuple(
            (key, rule.shape.well_typed if isinstance(rule, _Object) else rule.typed)
            for key, rule in self.later
        )

    def typed(self, obj: dict[str, Any]) -> bool:
        """Whether every first-pass field present in ``obj`` has an accepted type and every
        required field is present."""
        types_of = self._types.get
        for key, value in obj.items():
            types = types_of(key)
            if types is not None and type(value) not in types:
                return False
        return obj.keys() >= self.required

    def wrong(self, obj: dict[str, Any]) -> list[str]:
        """The present first-pass fields whose value has the wrong type (the slow path)."""
        spec = self.spec
        return [
            key for key, (types, _) in spec.items() if key in obj and type(obj[key]) not in types
        ]

    def well_typed(self, obj: dict[str, Any]) -> bool:
        """Whether :meth:`_Checker.object` would return ``obj`` unchanged with no fault (the
        fast path, run for every entry checked: :meth:`typed` inlined, no pass for nothing)."""
        if self._types:
            types_of = self._types.get
            for key, value in obj.items():
                types = types_of(key)
                if types is not None and type(value) not in types:
                    return False
        if self.required and not obj.keys() >= self.required:
            return False
        for key, typed in self._later_typed:
            value = obj.get(key, _MISSING)
            if value is not _MISSING and not typed(value):
                return False
        return True


class _Nested(_Rule):
    """A value with fields of its own, described by ``shape``."""

    __slots__ = ("shape",)

    def __init__(self, shape: _Shape) -> None:
        self.shape = shape

    def check(self, checker: _Checker, obj: dict[str, Any], key: str, prefix: str) -> Any:
        value = obj[key]
        fixed = checker.object(value, f"{prefix}{key}.", self.shape)
        return obj if fixed is value else {**obj, key: fixed}


class _Object(_Nested):
    """An object with fields of its own; its type is tested in the first pass."""

    __slots__ = ()

    def annotation(self, required: bool) -> Any:
        return _struct_of(self.shape) if required else _struct_of(self.shape) | UnsetType

    def typed(self, value: Any) -> bool:
        return type(value) is not dict or self.shape.well_typed(value)


class _Voiding(_Nested):
    """An object or ``null``; a value of another type is dropped together with its owner's
    ``voids`` fields (``action`` says what that means)."""

    __slots__ = ("action", "voids")

    def __init__(self, shape: _Shape, *, voids: tuple[str, ...], action: str) -> None:
        super().__init__(shape)
        self.voids = voids
        self.action = action

    def annotation(self, required: bool) -> Any:
        return _struct_of(self.shape) | UnsetType | None

    def typed(self, value: Any) -> bool:
        return value is None or (type(value) is dict and self.shape.well_typed(value))

    def check(self, checker: _Checker, obj: dict[str, Any], key: str, prefix: str) -> Any:
        value = obj[key]
        if value is not None and not isinstance(value, dict):
            checker.fault(prefix + key, value, "an object or null", self.action)
            return {k: v for k, v in obj.items() if k != key and k not in self.voids}
        if isinstance(value, dict):
            return super().check(checker, obj, key, prefix)
        return obj


class _Content(_Rule):
    """A content value: blocks, or when ``text_ok`` also a string. ``allowed`` names the only
    block types read (others are kept unchecked); ``empty`` is what a value of the wrong type
    reads as."""

    __slots__ = ("allowed", "empty", "text_ok")

    def __init__(
        self, *, text_ok: bool, allowed: frozenset[str] | None = None, empty: Any = ()
    ) -> None:
        self.text_ok = text_ok
        self.allowed = allowed
        self.empty = empty

    def annotation(self, required: bool) -> Any:
        # A tagged Struct decoded on its own does not require its tag, so blocks are always
        # decoded through a union, which does. (Block types ``allowed`` leaves out are not
        # checked by the full check at all: checking them here only refuses more.)
        blocks = list[_BLOCK_UNION]
        return (str | blocks | None) if self.text_ok else (blocks | None)

    def default(self) -> Any:
        return None

    def typed(self, value: Any) -> bool:
        if value is None:
            return True
        if type(value) is str:
            return self.text_ok
        return type(value) is list and _blocks_typed(value, self.allowed)

    def check(self, checker: _Checker, obj: dict[str, Any], key: str, prefix: str) -> Any:
        content, changed = checker.content(
            obj.get(key), prefix + key, text_ok=self.text_ok, allowed=self.allowed, empty=self.empty
        )
        return {**obj, key: content} if changed else obj


class _Map(_Rule):
    """An object of named values of one type: a member of another type is ignored (``action``
    says what that means)."""

    __slots__ = ("action", "value")

    def __init__(self, value: _Type, *, action: str) -> None:
        self.value = value
        self.action = action

    def annotation(self, required: bool) -> Any:
        return dict[str, self.value.annotation(True)] | UnsetType  # type: ignore[misc]

    def typed(self, value: Any) -> bool:
        types = self.value.types
        return type(value) is dict and all(type(v) in types for v in value.values())

    def check(self, checker: _Checker, obj: dict[str, Any], key: str, prefix: str) -> Any:
        members = obj[key]
        if not isinstance(members, dict):
            checker.fault(f"{prefix}{key}", members, "an object", "ignored")
            return {k: v for k, v in obj.items() if k != key}
        types, words = self.value.types, self.value.words
        good = {}
        for name, member in members.items():
            if type(member) in types:
                good[name] = member
            else:
                checker.fault(f"{prefix}{key}.{name}", member, words, self.action)
        return obj if len(good) == len(members) else {**obj, key: good}


class _Tools(_Rule):
    """A list of tools, each an object of ``shape``: one with a required field missing or any
    field of the wrong type is ignored."""

    __slots__ = ("others", "shape")

    def __init__(self, shape: _Shape) -> None:
        self.shape = shape
        self.others = [key for key in shape.fields if key not in shape.required]

    def annotation(self, required: bool) -> Any:
        return list[_struct_of(self.shape)] | UnsetType  # type: ignore[misc]

    def typed(self, value: Any) -> bool:
        shape = self.shape
        return type(value) is list and all(
            type(tool) is dict and shape.typed(tool) for tool in value
        )

    def check(self, checker: _Checker, obj: dict[str, Any], key: str, prefix: str) -> Any:
        tools = obj[key]
        if not isinstance(tools, list):
            checker.fault(prefix + key, tools, "a list", "ignored")
            return {k: v for k, v in obj.items() if k != key}
        spec = self.shape.spec
        kept = []
        for index, tool in enumerate(tools):
            where = f"{prefix}{key}[{index}]"
            if not isinstance(tool, dict):
                checker.fault(where, tool, "an object", "tool ignored")
                continue
            for name in self.shape.required_in_order:
                value = tool.get(name)
                types, words = spec[name]
                if type(value) not in types:
                    checker.fault(f"{where}.{name}", value, words, "tool ignored")
                    break
            else:
                if self.shape.typed(tool):
                    kept.append(tool)
                else:
                    checker.faults.append(
                        f"{where} has a {' or '.join(self.others)} of the wrong type: tool ignored"
                    )
        return obj if len(kept) == len(tools) else {**obj, key: kept}


class _Message(_Rule):
    """A message (any role in :data:`_ROLES`, or only ``role``): one that cannot contribute
    anything is left out."""

    __slots__ = ("role",)

    def __init__(self, role: str | None = None) -> None:
        self.role = role

    def annotation(self, required: bool) -> Any:
        # decoded through the union of every role even when one is expected (a tagged Struct
        # decoded on its own does not require its tag); :func:`head_if_well_typed_and_shallow` tests the role
        return _MESSAGE_UNION if required else _MESSAGE_UNION | UnsetType

    def typed(self, value: Any) -> bool:
        if type(value) is not dict:
            return False
        role = value.get("role")
        if type(role) is not str or (self.role is not None and role != self.role):
            return False
        shape = _ROLES.get(role)
        return shape is None or shape.well_typed(value)

    def check(self, checker: _Checker, obj: dict[str, Any], key: str, prefix: str) -> Any:
        message = obj.get(key)
        fixed = checker.message(message, f"{prefix}{key}.")
        if fixed is not None and self.role is not None and fixed.get("role") != self.role:
            checker.faults.append(f"{prefix}{key} is not a {self.role} message: ignored")
            fixed = None
        if fixed is None:
            return {k: v for k, v in obj.items() if k != key}
        return obj if fixed is message else {**obj, key: fixed}


# -- the field rules --------------------------------------------------------------------------

_USAGE: Final = _Shape(
    {
        "input": _NUMBER,
        "output": _NUMBER,
        "cacheRead": _NUMBER,
        "cacheWrite": _NUMBER,
        "cacheWrite1h": _NUMBER,
        "reasoning": _NUMBER,
        "totalTokens": _NUMBER,
        "cost": _Object(
            _Shape(
                {
                    "input": _NUMBER,
                    "output": _NUMBER,
                    "cacheRead": _NUMBER,
                    "cacheWrite": _NUMBER,
                    "total": _NUMBER,
                    "totalFromProvider": _BOOL,  # whether the provider reported the total itself
                }
            )
        ),
    }
)

_BLOCKS: Final[dict[str, _Shape]] = {
    "text": _Shape({"text": _LONG_STR}, required={"text"}),
    "thinking": _Shape({"thinking": _LONG_STR}, required={"thinking"}),
    "image": _Shape({"data": _LONG_STR, "mimeType": _STR}, required={"data", "mimeType"}),
    "toolCall": _Shape({"id": _STR, "name": _STR, "arguments": _OBJECT}, required={"id", "name"}),
}
"""Content blocks by ``type``: a block with a field missing or of the wrong type is dropped.
Blocks of other types are kept, never interpreted."""

_TEXT_OR_BLOCKS: Final = _Content(text_ok=True)
_BLOCKS_ONLY: Final = _Content(text_ok=False)

_ROLES: Final[dict[str, _Shape]] = {
    "user": _Shape({"content": _TEXT_OR_BLOCKS, "timestamp": _NUMBER}),
    "assistant": _Shape(
        {
            "content": _BLOCKS_ONLY,
            "api": _STR,
            "provider": _STR,
            "model": _STR,
            "responseModel": _STR,
            "responseId": _STR,
            "stopReason": _STR,
            "errorMessage": _STR,
            "rawStopReason": _STR,
            "thinkingLevel": _STR,
            "providerThinkingLevel": _STR,
            "usage": _Object(_USAGE),
            "timestamp": _NUMBER,
        }
    ),
    "toolResult": _Shape(
        {
            "toolCallId": _STR,
            "content": _BLOCKS_ONLY,
            "toolName": _STR,
            "isError": _BOOL,
            "usage": _Object(_USAGE),
            "timestamp": _NUMBER,
        },
        required={"toolCallId"},
    ),
    "system": _Shape(
        {
            "content": _Content(text_ok=True, allowed=frozenset({"text"}), empty=""),
            "sections": _Map(_STR_OR_NULL, action="section ignored"),
            "toolsAdded": _Tools(
                _Shape(
                    {"name": _STR, "description": _STR, "parameters": _OBJECT},
                    required={"name"},
                )
            ),
            "toolsRemoved": _Tools(_Shape({"name": _STR}, required={"name"})),
            "timestamp": _NUMBER,
        }
    ),
    "bashExecution": _Shape(
        {
            "command": _STR,
            "output": _STR,
            "exitCode": _NUMBER_OR_NULL,
            "cancelled": _BOOL,
            "truncated": _BOOL,
            "fullOutputPath": _STR,
            "excludeFromContext": _BOOL,
            "timestamp": _NUMBER,
        }
    ),
    "custom": _Shape({"customType": _STR, "display": _BOOL, "content": _TEXT_OR_BLOCKS}),
    "hookMessage": _Shape({"customType": _STR, "display": _BOOL, "content": _TEXT_OR_BLOCKS}),
}
"""Messages by ``role``: a message whose required field is missing or of the wrong type is
left out of the context. Messages of other roles are kept, never interpreted."""

_HEAD: Final = _Shape({"id": _STR, "parentId": _STR_OR_NULL})
"""What every entry has besides its ``type``. The full check reads only ``parentId`` here (an
entry whose parent is neither a string nor null is treated as a root); the id is the
loader's."""
_PARENT_TYPES, _PARENT_WORDS = _HEAD.spec["parentId"]

_ENTRIES: Final[dict[str, _Shape]] = {
    "message": _Shape({"message": _Message()}, required={"message"}),
    "compaction": _Shape(
        {
            "summary": _STR,
            "firstKeptEntryId": _STR,
            "tokensBefore": _NUMBER,
            "fromHook": _BOOL,
            "usage": _Object(_USAGE),
            "systemMessage": _Message("system"),
        },
        fallback={"summary": ""},  # the model sees an empty summary, not "None"
    ),
    "branch_summary": _Shape(
        {"summary": _STR, "fromId": _STR, "fromHook": _BOOL, "usage": _Object(_USAGE)}
    ),
    "custom_message": _Shape({"customType": _STR, "display": _BOOL, "content": _TEXT_OR_BLOCKS}),
    "custom": _Shape({"customType": _STR}),
    "model_change": _Shape({"provider": _STR, "modelId": _STR}),
    "thinking_level_change": _Shape({"thinkingLevel": _STR}),
    "label": _Shape({"targetId": _STR, "label": _STR}),
    "session_info": _Shape({"name": _STR}),
    "context_edit": _Shape(
        {
            "targetId": _STR,
            "replacement": _Voiding(
                _Shape({"content": _TEXT_OR_BLOCKS}), voids=("targetId",), action="edit ignored"
            ),
        }
    ),
    "usage": _Shape(
        {
            "kind": _STR,
            "provider": _STR,
            "model": _STR,
            "usage": _Object(_USAGE),
            "note": _STR,
        }
    ),
}
"""Entries by ``type`` (besides :data:`_HEAD`). Entries of other types are kept and written
back, never interpreted."""


# -- the full check ---------------------------------------------------------------------------

_NO_FIELDS: Final = _Shape({})


def _blocks_typed(blocks: list[Any], allowed: frozenset[str] | None = None) -> bool:
    """Whether every block of a content list would be kept: the fast path of
    :meth:`_Checker.content` (a block type not ``allowed``, or unknown, is kept unchecked, as
    :meth:`_Checker.block` does)."""
    shapes = _BLOCKS
    for block in blocks:
        if type(block) is not dict:
            return False
        kind = block.get("type")
        if type(kind) is not str:
            return False
        if allowed is not None and kind not in allowed:
            continue
        if not shapes.get(kind, _NO_FIELDS).typed(block):
            return False
    return True


class _Checker:
    """Collects faults while rebuilding only the parts of a value that change."""

    def __init__(self) -> None:
        self.faults: list[str] = []

    def fault(self, where: str, value: Any, expected: str, action: str) -> None:
        self.faults.append(f"{where} is {json_kind(value)}, expected {expected}: {action}")

    def fields(self, obj: dict[str, Any], prefix: str, shape: _Shape) -> dict[str, Any]:
        """``obj`` without the first-pass fields of ``shape`` whose value has the wrong type
        (or with their fallback)."""
        if shape.typed(obj):
            return obj
        out = dict(obj)
        for key in shape.wrong(obj):
            del out[key]
            self.fault(prefix + key, obj[key], shape.spec[key][1], "ignored")
        for key, value in shape.fallback.items():
            if key in obj and key not in out:
                out = {**out, key: value}
        return out

    def object(self, obj: dict[str, Any], prefix: str, shape: _Shape) -> dict[str, Any]:
        """``obj`` checked against ``shape``: the first pass, then each nested value."""
        out = self.fields(obj, prefix, shape)
        for key, rule in shape.later:
            if key in out or key in shape.required:
                out = rule.check(self, out, key, prefix)
        return out

    def block(self, block: Any, where: str, index: int, allowed: frozenset[str] | None) -> bool:
        """Whether content block ``where[index]`` can stay (faults recorded for one that
        cannot; the place is spelled only then, this runs for every block read)."""
        if type(block) is not dict:
            self.fault(f"{where}[{index}]", block, "an object", "block dropped")
            return False
        kind = block.get("type")
        if type(kind) is not str:
            self.fault(f"{where}[{index}].type", kind, "a string", "block dropped")
            return False
        if allowed is not None and kind not in allowed:
            return True  # pi's readers skip block types they do not know; so do ours
        shape = _BLOCKS.get(kind, _NO_FIELDS)
        for key, (types, expected) in shape.spec.items():
            value = block.get(key, _MISSING)
            if value is _MISSING:
                if key not in shape.required:
                    continue
                value = None
            if type(value) not in types:
                self.fault(f"{where}[{index}] ({kind}) {key}", value, expected, "block dropped")
                return False
        return True

    def content(
        self,
        value: Any,
        where: str,
        *,
        text_ok: bool,
        allowed: frozenset[str] | None = None,
        empty: Any = (),
    ) -> tuple[Any, bool]:
        """A checked content value (``empty``, default ``[]``, for one of the wrong type);
        the flag says whether it changed."""
        if value is None:
            return value, False
        if isinstance(value, str):
            if text_ok:
                return value, False
            self.fault(where, value, "a list of blocks", "read as one text block")
            return [{"type": "text", "text": value}], True
        if not isinstance(value, list):
            expected = "a string or a list of blocks" if text_ok else "a list of blocks"
            self.fault(where, value, expected, "read as empty")
            return (list(empty) if isinstance(empty, tuple) else empty), True
        if _blocks_typed(value):
            return value, False
        block = self.block
        kept = [b for i, b in enumerate(value) if block(b, where, i, allowed)]
        if len(kept) == len(value):
            return value, False
        return kept, True

    def message(self, message: Any, prefix: str) -> Any:
        """A checked message, or ``None`` when it cannot contribute anything."""
        if not isinstance(message, dict):
            self.fault(prefix.rstrip("."), message, "an object", "left out of the context")
            return None
        role = message.get("role")
        if not isinstance(role, str):
            self.fault(f"{prefix}role", role, "a string", "left out of the context")
            return None
        shape = _ROLES.get(role)
        if shape is None:
            return message  # a role pi does not write: kept, never interpreted
        for key in shape.required_in_order:
            value = message.get(key)
            types, expected = shape.spec[key]
            if type(value) not in types:
                self.fault(f"{prefix}{key}", value, expected, "left out of the context")
                return None
        return self.object(message, prefix, shape)


def _well_typed(data: dict[str, Any]) -> bool:
    """Whether :func:`_checked_fully` would return ``data`` unchanged and find no fault, in
    one pass over the tables that allocates nothing. ``tests/session/test_checks.py`` holds it
    to that."""
    kind = data.get("type")
    if type(kind) is not str:
        return False
    if type(data.get("parentId")) not in _PARENT_TYPES:
        return False
    shape = _ENTRIES.get(kind)
    return shape is None or shape.well_typed(data)


def checked_entry(data: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The view of a decoded entry the rest of the code reads, and what had to change.

    Returns ``data`` itself (and no faults) when every interpreted field has pi's type.
    """
    if _well_typed(data):
        return data, []
    return _checked_fully(data)


def _checked_fully(data: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """:func:`checked_entry` without the fast path: every field walked, faults spelled."""
    check = _Checker()
    kind = data.get("type")
    if not isinstance(kind, str):
        check.fault("type", kind, "a string", "entry not interpreted")
        return data, check.faults
    parent = data.get("parentId")
    if type(parent) not in _PARENT_TYPES:
        check.fault("parentId", parent, _PARENT_WORDS, "entry treated as a root")
    shape = _ENTRIES.get(kind)
    out = data if shape is None else check.object(data, "", shape)
    return out, check.faults


# -- the compiled check -----------------------------------------------------------------------

_STRUCTS: dict[int, type] = {}  # id of a shape -> its Struct, made once


def _struct_fields(shape: _Shape) -> tuple[list[tuple[Any, ...]], bool]:
    """The Struct fields of ``shape`` and whether one of them is a raw span."""
    fields: list[tuple[Any, ...]] = []
    span = False
    for key, rule in shape.fields.items():
        required = key in shape.required
        if isinstance(rule, _Type) and rule.span:
            fields.append(("span", msgspec.Raw, msgspec.field(name=key)))
            span = True
        elif required:
            fields.append((key, rule.annotation(True)))
        else:
            fields.append((key, rule.annotation(False), rule.default()))
    return fields, span


def _struct_of(shape: _Shape) -> type:
    """The Struct the compiled check decodes a nested object of ``shape`` into (made once)."""
    made = _STRUCTS.get(id(shape))
    if made is None:
        made = msgspec.defstruct("_Object", _struct_fields(shape)[0], gc=False, module=__name__)
        _STRUCTS[id(shape)] = made
    return made


def _tagged(
    shapes: dict[str, _Shape], base: type, prefix: str, *, spans: bool = False
) -> dict[str, type]:
    """One Struct per shape, tagged by its key on ``base``'s tag field. With ``spans`` every
    one has the attribute ``span`` (``None`` for those without a long string)."""
    out = {}
    for tag, shape in shapes.items():
        fields, span = _struct_fields(shape)
        namespace = {"span": None} if spans and not span else None
        out[tag] = msgspec.defstruct(
            prefix + tag,
            fields,
            bases=(base,),
            tag=tag,
            gc=False,
            namespace=namespace,
            module=__name__,
        )
    return out


_BLOCK_BASE = msgspec.defstruct("_Block", [], tag_field="type", gc=False, module=__name__)
_BLOCK_STRUCTS: Final = _tagged(_BLOCKS, _BLOCK_BASE, "_Block_", spans=True)
_BLOCK_UNION: Final[Any] = reduce(operator.or_, _BLOCK_STRUCTS.values())

_MESSAGE_BASE = msgspec.defstruct("_Message", [], tag_field="role", gc=False, module=__name__)
_ROLE_STRUCTS: Final = _tagged(_ROLES, _MESSAGE_BASE, "_Message_")
_MESSAGE_UNION: Final[Any] = reduce(operator.or_, _ROLE_STRUCTS.values())
_ROLE_OF: Final[dict[type, str]] = {cls: role for role, cls in _ROLE_STRUCTS.items()}

_ENTRY_BASE = msgspec.defstruct(
    "_Entry",
    _struct_fields(_HEAD)[0],
    tag_field="type",
    kw_only=True,
    gc=False,
    module=__name__,
)
_ENTRY_STRUCTS: Final = _tagged(_ENTRIES, _ENTRY_BASE, "_Entry_")
_KINDS: Final[dict[type, str]] = {cls: kind for kind, cls in _ENTRY_STRUCTS.items()}
_decode: Final[Callable[[bytes], Any]] = msgspec.json.Decoder(
    reduce(operator.or_, _ENTRY_STRUCTS.values())
).decode


_REFUSED: Final = object()


def _content_reader(shape: _Shape) -> Callable[[Any], Any] | None:
    """How to find the content of a decoded entry of ``shape`` (the one value of it that
    may hold long strings), ``None`` when it has none; the reader gives :data:`_REFUSED` for
    a message of a role the field does not take."""
    for key, rule in shape.later:
        if isinstance(rule, _Content):
            return operator.attrgetter(key)
        if isinstance(rule, _Message):
            only = None if rule.role is None else _ROLE_STRUCTS[rule.role]

            def read_message(entry: Any, key: str = key, only: type | None = only) -> Any:
                message = getattr(entry, key)
                if message is UNSET:
                    return None
                if only is not None and type(message) is not only:
                    return _REFUSED  # the full check ignores it, with a fault
                return getattr(message, "content", None)

            return read_message
        if isinstance(rule, _Nested):
            inner = _content_reader(rule.shape)
            if inner is not None:
                struct = _struct_of(rule.shape)

                def read_inner(
                    entry: Any, key: str = key, struct: type = struct, inner: Any = inner
                ) -> Any:
                    value = getattr(entry, key)
                    return inner(value) if type(value) is struct else None

                return read_inner
    return None


_CONTENT_OF: Final = {
    _ENTRY_STRUCTS[kind]: reader
    for kind, shape in _ENTRIES.items()
    if kind != "message" and (reader := _content_reader(shape)) is not None
}
_MessageEntry: Final = _ENTRY_STRUCTS["message"]
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


def head_if_well_typed_and_shallow(line: bytes) -> Head | None:
    """The :data:`Head` of a session line whose every checked field has pi's type and that
    nests no deeper than :data:`CONTEXT_MAX_DEPTH`, or ``None`` when the line must go the full
    way (decoded in full, measured, and walked by :func:`checked_entry`, which names what is
    wrong)."""
    try:
        entry: Any = _decode(line)
    except (msgspec.ValidationError, msgspec.DecodeError, RecursionError):
        return None  # RecursionError: nested deeper than the decoder recurses
    kind = type(entry)
    role: str | None = None
    if kind is _MessageEntry:
        message = entry.message
        role = _ROLE_OF[type(message)]
        content = getattr(message, "content", None)
    else:
        read = _CONTENT_OF.get(kind)
        content = None if read is None else read(entry)
        if content is _REFUSED:
            return None
    # The depth: nesting ``d`` levels takes ``2 * d`` bracket bytes outside the strings, so a
    # line whose bytes outside its content's strings are few enough is shallow without being
    # looked at again (nearly every line: their bulk is text); others are counted.
    outside = _outside_strings(content, len(line))
    if outside is None or (outside > SHALLOW_LENGTH and not shallow_line(line)):
        return None
    return _KINDS[kind], entry.id, entry.parentId, role
