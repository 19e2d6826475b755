"""JSON as pi reads and writes it.

* :func:`loads` decodes one JSON text fast (orjson), falling back to the standard library for
  what orjson refuses but JavaScript accepts (lone-surrogate escapes, integers past 64 bits).
* :func:`dumps` encodes compactly with non-ASCII characters unescaped, as ``JSON.stringify``
  does; used for writing session lines.
* :func:`js_stringify` is exact ``JSON.stringify`` text, including JavaScript number spelling
  and object key order. pi measures tool-call arguments with it, so token estimates and
  serialized transcripts depend on it byte for byte.
* :func:`utf16_len` is a JavaScript string length.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Final

import orjson

__all__ = ["JS_WHITESPACE", "dumps", "js_number", "js_stringify", "js_trim", "loads", "utf16_len"]


def _reject_constant(name: str) -> Any:
    raise ValueError(f"invalid JSON constant {name}")


def loads(data: bytes | str) -> Any:
    """Decode one JSON text; raises ``ValueError`` when it is not valid JSON."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        text = data.decode("utf-8", errors="replace") if isinstance(data, bytes) else data
        return json.loads(text, parse_constant=_reject_constant)


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


def js_stringify(value: Any) -> str:
    """Exactly ``JSON.stringify(value)`` for JSON-like Python values."""
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
    if isinstance(value, list | tuple):
        return "[" + ",".join(js_stringify(v) for v in value) + "]"
    if isinstance(value, dict):
        keys = list(value.keys())
        index_keys = [k for k in keys if _is_array_index(k)]
        if index_keys:
            index_keys.sort(key=int)
            keys = index_keys + [k for k in keys if not _is_array_index(k)]
        return "{" + ",".join(_js_string(k) + ":" + js_stringify(value[k]) for k in keys) + "}"
    raise TypeError(f"not JSON-serializable: {type(value).__name__}")


JS_WHITESPACE: Final = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)
"""What JavaScript's ``String.prototype.trim`` removes (more than ``str.strip()`` does)."""


def js_trim(text: str) -> str:
    """JavaScript's ``text.trim()``."""
    return text.strip(JS_WHITESPACE)
