"""The ``edit`` tool: exact, unique text replacements in one file.

Every ``oldText`` is matched against the original file (not against the result of earlier
edits), must occur exactly once, and must not overlap another edit. When some ``oldText`` is
not found verbatim, all of them are matched in a *fuzzy* copy of the file (NFKC, trailing
blanks dropped, typographic quotes/dashes/spaces made plain); the lines such an edit touches
are then rewritten from that copy. Uniqueness is always judged on the fuzzy copy, so text that
differs only in trailing blanks counts as a duplicate, and occurrences that overlap count each
(pi counts only disjoint ones, so ``"}\n}\n"`` in ``"}\n}\n}\n"`` passed as unique there).

The file's BOM and line endings survive: CRLF (or CR) files get the replacement spliced into the
original bytes, with new line breaks in the ending of the line where the replacement starts.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import itertools
import json
import os
import re
import unicodedata
from bisect import bisect_right
from pathlib import Path
from typing import Any, Final, Literal

from msgspec import Struct

from pi_context._keywords import keyword_checked
from pi_context.errors import ToolError
from pi_context.tools.base import (
    ABORTED_TEXT,
    CONSTRAINED_SAMPLING,
    ContextTool,
    PathLocks,
    ToolContext,
    ToolOutcome,
    error_outcome,
    resolve_path,
    text_outcome,
    utf8_bytes,
    without_surrogates,
)
from pi_context.tools.edit_diff import edit_details
from pi_context.tools.file_access import (
    link_escape,
    link_escape_message,
    open_regular,
    refuse_nul,
    write_regular,
)
from pi_context.tools.truncate import format_size

__all__ = [
    "MAX_EDIT_BYTES",
    "EditTool",
    "Span",
    "apply_edits",
    "count_occurrences",
    "fuzzy_normalize",
    "splice",
    "splice_original",
]

MAX_EDIT_BYTES: Final = 32 * 1024 * 1024
"""The largest file ``edit`` loads (32 MiB): matching holds several copies of it in memory."""

_FUZZY_TABLE: Final = str.maketrans(
    {
        **dict.fromkeys("‘’‚‛", "'"),
        **dict.fromkeys("“”„‟", '"'),
        **dict.fromkeys("‐‑‒–—―−", "-"),
        **dict.fromkeys(
            "\xa0\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000", " "
        ),
    }
)


def fuzzy_normalize(text: str) -> str:
    """The fuzzy form used for matching: NFKC, no trailing blanks per line, plain punctuation."""
    text = unicodedata.normalize("NFKC", text)
    text = "\n".join(line.rstrip() for line in text.split("\n"))
    return text.translate(_FUZZY_TABLE)


def count_occurrences(text: str, needle: str) -> int:
    """How often ``needle`` occurs in ``text``, overlapping occurrences included.

    Where disjoint occurrences already make it ambiguous this is ``str.count`` (the number pi
    reports); only a needle found once that way is checked for overlapping occurrences.
    """
    disjoint = text.count(needle)
    if disjoint != 1:
        return disjoint
    first = text.find(needle)
    if text.find(needle, first + 1) < 0:
        return 1
    # Every occurrence starts within len(needle) of the first, or a second disjoint one exists.
    window = text[first : first + 2 * len(needle) - 1]
    return _count_overlapping(window, needle)


def _count_overlapping(text: str, needle: str) -> int:
    """Knuth-Morris-Pratt count of ``needle`` in ``text`` (linear, unlike repeated ``find``)."""
    fail = [0] * len(needle)
    k = 0
    for i in range(1, len(needle)):
        while k and needle[i] != needle[k]:
            k = fail[k - 1]
        if needle[i] == needle[k]:
            k += 1
        fail[i] = k
    count = k = 0
    for ch in text:
        while k and ch != needle[k]:
            k = fail[k - 1]
        if ch == needle[k]:
            k += 1
        if k == len(needle):
            count += 1
            k = fail[k - 1]
    return count


def _lf(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


class _Match(Struct, frozen=True):
    index: int
    start: int
    end: int
    new_text: str


_ErrorKind = Literal["empty", "not_found", "not_unique"]


def _edit_error(kind: _ErrorKind, path: str, single: bool, i: int, n: int = 0) -> ToolError:
    """pi's message for a bad edit: worded for the only edit, or naming ``edits[i]``."""
    if kind == "empty":
        what = "oldText" if single else f"edits[{i}].oldText"
        return ToolError(f"{what} must not be empty in {path}.")
    if kind == "not_found":
        what = "the exact text" if single else f"edits[{i}]"
        noun = "old text" if single else "oldText"
        return ToolError(
            f"Could not find {what} in {path}. "
            f"The {noun} must match exactly including all whitespace and newlines."
        )
    what, rule = ("the text", "The text") if single else (f"edits[{i}]", "Each oldText")
    return ToolError(
        f"Found {n} occurrences of {what} in {path}. {rule} must be unique. "
        "Please provide more context to make it unique."
    )


def apply_edits(content: str, edits: list[tuple[str, str]], path: str) -> list[Span]:
    """Plan ``(oldText, newText)`` pairs on LF-normalized ``content`` as sorted disjoint spans;
    raise :class:`ToolError` with pi's wording when an edit is empty, missing, ambiguous,
    overlapping or a no-op."""
    single = len(edits) == 1
    pairs = [(_lf(old), _lf(new)) for old, new in edits]
    for i, (old, _new) in enumerate(pairs):
        if not old:
            raise _edit_error("empty", path, single, i)
    fuzzy_content = fuzzy_normalize(content)
    fuzzy_mode = any(old not in content for old, _ in pairs)
    haystack = fuzzy_content if fuzzy_mode else content
    matches: list[_Match] = []
    for i, (old, new) in enumerate(pairs):
        fuzzy_old = fuzzy_normalize(old)
        needle = fuzzy_old if fuzzy_mode else old
        start = haystack.find(needle)
        if start < 0:
            raise _edit_error("not_found", path, single, i)
        occurrences = count_occurrences(fuzzy_content, fuzzy_old)
        if occurrences > 1:
            raise _edit_error("not_unique", path, single, i, occurrences)
        matches.append(_Match(i, start, start + len(needle), new))
    matches.sort(key=lambda m: m.start)
    for prev, cur in itertools.pairwise(matches):
        if cur.start < prev.end:
            a, b = prev.index, cur.index
            raise ToolError(
                f"edits[{a}] and edits[{b}] overlap in {path}. Merge them into one edit or target disjoint regions."
            )
    spans = (
        _fuzzy_spans(content, fuzzy_content, matches)
        if fuzzy_mode
        else [(m.start, m.end, m.new_text) for m in matches]
    )
    if splice(content, spans) == content:
        if single:
            raise ToolError(
                f"No changes made to {path}. The replacement produced identical content. This might indicate an issue with special characters or the text not existing as expected."
            )
        raise ToolError(f"No changes made to {path}. The replacements produced identical content.")
    return spans


Span = tuple[int, int, str]
"""``(start, end, replacement)`` in the LF-normalized text."""


def splice(text: str, spans: list[Span]) -> str:
    """``text`` with each sorted, disjoint span replaced."""
    out: list[str] = []
    pos = 0
    for start, end, replacement in spans:
        out.append(text[pos:start])
        out.append(replacement)
        pos = end
    out.append(text[pos:])
    return "".join(out)


def _line_starts(text: str) -> list[int]:
    starts = [0]
    starts.extend(m.end() for m in re.finditer("\n", text))
    return starts


def _fuzzy_spans(content: str, fuzzy: str, matches: list[_Match]) -> list[Span]:
    """Spans covering the whole lines the matches touch, rewritten from the fuzzy copy."""
    f_starts, c_starts = _line_starts(fuzzy), _line_starts(content)
    if len(f_starts) != len(c_starts):  # normalization never adds or removes line breaks
        raise ToolError("internal error: fuzzy normalization changed the line count")

    def span_end(starts: list[int], text: str, line: int) -> int:
        return starts[line + 1] if line + 1 < len(starts) else len(text)

    # Group matches whose touched line ranges meet, so each group is rewritten once.
    groups: list[tuple[int, int, list[_Match]]] = []
    for m in matches:
        first = bisect_right(f_starts, m.start) - 1
        last = bisect_right(f_starts, m.end - 1) - 1
        if groups and first <= groups[-1][1]:
            g_first, g_last, members = groups[-1]
            groups[-1] = (g_first, max(g_last, last), [*members, m])
        else:
            groups.append((first, last, [m]))
    spans: list[Span] = []
    for first, last, members in groups:
        parts: list[str] = []
        f_pos = f_starts[first]
        for m in members:
            parts.append(fuzzy[f_pos : m.start])
            parts.append(m.new_text)
            f_pos = m.end
        parts.append(fuzzy[f_pos : span_end(f_starts, fuzzy, last)])
        spans.append((c_starts[first], span_end(c_starts, content, last), "".join(parts)))
    return spans


def splice_original(original: str, spans: list[Span]) -> str:
    """Apply spans computed on the LF-normalized form of ``original`` to ``original`` itself.

    Untouched bytes (CRLF or CR endings included) stay; line breaks inside a replacement take
    the ending of the line where that replacement starts.
    """
    if "\r" not in original:
        return splice(original, spans)
    orig_pos: list[int] = []
    i = 0
    while i < len(original):
        orig_pos.append(i)
        i += 2 if original.startswith("\r\n", i) else 1
    orig_pos.append(len(original))
    mapped: list[Span] = []
    for start, end, replacement in spans:
        o_start = orig_pos[start]
        line_break = _line_ending_at(original, o_start)
        mapped.append((o_start, orig_pos[end], replacement.replace("\n", line_break)))
    return splice(original, mapped)


def _line_ending_at(original: str, pos: int) -> str:
    for i in range(pos, len(original)):
        ch = original[i]
        if ch == "\r":
            return "\r\n" if original.startswith("\r\n", i) else "\r"
        if ch == "\n":
            return "\n"
    return "\r\n" if "\r\n" in original else ("\r" if "\r" in original else "\n")


def _plan(path: Path, raw_path: str, edits: list[tuple[str, str]]) -> tuple[bytes, str, str]:
    """The bytes to write, and the LF-normalized text before and after (for the diff)."""
    original = _read_original(path, raw_path)
    bom = original.startswith("\ufeff")
    body = original[1:] if bom else original
    normalized = _lf(body)
    spans = apply_edits(normalized, edits, raw_path)
    edited = splice(normalized, spans)
    written = splice_original(body, spans)
    data = _encode(("\ufeff" if bom else "") + written)
    return data, without_surrogates(normalized), without_surrogates(edited)


def _read_original(path: Path, raw_path: str) -> str:
    """The file's text; undecodable bytes survive the round trip (``surrogateescape``)."""

    def failed(code: str) -> ToolError:
        return ToolError(f"Could not edit file: {raw_path}. Error code: {code}.")

    if not path.exists():
        raise failed("ENOENT")
    if path.is_dir():
        raise failed("EISDIR")
    if not os.access(path, os.R_OK | os.W_OK):
        raise failed("EACCES")
    try:
        fd = open_regular(path, os.O_RDONLY, action="edit", shown=raw_path)
    except IsADirectoryError as exc:
        raise failed("EISDIR") from exc
    except OSError as exc:
        raise failed(errno.errorcode.get(exc.errno or 0, "EIO")) from exc
    with os.fdopen(fd, "rb") as file:
        size = os.fstat(fd).st_size
        data = file.read(MAX_EDIT_BYTES + 1) if size <= MAX_EDIT_BYTES else b""
    if size > MAX_EDIT_BYTES or len(data) > MAX_EDIT_BYTES:
        raise ToolError(
            f"Could not edit file: {raw_path}. It is {format_size(max(size, len(data)))}; edit "
            f"loads files up to {format_size(MAX_EDIT_BYTES)}, so change it with bash instead."
        )
    return data.decode("utf-8", "surrogateescape")


def _encode(text: str) -> bytes:
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a lone surrogate from the model: write U+FFFD like Node
        return utf8_bytes(text)


@keyword_checked
class EditTool(ContextTool):
    """Replace exact, unique snippets of one file; several disjoint edits per call."""

    name = "edit"
    description = (
        "Edit one file by exact text replacement. Each entry of edits replaces one oldText with "
        "its newText. Every oldText must appear exactly once in the original file and must not "
        "overlap another entry; all entries are matched against the original, not against each "
        "other's results. Merge changes that sit close together into one entry."
    )
    parameters: dict[str, Any] = {  # noqa: RUF012 - class-level schema, never mutated
        "type": "object",
        "required": ["path", "edits"],
        "properties": {
            "path": {
                "type": "string",
                "description": "File to edit, relative to the cwd or absolute",
            },
            "edits": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["oldText", "newText"],
                    "properties": {
                        "oldText": {
                            "type": "string",
                            "description": "Exact text to replace; unique in the file",
                        },
                        "newText": {
                            "type": "string",
                            "description": "The text to put in its place",
                        },
                    },
                },
                "description": "One or more disjoint replacements in this file",
            },
        },
    }
    prompt_snippet = "Change a file by exact-text replacements (several disjoint ones per call)"
    prompt_guidelines = (
        "Batch all edits to one file into a single edit call; keep each oldText short, exact "
        "and unique.",
    )
    constrained_sampling = CONSTRAINED_SAMPLING

    def __init__(self, *, locks: PathLocks | None = None) -> None:
        self.locks = locks if locks is not None else PathLocks()

    def prepare_arguments(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """Accept ``edits`` as a JSON string or a single object, and legacy top-level
        ``oldText``/``newText``; refuse a call with no edit at all."""
        edits = arguments.get("edits")
        if isinstance(edits, str):
            with contextlib.suppress(ValueError):
                edits = json.loads(edits)
        if isinstance(edits, dict):
            edits = [edits]
        old, new = arguments.get("oldText"), arguments.get("newText")
        if isinstance(old, str) and isinstance(new, str):
            edits = [*(edits if isinstance(edits, list) else []), {"oldText": old, "newText": new}]
            arguments = {k: v for k, v in arguments.items() if k not in ("oldText", "newText")}
        if edits is None or edits == []:
            raise ToolError(
                "Edit tool input is invalid. edits must contain at least one replacement."
            )
        return {**arguments, "edits": edits}

    async def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        raw_path: str = arguments["path"]
        path = resolve_path(raw_path, ctx.cwd)
        edits = [(e["oldText"], e["newText"]) for e in arguments["edits"]]
        async with self.locks.lock(path):
            if ctx.aborted:
                return error_outcome(ABORTED_TEXT)
            refuse_nul(path, "edit", raw_path)
            target = link_escape(path, ctx.cwd)
            if target is not None:
                raise ToolError(link_escape_message("edit", raw_path, target))
            # Loading, matching and the diff run in a worker thread so that a large file does
            # not stall the event loop; a cancelled call writes nothing.
            data, before, after = await asyncio.to_thread(_plan, path, raw_path, edits)
            write_regular(path, data, action="edit", shown=raw_path)
        details = await asyncio.to_thread(edit_details, raw_path, before, after)
        return text_outcome(
            f"Successfully replaced {len(edits)} block(s) in {raw_path}.", details=details
        )
