"""Diffs for the ``edit`` tool's result details: a numbered display diff and a unified patch.

Both compare the file before and after the edit (line endings normalized, BOM removed) with
four lines of context. Lines the two texts share at the start and at the end are matched
first, in linear time; what lies between is aligned with Myers' O(ND) algorithm (as pi's
``diff`` package does), which is fast when the edits change few lines however large the file.
Its work is bounded: past :data:`_MAX_DIFF_STEPS` steps the middle is shown as one
replacement rather than stalling the edit (difflib's exact matcher took minutes on a file
with a few thousand repeated lines such as blank lines or closing braces). On ambiguous inputs
the hunks can be aligned differently from pi's; the content is the same.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from pi_context.tools.truncate import split_lines

__all__ = ["CONTEXT_LINES", "display_diff", "edit_details", "first_changed_line", "unified_patch"]

CONTEXT_LINES: Final = 4
_MAX_DIFF_STEPS: Final = 2_000_000
"""Work bound of the line alignment (comparisons); beyond it the changed middle is one block."""

_Opcode = tuple[str, int, int, int, int]


def _opcodes(old: Sequence[str], new: Sequence[str]) -> list[_Opcode]:
    """Opcodes as ``difflib`` spells them (``equal``/``replace``/``delete``/``insert``)."""
    shortest = min(len(old), len(new))
    head = 0
    while head < shortest and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < shortest - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    codes: list[_Opcode] = [("equal", 0, head, 0, head)] if head else []
    mid_old, mid_new = old[head : len(old) - tail], new[head : len(new) - tail]
    if mid_old or mid_new:
        middle = _myers(mid_old, mid_new, _MAX_DIFF_STEPS)
        if middle is None:
            middle = [_change(0, len(mid_old), 0, len(mid_new))]
        codes.extend(
            (tag, i1 + head, i2 + head, j1 + head, j2 + head) for tag, i1, i2, j1, j2 in middle
        )
    if tail:
        codes.append(("equal", len(old) - tail, len(old), len(new) - tail, len(new)))
    return codes


def _change(i1: int, i2: int, j1: int, j2: int) -> _Opcode:
    tag = "replace" if i2 > i1 and j2 > j1 else ("delete" if i2 > i1 else "insert")
    return (tag, i1, i2, j1, j2)


def _myers(a: Sequence[str], b: Sequence[str], budget: int) -> list[_Opcode] | None:
    """A shortest edit script from ``a`` to ``b`` as opcodes; ``None`` past ``budget`` steps."""
    n, m = len(a), len(b)
    v: dict[int, int] = {1: 0}
    trace: list[dict[int, int]] = []
    steps = 0
    for d in range(n + m + 1):
        trace.append(dict(v))
        for k in range(-d, d + 1, 2):
            x = v[k + 1] if k == -d or (k != d and v[k - 1] < v[k + 1]) else v[k - 1] + 1
            y = x - k
            start = x
            while x < n and y < m and a[x] == b[y]:
                x += 1
                y += 1
            steps += 1 + x - start
            v[k] = x
            if x >= n and y >= m:
                return _script(trace, n, m)
        if steps > budget:
            return None
    return None  # pragma: no cover - d = n + m always reaches the end


def _script(trace: list[dict[int, int]], n: int, m: int) -> list[_Opcode]:
    """Walk Myers' trace back from ``(n, m)`` and group the moves into opcodes."""
    moves: list[tuple[str, int, int]] = []  # (kind, x, y) at the move's start, backwards
    x, y = n, m
    for d in range(len(trace) - 1, -1, -1):
        v = trace[d]
        k = x - y
        prev_k = k + 1 if k == -d or (k != d and v[k - 1] < v[k + 1]) else k - 1
        prev_x = v[prev_k]
        prev_y = prev_x - prev_k
        while x > prev_x and y > prev_y:
            x, y = x - 1, y - 1
            moves.append(("equal", x, y))
        if d > 0:
            moves.append(("insert" if x == prev_x else "delete", prev_x, prev_y))
        x, y = prev_x, prev_y
    moves.reverse()
    codes: list[_Opcode] = []
    i = j = 0
    run_i = run_j = 0  # where the current run of changes started
    for kind, mx, my in moves:
        if kind == "equal":
            if (i, j) != (run_i, run_j):
                codes.append(_change(run_i, i, run_j, j))
            if codes and codes[-1][0] == "equal":
                tag, i1, _i2, j1, _j2 = codes[-1]
                codes[-1] = (tag, i1, mx + 1, j1, my + 1)
            else:
                codes.append(("equal", mx, mx + 1, my, my + 1))
            i, j = mx + 1, my + 1
            run_i, run_j = i, j
        elif kind == "delete":
            i = mx + 1
        else:
            j = my + 1
    if (i, j) != (run_i, run_j):
        codes.append(_change(run_i, i, run_j, j))
    return codes


def _grouped(codes: list[_Opcode], n: int) -> list[list[_Opcode]]:
    """Hunks: changes with up to ``n`` lines of context (as ``get_grouped_opcodes`` makes them)."""
    if not codes:
        codes = [("equal", 0, 1, 0, 1)]
    codes = list(codes)
    if codes[0][0] == "equal":
        tag, i1, i2, j1, j2 = codes[0]
        codes[0] = tag, max(i1, i2 - n), i2, max(j1, j2 - n), j2
    if codes[-1][0] == "equal":
        tag, i1, i2, j1, j2 = codes[-1]
        codes[-1] = tag, i1, min(i2, i1 + n), j1, min(j2, j1 + n)
    groups: list[list[_Opcode]] = []
    group: list[_Opcode] = []
    for tag, i1, i2, j1, j2 in codes:
        if tag == "equal" and i2 - i1 > 2 * n:
            group.append((tag, i1, min(i2, i1 + n), j1, min(j2, j1 + n)))
            groups.append(group)
            group = []
            i1, j1 = max(i1, i2 - n), max(j1, j2 - n)
        group.append((tag, i1, i2, j1, j2))
    if group and not (len(group) == 1 and group[0][0] == "equal"):
        groups.append(group)
    return groups


def display_diff(old_text: str, new_text: str) -> str:
    """Changed lines as ``-<old no> text`` / ``+<new no> text`` with numbered context lines.

    Context runs longer than the context window are elided to one ``...`` line.
    """
    return _display(old_text, new_text, split_lines(old_text), split_lines(new_text))


def _display(old_text: str, new_text: str, old: list[str], new: list[str]) -> str:
    width = len(str(max(old_text.count("\n"), new_text.count("\n")) + 1))
    skip = " " + " " * width + " ..."
    out: list[str] = []
    ops = _opcodes(old, new)
    n = CONTEXT_LINES

    def numbered(start: int, stop: int) -> list[str]:
        return [f" {str(i + 1).rjust(width)} {old[i]}" for i in range(start, stop)]

    for k, (tag, i1, i2, j1, j2) in enumerate(ops):
        if tag == "equal":
            first, last = k == 0, k == len(ops) - 1
            long = i2 - i1 > n
            if first and last:
                continue
            if first:
                out.extend(([skip] if long else []) + numbered(max(i1, i2 - n), i2))
            elif last:
                out.extend(numbered(i1, min(i2, i1 + n)) + ([skip] if long else []))
            elif i2 - i1 > 2 * n:
                out.extend([*numbered(i1, i1 + n), skip, *numbered(i2 - n, i2)])
            else:
                out.extend(numbered(i1, i2))
            continue
        out.extend(f"-{str(i + 1).rjust(width)} {old[i]}" for i in range(i1, i2))
        out.extend(f"+{str(j + 1).rjust(width)} {new[j]}" for j in range(j1, j2))
    return "\n".join(out)


def first_changed_line(old_text: str, new_text: str) -> int | None:
    """The 1-based line of the new text where the first change is, or ``None`` if equal."""
    return _first_changed(split_lines(old_text), split_lines(new_text))


def _first_changed(old: list[str], new: list[str]) -> int | None:
    # The shared head is matched first, so the first change starts right after it.
    if old == new:
        return None
    head = 0
    while head < min(len(old), len(new)) and old[head] == new[head]:
        head += 1
    return head + 1


def unified_patch(path: str, old_text: str, new_text: str) -> str:
    """A unified diff with ``--- path`` / ``+++ path`` headers and 4 lines of context."""
    old, new = _keep_ends(old_text), _keep_ends(new_text)
    out = [f"--- {path}", f"+++ {path}"]
    for group in _grouped(_opcodes(old, new), CONTEXT_LINES):
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


def edit_details(path: str, old_text: str, new_text: str) -> dict[str, Any]:
    """``{diff, patch, firstChangedLine}`` for an edit's result, each text split only once."""
    old, new = split_lines(old_text), split_lines(new_text)
    return {
        "diff": _display(old_text, new_text, old, new),
        "patch": unified_patch(path, old_text, new_text),
        "firstChangedLine": _first_changed(old, new),
    }


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
