"""JSON as pi reads and writes it.

* :func:`loads` decodes one JSON text fast (orjson), falling back to the standard library for
  what orjson refuses but JavaScript accepts (lone-surrogate escapes, integers past 64 bits),
  and to a decoder without recursion for text nested deeper than either accepts (up to
  :data:`MAX_DEPTH` levels).
* :func:`dumps` encodes compactly with non-ASCII characters unescaped, as ``JSON.stringify``
  does; used for writing session lines.
* :func:`js_stringify` is exact ``JSON.stringify`` text, including JavaScript number spelling
  and object key order, at any depth (:func:`dumps` falls back to it past orjson's limits). pi measures tool-call arguments with it, so token estimates and
  serialized transcripts depend on it byte for byte.
* :func:`utf16_len` is a JavaScript string length.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from typing import Any, Final, cast

import orjson

__all__ = [
    "JS_WHITESPACE",
    "MAX_DEPTH",
    "JSONDepthError",
    "dumps",
    "js_number",
    "js_stringify",
    "js_trim",
    "loads",
    "utf16_len",
]


MAX_DEPTH: Final = 10_000
"""The deepest nesting :func:`loads` accepts (objects and arrays inside each other).

pi writes lines as deep as JavaScript's ``JSON.stringify`` can spell them (tool-call arguments
are arbitrary JSON; V8 gives up somewhere below this depth), so every line pi can write loads.
orjson stops at 1,024 levels and the standard library at Python's recursion limit; deeper text
is decoded here without recursion. Past ``MAX_DEPTH`` :class:`JSONDepthError` is raised, so a
hostile line cannot make a reader build an unbounded structure that later code cannot walk.
"""


class JSONDepthError(ValueError):
    """The text nests objects and arrays deeper than the decoder's limit."""


def _reject_constant(name: str) -> Any:
    raise ValueError(f"invalid JSON constant {name}")


def loads(data: bytes | str, *, max_depth: int = MAX_DEPTH) -> Any:
    """Decode one JSON text; raises ``ValueError`` when it is not valid JSON
    (:class:`JSONDepthError` when it nests deeper than ``max_depth``)."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        text = data.decode("utf-8", errors="replace") if isinstance(data, bytes) else data
        try:
            return json.loads(text, parse_constant=_reject_constant)
        except RecursionError:
            return _loads_deep(text, max_depth)


_WHITESPACE = re.compile(r"[ \t\n\r]*")
# The standard library's (C) string scanner: typeshed does not declare it.
_scanstring = cast(Callable[[str, int], tuple[str, int]], vars(json.decoder)["scanstring"])
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_LITERALS: Final[dict[str, Any]] = {"true": True, "false": False, "null": None}


def _loads_deep(text: str, max_depth: int) -> Any:
    """Decode ``text`` with an explicit stack instead of recursion (any depth up to
    ``max_depth``); the same values ``json.loads`` gives."""
    whitespace = _WHITESPACE.match

    def skip(at: int) -> int:
        found = whitespace(text, at)
        return found.end() if found is not None else at

    # Open containers, innermost last; for an object, the key its next value goes to.
    stack: list[tuple[dict[str, Any] | list[Any], list[str]]] = []
    pos = skip(0)

    def fail(what: str) -> ValueError:
        return ValueError(f"{what} at char {pos}")

    def key_at(start: int) -> tuple[str, int]:
        start = skip(start)
        if text[start : start + 1] != '"':
            raise ValueError(f"expecting property name enclosed in double quotes at char {start}")
        key, end = _scanstring(text, start + 1)
        end = skip(end)
        if text[end : end + 1] != ":":
            raise ValueError(f"expecting ':' delimiter at char {end}")
        return key, skip(end + 1)

    while True:
        # -- one value starts at pos
        char = text[pos : pos + 1]
        value: Any
        if char in ("{", "["):
            if len(stack) >= max_depth:
                raise JSONDepthError(f"nested deeper than {max_depth} levels")
            after = skip(pos + 1)
            close = "}" if char == "{" else "]"
            if text[after : after + 1] == close:
                value = {} if char == "{" else []
                pos = after + 1
            elif char == "{":
                container: dict[str, Any] = {}
                key, pos = key_at(pos + 1)
                stack.append((container, [key]))
                continue
            else:
                stack.append(([], []))
                pos = after
                continue
        elif char == '"':
            value, pos = _scanstring(text, pos + 1)
        else:
            number = _NUMBER.match(text, pos)
            if number is not None:
                literal = number.group()
                if number.group(1) or number.group(2):
                    value = float(literal)
                else:
                    value = int(literal)
                    if not -(2**63) <= value < 2**64:
                        value = float(value)  # as orjson (and JavaScript) read it
                pos = number.end()
            else:
                for word, constant in _LITERALS.items():
                    if text.startswith(word, pos):
                        value = constant
                        pos += len(word)
                        break
                else:
                    raise fail("expecting value")
        # -- the value is complete: put it into its container, closing finished ones
        while True:
            pos = skip(pos)
            if not stack:
                if pos != len(text):
                    raise fail("extra data")
                return value
            top, pending = stack[-1]
            if isinstance(top, dict):
                top[pending[0]] = value
                separator = text[pos : pos + 1]
                if separator == ",":
                    pending[0], pos = key_at(pos + 1)
                    break
                if separator != "}":
                    raise fail("expecting ',' delimiter")
            else:
                top.append(value)
                separator = text[pos : pos + 1]
                if separator == ",":
                    pos = skip(pos + 1)
                    break
                if separator != "]":
                    raise fail("expecting ',' delimiter")
            stack.pop()
            value = top
            pos += 1


def dumps(value: Any) -> bytes:
    """Compact JSON bytes, non-ASCII unescaped (a session line, without its newline)."""
    try:
        return orjson.dumps(value)
    except (TypeError, orjson.JSONEncodeError):
        # Lone surrogates or integers beyond 64 bits: the exact JavaScript spelling is right.
        return js_stringify(value).encode("utf-8", errors="surrogatepass")


def utf16_len(text: str) -> int:
    """Length of ``text`` in UTF-16 code units (JavaScript's ``String.prototype.length``)."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


_ARRAY_INDEX = re.compile(r"^(?:0|[1-9][0-9]{0,9})$")
_MAX_ARRAY_INDEX = 2**32 - 2
_SURROGATE = re.compile("[\ud800-\udfff]")


def _is_array_index(key: str) -> bool:
    return bool(_ARRAY_INDEX.match(key)) and int(key) <= _MAX_ARRAY_INDEX


def js_number(value: float | int) -> str:
    """``String(value)`` for a JavaScript number (integers are doubles in JavaScript)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        if -(2**53) <= value <= 2**53:
            return str(value)
        value = float(value)
    if math.isnan(value) or math.isinf(value):
        return "null"
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    mantissa, _, exp_text = repr(abs(value)).partition("e")
    exponent = int(exp_text) if exp_text else 0
    int_part, _, frac_part = mantissa.partition(".")
    if frac_part == "0":
        frac_part = ""
    digits = (int_part + frac_part).lstrip("0")
    # position of the decimal point relative to the start of ``digits`` (JavaScript's n)
    if int_part == "0":
        point = exponent - (len(frac_part) - len(frac_part.lstrip("0")))
    else:
        point = len(int_part) + exponent
    digits = digits.rstrip("0") or "0"
    k = len(digits)
    if k <= point <= 21:
        return sign + digits + "0" * (point - k)
    if 0 < point <= 21:
        return sign + digits[:point] + "." + digits[point:]
    if -6 < point <= 0:
        return sign + "0." + "0" * (-point) + digits
    exp = point - 1
    exp_str = f"e+{exp}" if exp >= 0 else f"e-{-exp}"
    if k == 1:
        return sign + digits + exp_str
    return sign + digits[0] + "." + digits[1:] + exp_str


def _js_string(text: str) -> str:
    try:
        return orjson.dumps(text).decode("utf-8")
    except orjson.JSONEncodeError:
        # Lone surrogates: JSON.stringify escapes them as \udXXX.
        parts = _SURROGATE.split(text)
        found = _SURROGATE.findall(text)
        out = [orjson.dumps(parts[0]).decode("utf-8")[:-1]]
        for surrogate, rest in zip(found, parts[1:], strict=True):
            out.append(f"\\u{ord(surrogate):04x}")
            out.append(orjson.dumps(rest).decode("utf-8")[1:-1])
        out.append('"')
        return "".join(out)


def _js_scalar(value: Any) -> str | None:
    """The spelling of a non-container value, ``None`` for a list or an object."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return _js_string(value)
    if isinstance(value, int | float):
        return js_number(value)
    if isinstance(value, list | tuple | dict):
        return None
    raise TypeError(f"not JSON-serializable: {type(value).__name__}")


def _js_keys(value: dict[str, Any]) -> list[str]:
    keys = list(value.keys())
    index_keys = [k for k in keys if _is_array_index(k)]
    if index_keys:
        index_keys.sort(key=int)
        keys = index_keys + [k for k in keys if not _is_array_index(k)]
    return keys


_SAFE_INTEGER: Final = 2**53


def _spelled_alike(value: Any) -> bool | None:
    """Whether orjson spells ``value`` exactly as ``JSON.stringify`` does: plain dicts (string
    keys that are not array indices, which JavaScript puts first), lists, tuples, strings,
    booleans, ``None``, integers a double holds exactly, and non-integral floats from 1e-4 to
    1e15, which both write in plain decimal notation with the shortest digits (outside that
    range, or for an integral float, the notations differ). A lone surrogate is found by orjson
    itself, which refuses it.

    ``None`` means "alike but for some numbers": every container and key is plain, and only
    numbers (a cost of ``3e-05``, a float ``1.0``) need JavaScript's spelling, which
    :func:`_with_js_numbers` puts in (orjson still writes the rest).
    """
    stack = [value]
    pop, push, extend = stack.pop, stack.append, stack.extend
    alike: bool | None = True
    while stack:
        item = pop()
        kind = type(item)
        if kind is str or kind is bool or item is None:
            continue
        if kind is int:
            if not -_SAFE_INTEGER <= item <= _SAFE_INTEGER:
                alike = None
            continue
        if kind is float:
            size = abs(item)
            if not (1e-4 <= size < 1e15 and not item.is_integer()):
                alike = None
            continue
        if kind is dict:
            for key, child in item.items():
                if type(key) is not str or (key[:1].isdigit() and _is_array_index(key)):
                    return False
                push(child)
            continue
        if kind is list or kind is tuple:
            extend(item)
            continue
        return False
    return alike


def _with_js_numbers(value: Any) -> Any:
    """``value`` rebuilt with every number as an orjson fragment of its JavaScript spelling
    (:func:`_spelled_alike` found only numbers to differ); raises :class:`RecursionError` on a
    value nested too deep to rebuild this way."""
    kind = type(value)
    if kind is float or kind is int:
        return orjson.Fragment(js_number(value))
    if kind is dict:
        return {key: _with_js_numbers(child) for key, child in value.items()}
    if kind is list or kind is tuple:
        return [_with_js_numbers(child) for child in value]
    return value


def js_stringify(value: Any) -> str:
    """Exactly ``JSON.stringify(value)`` for JSON-like Python values, at any nesting depth.

    Values orjson spells the same way (nearly all: see :func:`_spelled_alike`) are written by
    orjson, numbers it spells differently put in as fragments of their JavaScript spelling;
    the rest by an iterative walk (an explicit stack, not recursion), so a value nested
    deeper than Python's recursion limit is spelled like any other.
    """
    alike = _spelled_alike(value)
    if alike is not False:
        try:
            ready = _with_js_numbers(value) if alike is None else value
            return orjson.dumps(ready).decode("utf-8")
        except (TypeError, RecursionError, orjson.JSONEncodeError):
            pass  # a lone surrogate, or nested deeper than orjson writes
    return _stringify_walk(value)


def _stringify_walk(value: Any) -> str:
    """:func:`js_stringify` by walking the value (every value it accepts)."""
    scalar = _js_scalar(value)
    if scalar is not None:
        return scalar
    out: list[str] = []
    # Each frame: (container, its keys or None for a list, next position).
    stack: list[tuple[Any, list[str] | None, list[int]]] = []

    def enter(container: Any) -> None:
        if isinstance(container, dict):
            out.append("{")
            stack.append((container, _js_keys(container), [0]))
        else:
            out.append("[")
            stack.append((container, None, [0]))

    enter(value)
    while stack:
        container, keys, position = stack[-1]
        index = position[0]
        size = len(keys) if keys is not None else len(container)
        if index >= size:
            out.append("}" if keys is not None else "]")
            stack.pop()
            continue
        position[0] = index + 1
        if index:
            out.append(",")
        if keys is not None:
            key = keys[index]
            out.append(_js_string(key) + ":")
            item = container[key]
        else:
            item = container[index]
        scalar = _js_scalar(item)
        if scalar is not None:
            out.append(scalar)
        else:
            enter(item)
    return "".join(out)


JS_WHITESPACE: Final = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)
"""What JavaScript's ``String.prototype.trim`` removes (more than ``str.strip()`` does)."""


def js_trim(text: str) -> str:
    """JavaScript's ``text.trim()``."""
    return text.strip(JS_WHITESPACE)
