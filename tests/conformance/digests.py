"""The two digest forms the goldens use instead of inline values (see the conformance README).

* **row digest** ``{sha256, n[, head, tail]}``: sha256 of ``JSON.stringify(rows)`` as UTF-8;
  replaces a list of rows when it is long (``rows``/``digest`` detail levels).
* **text digest** ``{length, utf8Bytes, sha256[, head, tail]}``: ``length`` in UTF-16 code
  units, sha256 of the UTF-8 text with lone surrogates as U+FFFD; replaces a text beyond ``full``.

A golden value is compared in whichever form it comes: inline values for equality, digests by
hashing ours. A value in neither form never matches (the runner fails on what it cannot read).
"""

from __future__ import annotations

import hashlib
from typing import Any

from pi_context._json import js_stringify, utf16_len

__all__ = [
    "is_row_digest",
    "is_text_digest",
    "rows_digest",
    "rows_sha256",
    "same_rows",
    "text_matches",
    "well_formed",
]


def well_formed(text: str) -> str:
    """Lone surrogates as U+FFFD, as Node encodes a JavaScript string to UTF-8."""
    return text.encode("utf-16-le", errors="surrogatepass").decode("utf-16-le", errors="replace")


def rows_sha256(rows: list[Any]) -> str:
    """sha256 of ``JSON.stringify(rows)`` (how pi's harness digests a row list)."""
    return hashlib.sha256(js_stringify(rows).encode("utf-8")).hexdigest()


def rows_digest(rows: list[Any], *, head: int = 0, tail: int = 0) -> dict[str, Any]:
    """The row digest of ``rows``, with the first ``head`` and last ``tail`` rows inlined."""
    out: dict[str, Any] = {"sha256": rows_sha256(rows), "n": len(rows)}
    if head:
        out["head"] = rows[:head]
    if tail:
        out["tail"] = rows[-tail:]
    return out


def is_row_digest(value: Any) -> bool:
    return isinstance(value, dict) and "sha256" in value and "n" in value


def is_text_digest(value: Any) -> bool:
    return isinstance(value, dict) and "sha256" in value and "length" in value


def same_rows(expected: Any, ours: list[Any]) -> bool:
    """A golden row list, or its row digest, equals ``ours``."""
    if isinstance(expected, list):
        return expected == ours
    if not is_row_digest(expected):
        return False
    if expected["n"] != len(ours) or expected["sha256"] != rows_sha256(ours):
        return False
    head = expected.get("head")
    if head is not None and head != ours[: len(head)]:
        return False
    tail = expected.get("tail")
    return tail is None or not tail or tail == ours[-len(tail) :]


def text_matches(expected: Any, text: str) -> bool:
    """A golden text (the full string, or a text digest) equals ``text``."""
    if isinstance(expected, str):
        return expected == text
    if not is_text_digest(expected):
        return False
    digest = hashlib.sha256(well_formed(text).encode("utf-8")).hexdigest()
    return bool(expected["length"] == utf16_len(text) and expected["sha256"] == digest)
