"""The ``grep`` tool: lines of files that match a regular expression.

Each matching line comes back as ``path:N: text`` and each context line as ``path-N- text``;
paths are relative to the searched directory (a searched file is shown by its name). Lines
longer than 500 characters are cut (the note says so), at most ``limit`` matches (default 100)
and 50 KB are returned; when the limit is hit the last match keeps its trailing context, and
the note appears only when a further match proves results were left out.

The tree is walked by :mod:`~pi_context.tools.file_walk` (hidden files in, ``.git`` out, ignore
files honoured, links not followed); a file holding a NUL byte is taken as binary and skipped.
``glob`` filters files with gitignore's pattern rules on the path from the searched directory
(without ``/`` it matches names at any depth; ``!glob`` leaves matches out). The pattern is a
Python regular expression, searched line by line (``^`` and ``$`` are a line's ends).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Final, NamedTuple

from pi_context.errors import ToolError
from pi_context.tools.base import (
    ABORTED_TEXT,
    ContextTool,
    ToolContext,
    ToolOutcome,
    error_outcome,
    resolve_path,
    text_outcome,
)
from pi_context.tools.listing import (
    MAX_SAFE_INTEGER,
    Listing,
    effective_limit,
    in_thread,
    path_argument,
    was_aborted,
)
from pi_context.tools.truncate import DEFAULT_MAX_BYTES

__all__ = ["DEFAULT_GREP_LIMIT", "GREP_MAX_LINE_LENGTH", "GrepTool", "cut_line"]

DEFAULT_GREP_LIMIT: Final = 100
GREP_MAX_LINE_LENGTH: Final = 500
"""Characters (UTF-16 code units, as pi counts them) of a line shown before it is cut."""
_LEADING_DOT_SLASH: Final = re.compile(r"^(!?)(?:\./)+")
_LINE_END: Final = re.compile(r"\r?\n?\Z")


def cut_line(line: str, limit: int = GREP_MAX_LINE_LENGTH) -> tuple[str, bool]:
    """``line`` cut to ``limit`` UTF-16 code units (never inside a character), and whether
    it was."""
    if len(line) <= limit // 2:
        return line, False
    units = 0
    for index, ch in enumerate(line):
        units += 2 if ord(ch) > 0xFFFF else 1
        if units > limit:
            return line[:index] + "... [truncated]", True
    return line, False


class _Line(NamedTuple):
    shown_path: str
    number: int
    text: str
    is_match: bool


class GrepTool(ContextTool):
    """Search file contents for a regular expression, honouring ignore files."""

    name = "grep"
    description = (
        "Search the contents of files for a pattern; matching lines come back with their file "
        "path and line number. .gitignore rules apply. At most "
        f"{DEFAULT_GREP_LIMIT} matches or {DEFAULT_MAX_BYTES // 1024}KB are returned, whichever "
        f"limit comes first, and lines longer than {GREP_MAX_LINE_LENGTH} characters are cut."
    )
    parameters: dict[str, Any] = {  # noqa: RUF012 - class-level schema, never mutated
        "type": "object",
        "required": ["pattern"],
        "properties": {
            "pattern": {
                "type": "string",
                "description": "Regular expression (or literal text) to look for",
            },
            "path": {
                "type": "string",
                "description": "Directory or file to search (default: the current directory)",
            },
            "glob": {
                "type": "string",
                "description": (
                    "Only files matching this glob, relative to path, such as 'src/**/*.py'; "
                    "a glob without '/', such as '*.py', matches names at any depth"
                ),
            },
            "ignoreCase": {
                "type": "boolean",
                "description": "Ignore letter case (default: false)",
            },
            "literal": {
                "type": "boolean",
                "description": "Take the pattern as plain text, not a regex (default: false)",
            },
            "context": {
                "type": "number",
                "description": "Lines to show before and after each match (default: 0)",
            },
            "limit": {
                "type": "number",
                "description": f"Most matches to return (default: {DEFAULT_GREP_LIMIT})",
            },
        },
    }
    prompt_snippet = "Search file contents for a pattern (.gitignore respected)"

    async def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        if ctx.aborted:
            return error_outcome(ABORTED_TEXT)
        target = resolve_path(path_argument(arguments), ctx.cwd)
        if not target.exists():
            raise ToolError(f"Path not found: {target}")
        pattern = str(arguments["pattern"])
        if arguments.get("literal"):
            pattern = re.escape(pattern)
        flags = re.MULTILINE | (re.IGNORECASE if arguments.get("ignoreCase") else 0)
        try:
            regex = re.compile(pattern, flags)
        except re.error as exc:
            raise ToolError(f"regex parse error: {exc}") from exc
        raw_context = arguments.get("context")
        context = (
            MAX_SAFE_INTEGER
            if isinstance(raw_context, int | float) and math.isinf(raw_context) and raw_context > 0
            else min(math.floor(raw_context), MAX_SAFE_INTEGER)
            if isinstance(raw_context, int | float) and raw_context > 0
            else 0
        )
        limit = effective_limit(arguments.get("limit"), DEFAULT_GREP_LIMIT)
        keep = _glob_filter(arguments.get("glob"))

        def work(stop: Callable[[], bool]) -> ToolOutcome:
            return _collect(_lines(target, regex, context, keep, stop), limit, context)

        outcome = await in_thread(work, ctx)
        if was_aborted(ctx):
            return error_outcome(ABORTED_TEXT)
        return outcome


def _glob_filter(glob: Any) -> Callable[[str], bool] | None:
    if not isinstance(glob, str) or not glob:
        return None
    from pathspec import GitIgnoreSpec  # only when a call filters by glob

    text = _LEADING_DOT_SLASH.sub(r"\1", glob)
    negated = text.startswith("!")
    spec = GitIgnoreSpec.from_lines([text[1:] if negated else text])
    if negated:
        return lambda relative: not spec.match_file(relative)
    return lambda relative: bool(spec.match_file(relative))


def _files(
    target: Path, keep: Callable[[str], bool] | None, stop: Callable[[], bool]
) -> Iterator[tuple[Path, str]]:
    """``(file, shown path)`` in search order."""
    if not target.is_dir():
        yield target, target.name
        return
    from pi_context.tools.file_walk import walk  # the tree walk loads only when a call runs

    for entry in walk(target, stop=stop):
        if entry.is_dir or entry.is_link or not entry.path.is_file():
            continue
        if keep is not None and not keep(entry.relative):
            continue
        yield entry.path, entry.relative


def _lines(
    target: Path,
    regex: re.Pattern[str],
    context: int,
    keep: Callable[[str], bool] | None,
    stop: Callable[[], bool],
) -> Iterator[_Line]:
    """The match and context lines of every file, in order."""
    for path, shown in _files(target, keep, stop):
        if stop():
            return
        try:
            data = path.read_bytes()
        except OSError:
            continue
        if b"\0" in data:
            continue  # binary
        text = data.decode("utf-8", "replace")
        if regex.search(text) is None:
            continue
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        matches = [i for i, line in enumerate(lines) if regex.search(line) is not None]
        if not matches:
            continue
        wanted: set[int] = set()
        if context:
            for i in matches:
                wanted.update(range(max(0, i - context), min(len(lines), i + context + 1)))
        hit = set(matches)
        for i in sorted(wanted | hit):
            yield _Line(shown, i + 1, lines[i], i in hit)


def _collect(lines: Iterator[_Line], limit: int, context: int) -> ToolOutcome:
    """The result from the lines in order: every line until the ``limit``-th match, then
    only that match's trailing context; a further match anywhere proves the limit cut."""
    listing = Listing()
    matches = 0
    cut_any = False
    limit_hit = False
    limit_proved = False
    window_end = 0
    last_path: str | None = None

    def push(line: _Line, as_match: bool) -> None:
        nonlocal cut_any, last_path
        last_path = line.shown_path
        body, was_cut = cut_line(_LINE_END.sub("", line.text))
        cut_any = cut_any or was_cut
        mark = ":" if as_match else "-"
        listing.add(f"{line.shown_path}{mark}{line.number}{mark} {body}")

    for line in lines:
        if not limit_hit:
            push(line, line.is_match)
            if line.is_match:
                matches += 1
                if matches >= limit:
                    limit_hit = True
                    window_end = line.number + context
            continue
        in_window = line.shown_path == last_path and line.number <= window_end
        if in_window:
            push(line, False)
        if line.is_match:
            limit_proved = True
        if limit_proved and not (in_window and line.number < window_end):
            break
    if matches == 0:
        return text_outcome("No matches found")
    note = (
        (
            f"{limit} matches limit reached. Use limit={limit * 2} for more, or refine pattern",
            "matchLimitReached",
            limit,
        )
        if limit_proved
        else None
    )
    extra = (
        (
            f"Some lines truncated to {GREP_MAX_LINE_LENGTH} chars. Use read tool to see full "
            "lines",
            "linesTruncated",
            True,
        )
        if cut_any
        else None
    )
    return listing.outcome(note, extra)
