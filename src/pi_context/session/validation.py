"""Field types of entries read from a file, checked once at the boundary.

A session line can be valid JSON and still hold a number where pi writes a string (``content:
5``, ``provider: 5``, a tool call with ``name: 7``, ``sections: {"a": 5}``). Such values must
not reach the projection, the token estimate, the providers or the CLI, each of which would
have to guard every field. :func:`checked_entry` reads an entry's decoded mapping and returns
the view the rest of the code reads, with every field it interprets of the type pi writes:

* a scalar field of the wrong type is treated as absent (``provider: 5`` → no provider);
* a content block that is not an object, or whose text, name, id or arguments have the wrong
  type, is dropped from its content list; a content value of the wrong type reads as empty
  (a string where pi writes blocks becomes one text block);
* a tool result without a string ``toolCallId``, or a message without a string ``role``,
  contributes no message; a context edit with a replacement that is neither ``null`` nor an
  object is ignored (it must not turn into an omission).

Each change is described in a fault (``message.content[1] (toolCall) name is a number,
expected a string: block dropped``) that the loader reports with the file and line. Fields this
module does not know are kept as they are, and the raw line is never changed: a session written
back keeps its bytes. A well-typed entry (everything pi writes) is returned as the same object.
"""

from __future__ import annotations

from typing import Any, Final

__all__ = ["checked_entry", "json_kind"]


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


# A field test: the exact Python types a value may have (``type(v) in types``: a bool is not
# a number here, as it is not in JSON), and those types in words.
_Test = tuple[frozenset[type], str]
_STR: Final[_Test] = (frozenset({str}), "a string")
_NUMBER: Final[_Test] = (frozenset({int, float}), "a number")
_BOOL: Final[_Test] = (frozenset({bool}), "a boolean")
_OBJECT: Final[_Test] = (frozenset({dict}), "an object")
_NUMBER_OR_NULL: Final[_Test] = (frozenset({int, float, type(None)}), "a number")
_MISSING: Final = object()


class _Fields:
    """A compiled field spec: the keys to test and the types each may have.

    :meth:`typed` is the fast path, run for every entry read: one pass over the object's own
    keys, no allocation. Only when it says no does :meth:`wrong` walk the spec to name what is
    wrong; ``tests/session/test_validation.py`` checks that the two agree.
    """

    __slots__ = ("_types", "required", "spec")

    def __init__(self, spec: dict[str, _Test], required: frozenset[str] = frozenset()) -> None:
        self.spec = spec
        self.required = required
        self._types = {key: types for key, (types, _) in spec.items()}

    def typed(self, obj: dict[str, Any]) -> bool:
        """Whether every field of the spec present in ``obj`` has an accepted type and every
        required one is present."""
        types_of = self._types.get
        for key, value in obj.items():
            types = types_of(key)
            if types is not None and type(value) not in types:
                return False
        return obj.keys() >= self.required

    def wrong(self, obj: dict[str, Any]) -> list[str]:
        """The present fields whose value has the wrong type (the slow path)."""
        spec = self.spec
        return [
            key for key, (types, _) in spec.items() if key in obj and type(obj[key]) not in types
        ]


_USAGE_FIELDS: Final = _Fields(
    dict.fromkeys(
        ("input", "output", "cacheRead", "cacheWrite", "cacheWrite1h", "reasoning"), _NUMBER
    )
    | {"totalTokens": _NUMBER, "cost": _OBJECT}
)
_COST_FIELDS: Final = _Fields(
    dict.fromkeys(("input", "output", "cacheRead", "cacheWrite", "total"), _NUMBER)
    | {"totalFromProvider": _BOOL}  # whether the provider reported the total itself
)
_ASSISTANT_FIELDS: Final = _Fields(
    dict.fromkeys(
        (
            "api",
            "provider",
            "model",
            "responseModel",
            "responseId",
            "stopReason",
            "errorMessage",
            "rawStopReason",
            "thinkingLevel",
            "providerThinkingLevel",
        ),
        _STR,
    )
    | {"usage": _OBJECT, "timestamp": _NUMBER}
)
_TOOL_RESULT_FIELDS: Final = _Fields(
    {"toolName": _STR, "isError": _BOOL, "usage": _OBJECT, "timestamp": _NUMBER}
)
_BASH_FIELDS: Final = _Fields(
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
)
_SIMPLE_MESSAGE_FIELDS: Final = _Fields({"timestamp": _NUMBER})
_CUSTOM_FIELDS: Final = _Fields({"customType": _STR, "display": _BOOL})
_ENTRY_FIELDS: Final[dict[str, _Fields]] = {
    "compaction": _Fields(
        {
            "summary": _STR,
            "firstKeptEntryId": _STR,
            "tokensBefore": _NUMBER,
            "fromHook": _BOOL,
            "usage": _OBJECT,
        }
    ),
    "branch_summary": _Fields(
        {"summary": _STR, "fromId": _STR, "fromHook": _BOOL, "usage": _OBJECT}
    ),
    "custom_message": _CUSTOM_FIELDS,
    "custom": _Fields({"customType": _STR}),
    "model_change": _Fields({"provider": _STR, "modelId": _STR}),
    "thinking_level_change": _Fields({"thinkingLevel": _STR}),
    "label": _Fields({"targetId": _STR, "label": _STR}),
    "session_info": _Fields({"name": _STR}),
    "context_edit": _Fields({"targetId": _STR}),
    "usage": _Fields(
        {"kind": _STR, "provider": _STR, "model": _STR, "usage": _OBJECT, "note": _STR}
    ),
}
# What each block type must hold (every field required but a tool call's arguments).
_BLOCK_FIELDS: Final[dict[str, _Fields]] = {
    "text": _Fields({"text": _STR}, frozenset({"text"})),
    "thinking": _Fields({"thinking": _STR}, frozenset({"thinking"})),
    "image": _Fields({"data": _STR, "mimeType": _STR}, frozenset({"data", "mimeType"})),
    "toolCall": _Fields(
        {"id": _STR, "name": _STR, "arguments": _OBJECT}, frozenset({"id", "name"})
    ),
}
_NO_FIELDS: Final = _Fields({})


def _blocks_typed(blocks: list[Any]) -> bool:
    """Whether every block of a content list would be kept: the fast path of
    :meth:`_Checker.content` (an unknown block type is kept, as :meth:`_Checker.block` does)."""
    specs = _BLOCK_FIELDS
    for block in blocks:
        if type(block) is not dict:
            return False
        kind = block.get("type")
        if type(kind) is not str or not specs.get(kind, _NO_FIELDS).typed(block):
            return False
    return True


class _Checker:
    """Collects faults while rebuilding only the parts of a value that change."""

    def __init__(self) -> None:
        self.faults: list[str] = []

    def fault(self, where: str, value: Any, expected: str, action: str) -> None:
        self.faults.append(f"{where} is {json_kind(value)}, expected {expected}: {action}")

    def fields(self, obj: dict[str, Any], prefix: str, spec: _Fields) -> dict[str, Any]:
        """``obj`` without the fields of ``spec`` whose value has the wrong type."""
        if spec.typed(obj):
            return obj
        out = dict(obj)
        for key in spec.wrong(obj):
            del out[key]
            self.fault(prefix + key, obj[key], spec.spec[key][1], "ignored")
        return out

    def usage(self, obj: dict[str, Any], prefix: str) -> dict[str, Any]:
        usage = obj.get("usage")
        if not isinstance(usage, dict):
            return obj
        fixed = self.fields(usage, f"{prefix}usage.", _USAGE_FIELDS)
        cost = fixed.get("cost")
        if isinstance(cost, dict):
            fixed_cost = self.fields(cost, f"{prefix}usage.cost.", _COST_FIELDS)
            if fixed_cost is not cost:
                fixed = {**fixed, "cost": fixed_cost}
        return obj if fixed is usage else {**obj, "usage": fixed}

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
        spec = _BLOCK_FIELDS.get(kind, _NO_FIELDS)
        for key, (types, expected) in spec.spec.items():
            value = block.get(key, _MISSING)
            if value is _MISSING:
                if key not in spec.required:
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

    def tools(self, message: dict[str, Any], key: str, prefix: str) -> dict[str, Any]:
        tools = message.get(key)
        if key not in message:
            return message
        if not isinstance(tools, list):
            self.fault(prefix + key, tools, "a list", "ignored")
            return {k: v for k, v in message.items() if k != key}
        kept = []
        for index, tool in enumerate(tools):
            where = f"{prefix}{key}[{index}]"
            if not isinstance(tool, dict):
                self.fault(where, tool, "an object", "tool ignored")
            elif not isinstance(tool.get("name"), str):
                self.fault(f"{where}.name", tool.get("name"), "a string", "tool ignored")
            elif key == "toolsAdded" and not all(
                type(tool[field]) in types
                for field, (types, _) in (("description", _STR), ("parameters", _OBJECT))
                if field in tool
            ):
                self.faults.append(
                    f"{where} has a description or parameters of the wrong type: tool ignored"
                )
            else:
                kept.append(tool)
        return message if len(kept) == len(tools) else {**message, key: kept}

    def system(self, message: dict[str, Any], prefix: str) -> dict[str, Any]:
        out = message
        sections = message.get("sections")
        if "sections" in message:
            if not isinstance(sections, dict):
                self.fault(f"{prefix}sections", sections, "an object", "ignored")
                out = {k: v for k, v in out.items() if k != "sections"}
            else:
                good = {}
                for name, text in sections.items():
                    if text is None or isinstance(text, str):
                        good[name] = text
                    else:
                        self.fault(
                            f"{prefix}sections.{name}", text, "a string or null", "section ignored"
                        )
                if len(good) != len(sections):
                    out = {**out, "sections": good}
        out = self.tools(out, "toolsAdded", prefix)
        return self.tools(out, "toolsRemoved", prefix)

    def message(self, message: Any, prefix: str) -> Any:
        """A checked message, or ``None`` when it cannot contribute anything."""
        if not isinstance(message, dict):
            self.fault(prefix.rstrip("."), message, "an object", "left out of the context")
            return None
        role = message.get("role")
        if not isinstance(role, str):
            self.fault(f"{prefix}role", role, "a string", "left out of the context")
            return None
        out = message
        if role == "assistant":
            out = self.usage(self.fields(out, prefix, _ASSISTANT_FIELDS), prefix)
            content, changed = self.content(out.get("content"), f"{prefix}content", text_ok=False)
        elif role == "toolResult":
            call_id = out.get("toolCallId")
            if not isinstance(call_id, str):
                self.fault(f"{prefix}toolCallId", call_id, "a string", "left out of the context")
                return None
            out = self.usage(self.fields(out, prefix, _TOOL_RESULT_FIELDS), prefix)
            content, changed = self.content(out.get("content"), f"{prefix}content", text_ok=False)
        elif role == "system":
            out = self.system(self.fields(out, prefix, _SIMPLE_MESSAGE_FIELDS), prefix)
            content, changed = self.content(
                out.get("content"), f"{prefix}content", text_ok=True, allowed=_TEXT_ONLY, empty=""
            )
        elif role == "bashExecution":
            return self.fields(out, prefix, _BASH_FIELDS)
        elif role in ("user", "custom", "hookMessage"):
            spec = _SIMPLE_MESSAGE_FIELDS if role == "user" else _CUSTOM_FIELDS
            out = self.fields(out, prefix, spec)
            content, changed = self.content(out.get("content"), f"{prefix}content", text_ok=True)
        else:
            return out  # a role pi does not write: kept, never interpreted
        if changed:
            out = {**out, "content": content}
        return out


_TEXT_ONLY: Final = frozenset({"text"})


def _usage_typed(obj: dict[str, Any]) -> bool:
    usage = obj.get("usage")
    if type(usage) is not dict:
        return True  # absent (a present one of the wrong type fails its owner's fields)
    cost = usage.get("cost")
    return _USAGE_FIELDS.typed(usage) and (type(cost) is not dict or _COST_FIELDS.typed(cost))


def _content_typed(content: Any, text_ok: bool) -> bool:
    if content is None:
        return True
    if type(content) is str:
        return text_ok
    return type(content) is list and _blocks_typed(content)


def _well_typed(data: dict[str, Any]) -> bool:
    """Whether :func:`_checked_fully` would return ``data`` unchanged and find no fault, for
    the shapes nearly every line has (a user, assistant or tool-result message, a model or
    thinking-level change, a label, a name, a custom entry). ``False`` means "not sure": the
    full check decides. ``tests/session/test_validation.py`` holds it to that."""
    kind = data.get("type")
    if type(kind) is not str:
        return False
    parent = data.get("parentId")
    if parent is not None and type(parent) is not str:
        return False
    if kind == "message":
        message = data.get("message")
        if type(message) is not dict:
            return False
        role = message.get("role")
        if role == "assistant":
            return (
                _ASSISTANT_FIELDS.typed(message)
                and _usage_typed(message)
                and _content_typed(message.get("content"), False)
            )
        if role == "toolResult":
            return (
                type(message.get("toolCallId")) is str
                and _TOOL_RESULT_FIELDS.typed(message)
                and _usage_typed(message)
                and _content_typed(message.get("content"), False)
            )
        if role == "user":
            return _SIMPLE_MESSAGE_FIELDS.typed(message) and _content_typed(
                message.get("content"), True
            )
        return False
    if kind in _FULLY_CHECKED_KINDS:
        return False
    spec = _ENTRY_FIELDS.get(kind)
    return spec is None or spec.typed(data)


# Entry types whose check goes past their own fields (nested messages, usage, content).
_FULLY_CHECKED_KINDS: Final = frozenset(
    {"compaction", "branch_summary", "usage", "custom_message", "context_edit"}
)


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
    out = data
    kind = data.get("type")
    if not isinstance(kind, str):
        check.fault("type", kind, "a string", "entry not interpreted")
        return data, check.faults
    parent = data.get("parentId")
    if parent is not None and not isinstance(parent, str):
        check.fault("parentId", parent, "a string or null", "entry treated as a root")
    spec = _ENTRY_FIELDS.get(kind)
    if spec is not None:
        out = check.fields(out, "", spec)
    if kind == "message":
        message = out.get("message")
        fixed = check.message(message, "message.")
        if fixed is None:
            out = {k: v for k, v in out.items() if k != "message"}
        elif fixed is not message:
            out = {**out, "message": fixed}
    elif kind == "compaction":
        if "summary" in data and "summary" not in out:
            out = {**out, "summary": ""}  # the model sees an empty summary, not "None"
        out = check.usage(out, "")
        system = out.get("systemMessage")
        if "systemMessage" in out:
            fixed = check.message(system, "systemMessage.")
            if fixed is not None and fixed.get("role") != "system":
                check.faults.append("systemMessage is not a system message: ignored")
                fixed = None
            if fixed is None:
                out = {k: v for k, v in out.items() if k != "systemMessage"}
            elif fixed is not system:
                out = {**out, "systemMessage": fixed}
    elif kind in ("branch_summary", "usage"):
        out = check.usage(out, "")
    elif kind == "custom_message":
        content, changed = check.content(out.get("content"), "content", text_ok=True)
        if changed:
            out = {**out, "content": content}
    elif kind == "context_edit" and "replacement" in out:
        replacement = out.get("replacement")
        if replacement is not None and not isinstance(replacement, dict):
            check.fault("replacement", replacement, "an object or null", "edit ignored")
            out = {k: v for k, v in out.items() if k not in ("replacement", "targetId")}
        elif isinstance(replacement, dict) and "content" in replacement:
            content, changed = check.content(
                replacement.get("content"), "replacement.content", text_ok=True
            )
            if changed:
                out = {**out, "replacement": {**replacement, "content": content}}
    return out, check.faults
