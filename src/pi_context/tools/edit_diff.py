"""Diffs for the ``edit`` tool's result details: a numbered display diff and a unified patch.

Both compare the file before and after the edit (line endings normalized, BOM removed) with
four lines of context. The line matching is :mod:`difflib`'s, so on ambiguous inputs the
hunks can be aligned differently from pi's (``diff`` npm package); the content is the same.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import Final

from pi_context.tools.truncate import split_lines

__all__ = ["CONTEXT_LINES", "display_diff", "first_changed_line", "unified_patch"]

CONTEXT_LINES: Final = 4


def _opcodes(old: list[str], new: list[str]) -> Sequence[tuple[str, int, int, int, int]]:
    return difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes()


def display_diff(old_text: str, new_text: str) -> str:
    """Changed lines as ``-<old no> text`` / ``+<new no> text`` with numbered context lines.

    Context runs longer than the context window are elided to one ``...`` line.
    """
    old, new = split_lines(old_text), split_lines(new_text)
    width = len(str(max(len(old_text.split("\n")), len(new_text.split("\n")))))
    skip = " " + " " * width + " ..."
    out: list[str] = []
    ops = _opcodes(old, new)
    for k, (tag, i1, i2, j1, j2) in enumerate(ops):
        if tag == "equal":
            numbered = [f" {str(i + 1).rjust(width)} {old[i]}" for i in range(i1, i2)]
            first, last = k == 0, k == len(ops) - 1
            n = CONTEXT_LINES
            if first and last:
                continue
            if first:
                out.extend(([skip] if len(numbered) > n else []) + numbered[-n:])
            elif last:
                out.extend(numbered[:n] + ([skip] if len(numbered) > n else []))
            elif len(numbered) > 2 * n:
                out.extend([*numbered[:n], skip, *numbered[-n:]])
            else:
                out.extend(numbered)
            continue
        out.extend(f"-{str(i + 1).rjust(width)} {old[i]}" for i in range(i1, i2))
        out.extend(f"+{str(j + 1).rjust(width)} {new[j]}" for j in range(j1, j2))
    return "\n".join(out)


def first_changed_line(old_text: str, new_text: str) -> int | None:
    """The 1-based line of the new text where the first change is, or ``None`` if equal."""
    for tag, _i1, _i2, j1, _j2 in _opcodes(split_lines(old_text), split_lines(new_text)):
        if tag != "equal":
            return j1 + 1
    return None


def unified_patch(path: str, old_text: str, new_text: str) -> str:
    """A unified diff with ``--- path`` / ``+++ path`` headers and 4 lines of context."""
    old, new = _keep_ends(old_text), _keep_ends(new_text)
    out = [f"--- {path}", f"+++ {path}"]
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for group in matcher.get_grouped_opcodes(CONTEXT_LINES):
        i1, i2 = group[0][1], group[-1][2]
        j1, j2 = group[0][3], group[-1][4]
        old_start = i1 + 1 if i2 > i1 else i1
        new_start = j1 + 1 if j2 > j1 else j1
        out.append(f"@@ -{old_start},{i2 - i1} +{new_start},{j2 - j1} @@")
        for tag, a1, a2, b1, b2 in group:
            if tag == "equal":
                out.extend(_patch_line(" ", line) for line in old[a1:a2])
                continue
            out.extend(_patch_line("-", line) for line in old[a1:a2])
            out.extend(_patch_line("+", line) for line in new[b1:b2])
    return "\n".join(out) + "\n"


def _keep_ends(text: str) -> list[str]:
    """Lines with their ``\n`` kept (only ``\n`` separates lines here)."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def _patch_line(mark: str, line: str) -> str:
    if line.endswith("\n"):
        return mark + line[:-1]
    return f"{mark}{line}\n\\ No newline at end of file"
