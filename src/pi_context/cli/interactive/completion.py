"""``@`` file references and Tab path completion in the interactive editor, as pi does them.

* ``@`` at the start of a word opens a list of files and directories of the working tree that
  narrows as letters are typed (``@"`` starts a quoted reference, for paths with spaces). The
  tree is walked by :mod:`pi_context.tools.file_walk`: hidden entries in, ``.git`` out,
  ``.gitignore``/``.ignore`` honoured, symbolic links listed (a link to a directory as a
  directory) but not followed. Without ``/`` in the query an entry matches when its name
  contains the query, else when its path does; an all-lowercase query ignores case. Ranking:
  the name equal to the query, then starting with it, then containing it, then only the path
  containing it, a directory ahead of a file of the same rank; then shallower, shorter, then
  in :func:`collation_key` order. The best :data:`MAX_FILE_SUGGESTIONS` are offered. A query whose part before its last
  ``/`` names an existing directory (``@src/ma``, ``@~/notes/``, ``@/etc/ho``) searches below
  that directory.
* Choosing inserts ``@path`` (``@"path"`` when the path has a space, or the reference was
  opened with ``@"``) followed by a space; a directory ends with ``/`` and no space, so the
  search can go on inside it. The message keeps the reference as typed: the model gets the
  text ``@path`` and reads the file with its tools (no file content is attached).
* Tab completes the word before the cursor as a path from the working directory (``./``,
  ``../``, ``~/`` and ``/`` too), in any line including ``!command`` lines: the entries of its
  directory whose names start with what was typed (any case), directories first (ties in
  :func:`collation_key` order); a single candidate is inserted at once, several open a list
  that narrows as the word is typed on. At the start of a line, Tab completes ``/command``
  names.
* In an open list, Tab or Enter inserts the highlighted entry (the first when none is),
  Up/Down move.

The walk of a tree is kept for :data:`INDEX_TTL_SECONDS` and stops after
:data:`MAX_INDEXED_ENTRIES` entries; it runs off the editor's thread, so typing never waits for
it, and a large tree's stale walk keeps serving while it is redone in the background. Names
are shown with control characters made visible (never raw to the terminal; see :func:`shown`).
"""

from __future__ import annotations

import asyncio
import heapq
import os
import posixpath
import threading
import time
import unicodedata
from collections.abc import AsyncGenerator, Callable, Iterable
from dataclasses import dataclass, field
from operator import attrgetter
from pathlib import Path
from typing import Any, Final, TypeVar

from prompt_toolkit.buffer import CompletionState
from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document
from prompt_toolkit.filters import Condition
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.keys import Keys

from pi_context.cli.terminal_text import terminal_safe

__all__ = [
    "INDEX_TTL_SECONDS",
    "MAX_FILE_SUGGESTIONS",
    "MAX_INDEXED_ENTRIES",
    "MAX_OUTSIDE_ENTRIES",
    "SLOW_WALK_SECONDS",
    "EditorCompleter",
    "FileCompletion",
    "FileIndex",
    "IndexedEntry",
    "Suggestion",
    "at_prefix",
    "collation_key",
    "completion_key_bindings",
    "file_suggestions",
    "path_prefix",
    "path_suggestions",
    "rank_entries",
]

MAX_FILE_SUGGESTIONS: Final = 20
"""How many entries an ``@`` list offers (pi's number)."""
MAX_INDEXED_ENTRIES: Final = 200_000
"""The walk of one tree stops after this many entries (a huge tree stays usable)."""
MAX_OUTSIDE_ENTRIES: Final = 20_000
"""The bound for a directory outside the working tree (``@~/``, ``@/``): a home folder or
the file system's root is sampled, not walked whole."""
INDEX_TTL_SECONDS: Final = 5.0
"""How long the walk of a tree is reused before it is walked again."""
SLOW_WALK_SECONDS: Final = 0.25
"""A walk that took this long is redone in the background while its old list serves."""

_KEPT_TREES: Final = 4
_DELIMITERS: Final = frozenset(" \t\"'=")
_WRAPPERS: Final = {"(": ")", "[": "]", "{": "}", "<": ">", "`": "`"}
_CJK_PUNCTUATION: Final = frozenset("，．：；！？（）［］｛｝“”‘’…—")
_CJK_RANGES: Final = ((0x3000, 0x303F), (0x30A0, 0x30FF), (0xFE30, 0xFE4F), (0xFF61, 0xFF65))


def _is_separator(char: str) -> bool:
    """Whitespace or CJK punctuation: where a word (and so a path) ends."""
    if char.isspace() or char in _CJK_PUNCTUATION:
        return True
    if not unicodedata.category(char).startswith("P"):
        return False
    code = ord(char)
    return any(low <= code <= high for low, high in _CJK_RANGES)


def _last_delimiter(text: str) -> int:
    for index in range(len(text) - 1, -1, -1):
        if text[index] in _DELIMITERS or _is_separator(text[index]):
            return index
    return -1


def _strip_wrappers(token: str) -> str:
    """``(~/Dev`` is ``~/Dev``; a wrapper whose closer is in the token stays (``app/[id]/p``)."""
    while token and token[0] in _WRAPPERS and _WRAPPERS[token[0]] not in token[1:]:
        token = token[1:]
    return token


def _is_token_start(text: str, index: int) -> bool:
    start = index
    while start > 0 and text[start - 1] in _WRAPPERS:
        start -= 1
    return start == 0 or text[start - 1] in _DELIMITERS or _is_separator(text[start - 1])


def _quoted_prefix(text: str) -> str | None:
    """From an unclosed ``"`` (or ``@"``) that starts a word to the end, else ``None``."""
    start = -1
    for index, char in enumerate(text):
        if char == '"':
            start = index if start == -1 else -1
    if start == -1:
        return None
    if start > 0 and text[start - 1] == "@":
        return text[start - 1 :] if _is_token_start(text, start - 1) else None
    return text[start:] if _is_token_start(text, start) else None


def at_prefix(text: str) -> str | None:
    """The ``@`` reference being typed at the end of ``text`` (from the ``@``), or ``None``."""
    quoted = _quoted_prefix(text)
    if quoted is not None and quoted.startswith('@"'):
        return quoted
    token = _strip_wrappers(text[_last_delimiter(text) + 1 :])
    return token if token.startswith("@") else None


def path_prefix(text: str) -> str:
    """The word before the cursor that Tab completes as a path (may be empty)."""
    quoted = _quoted_prefix(text)
    if quoted is not None:
        return quoted
    return _strip_wrappers(text[_last_delimiter(text) + 1 :])


def _parse(prefix: str) -> tuple[str, bool, bool]:
    """``(path text, after @, quoted)``."""
    if prefix.startswith('@"'):
        return prefix[2:], True, True
    if prefix.startswith('"'):
        return prefix[1:], False, True
    if prefix.startswith("@"):
        return prefix[1:], True, False
    return prefix, False, False


def _value(path: str, *, at: bool, quoted: bool, is_dir: bool) -> str:
    """What replaces the prefix: ``@path``, ``@"path"``; a quoted directory stays open (its
    closing quote comes with the file chosen inside it)."""
    lead = "@" if at else ""
    if not quoted and not any(_is_separator(c) for c in path):
        return lead + path
    return f'{lead}"{path}' + ("" if is_dir else '"')


def shown(text: str) -> str:
    """A name as the list shows it, on one line: colour/cursor sequences removed, every other
    control character shown as a visible symbol."""
    return terminal_safe(text).replace("\n", "␊").replace("\t", "␉")


@dataclass(frozen=True, slots=True)
class Suggestion:
    value: str
    """What replaces the typed prefix."""
    label: str
    """The entry's name (``/`` after a directory)."""
    description: str = ""
    """Its path (``@`` lists)."""

    @property
    def is_dir(self) -> bool:
        return self.label.endswith("/")


# -- the tree ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class IndexedEntry:
    relative: str
    """Its path from the walked directory, ``/``-separated."""
    is_dir: bool
    """A directory or a link to one."""
    name: str = field(init=False)
    path: str = field(init=False)
    """``relative``, with a ``/`` after a directory."""
    order: tuple[int, int] = field(init=False)
    """Depth and length of ``path``: the order within one rank (computed once per walk, so a
    key press only compares); ties are then put in :func:`collation_key` order."""

    def __post_init__(self) -> None:
        path = self.relative + "/" if self.is_dir else self.relative
        object.__setattr__(self, "name", posixpath.basename(self.relative))
        object.__setattr__(self, "path", path)
        object.__setattr__(self, "order", (self.relative.count("/") + 1, len(path)))


@dataclass(frozen=True, slots=True)
class _Walk:
    entries: list[IndexedEntry]
    done: float
    """When it finished (the index's clock)."""
    took: float
    """How long it took."""


class FileIndex:
    """The walks of directory trees, each reused for ``ttl`` seconds and bounded to ``limit``
    entries; safe to use from several threads (one walk at a time).

    A stale walk is redone before it is used, unless it took ``slow`` seconds or more (a large
    tree): then the old list keeps serving while a background thread walks the tree again, so
    a key press never waits for a large walk after the first one.
    """

    def __init__(
        self,
        *,
        limit: int = MAX_INDEXED_ENTRIES,
        ttl: float = INDEX_TTL_SECONDS,
        slow: float = SLOW_WALK_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.limit = limit
        self.ttl = ttl
        self.slow = slow
        self._clock = clock
        self._lock = threading.Lock()
        self._walks: dict[Path, _Walk] = {}
        self._refresh: threading.Thread | None = None
        self.walk_count = 0
        """How many walks were made (a reused walk is not counted)."""

    def entries(self, root: Path, limit: int | None = None) -> list[IndexedEntry]:
        """The entries below ``root`` (at most ``limit``, default the index's own)."""
        limit = self.limit if limit is None else limit
        with self._lock:
            cached = self._walks.get(root)
            if cached is not None and self._clock() - cached.done < self.ttl:
                return cached.entries
            if cached is not None and cached.took >= self.slow:
                if self._refresh is None or not self._refresh.is_alive():
                    self._refresh = threading.Thread(
                        target=self._rewalk,
                        args=(root, limit),
                        name="pictx-file-index",
                        daemon=True,
                    )
                    self._refresh.start()
                return cached.entries
            return self._store(root, self._walk(root, limit))

    def wait(self) -> None:
        """Until a background walk (if any) has finished."""
        refresh = self._refresh
        if refresh is not None:
            refresh.join()

    def _rewalk(self, root: Path, limit: int) -> None:
        found = self._walk(root, limit)
        with self._lock:
            self._store(root, found)

    def _store(self, root: Path, found: _Walk) -> list[IndexedEntry]:
        self._walks.pop(root, None)
        self._walks[root] = found
        while len(self._walks) > _KEPT_TREES:  # the oldest walk goes first
            del self._walks[next(iter(self._walks))]
        self.walk_count += 1
        return found.entries

    def _walk(self, root: Path, limit: int) -> _Walk:
        from pi_context.tools.file_walk import walk

        start = self._clock()
        found: list[IndexedEntry] = []
        for entry in walk(root, stop=lambda: len(found) >= limit):
            is_dir = entry.is_dir
            if entry.is_link:
                try:
                    is_dir = entry.path.is_dir()
                except OSError:  # a broken link or a loop: a file
                    is_dir = False
            found.append(IndexedEntry(entry.relative, is_dir))
            if len(found) >= limit:
                break
        done = self._clock()
        return _Walk(found, done, done - start)


def _expand_home(path: str) -> str:
    if path == "~":
        return str(Path.home())
    if path.startswith("~/"):
        expanded = os.path.join(str(Path.home()), path[2:])
        return expanded if not path.endswith("/") or expanded.endswith("/") else expanded + "/"
    return path


def _scoped(query: str, cwd: Path) -> tuple[Path, str, str] | None:
    """``(directory, query below it, its text as typed)`` when the query's part before its last
    ``/`` names an existing directory."""
    slash = query.rfind("/")
    if slash == -1:
        return None
    typed, rest = query[: slash + 1], query[slash + 1 :]
    base = Path(_expand_home(typed)) if typed.startswith(("~/", "/")) else cwd / typed
    return (base, rest, typed) if base.is_dir() else None


def _score(relative: str, name: str, query: str, is_dir: bool) -> int:
    low_name, low_query = name.lower(), query.lower()
    if low_name == low_query:
        score = 100
    elif low_name.startswith(low_query):
        score = 80
    elif low_query in low_name:
        score = 50
    elif low_query in relative.lower():
        score = 30
    else:
        return 0
    return score + 10 if is_dir else score


def rank_entries(
    entries: Iterable[IndexedEntry], query: str, limit: int = MAX_FILE_SUGGESTIONS
) -> list[IndexedEntry]:
    """The entries that match ``query``, best first (see the module text), at most ``limit``."""
    if not query:
        return _best(list(entries), _ORDER, limit)
    sensitive = query != query.lower()  # an uppercase letter: case matters (smart case)
    by_path = "/" in query
    needle = query if sensitive else query.lower()
    ranked: list[IndexedEntry] = []
    scores: dict[int, int] = {}
    for entry in entries:
        haystack = entry.path if by_path else entry.name
        if needle not in (haystack if sensitive else haystack.lower()):
            continue
        score = _score(entry.path, entry.name, query, entry.is_dir)
        if score:
            ranked.append(entry)
            scores[id(entry)] = score
    return _best(ranked, lambda entry: (-scores[id(entry)], *entry.order), limit)


_ORDER: Final = attrgetter("order")

_K = TypeVar("_K", bound=tuple[int, ...])


def _best(
    entries: list[IndexedEntry], rank: Callable[[IndexedEntry], _K], limit: int
) -> list[IndexedEntry]:
    """The ``limit`` lowest by ``rank`` (score, depth, length), ties then in
    :func:`collation_key` order (computed only for the entries tied at the cut)."""
    cut = heapq.nsmallest(limit, entries, key=rank)
    if not cut:
        return []
    bound = rank(cut[-1])
    pool = [entry for entry in entries if rank(entry) <= bound]
    pool.sort(key=lambda entry: (rank(entry), collation_key(entry.path)))
    return pool[:limit]


_COLLATION_ORDER: Final = " _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$0123456789abcdefghijklmnopqrstuvwxyz"
_PRIMARY: Final = {char: weight for weight, char in enumerate(_COLLATION_ORDER)}


def collation_key(text: str) -> tuple[tuple[int, ...], tuple[bool, ...]]:
    """The order pi's lists use (JavaScript's ``localeCompare``, Unicode's default collation)
    for ASCII text: punctuation before digits before letters, letters without case first
    (``_`` < ``-`` < ``.``), then lowercase before uppercase; other characters after the
    letters, by code point of their case-folded form."""
    primary = tuple(_PRIMARY.get(c.lower(), len(_PRIMARY) + ord(c.casefold()[0])) for c in text)
    return primary, tuple(c.isupper() for c in text)


def file_suggestions(prefix: str, cwd: Path, index: FileIndex) -> list[Suggestion]:
    """The ``@`` list for ``prefix`` (``@query`` or ``@"query``)."""
    query, _, quoted = _parse(prefix)
    scope = _scoped(query, cwd)
    root, query, typed = (cwd, query, "") if scope is None else scope
    suggestions = []
    inside = scope is None or root.resolve().is_relative_to(cwd.resolve())
    limit = None if inside else MAX_OUTSIDE_ENTRIES
    for entry in rank_entries(index.entries(root, limit), query):
        display = typed + entry.relative
        path = display + "/" if entry.is_dir else display
        label = posixpath.basename(entry.relative) + ("/" if entry.is_dir else "")
        value = _value(path, at=True, quoted=quoted, is_dir=entry.is_dir)
        suggestions.append(Suggestion(value, label, display))
    return suggestions


def path_suggestions(prefix: str, cwd: Path) -> list[Suggestion]:
    """What Tab offers for the word ``prefix``: the entries of its directory whose names start
    with its last part (any case), directories first, then by name."""
    raw, at, quoted = _parse(prefix)
    expanded = _expand_home(raw) if raw.startswith("~") else raw
    absolute = raw.startswith("~") or expanded.startswith("/")
    if raw in ("", "./", "../", "~", "~/", "/") or raw.endswith("/"):
        directory, start = expanded, ""
    else:
        directory, start = os.path.dirname(expanded), os.path.basename(expanded)
    # a relative directory is joined to the working directory as text (``src/..`` is the
    # working directory even when ``src`` does not exist)
    search = Path(directory) if absolute else Path(os.path.normpath(cwd / directory))
    try:
        with os.scandir(search) as listing:
            found = [(item.name, _entry_is_dir(item)) for item in listing]
    except OSError:
        return []
    suggestions = []
    for name, is_dir in found:
        if not name.lower().startswith(start.lower()):
            continue
        path = _completed_path(raw, name)
        value = _value(path + "/" if is_dir else path, at=at, quoted=quoted, is_dir=is_dir)
        suggestions.append(Suggestion(value, name + ("/" if is_dir else "")))
    suggestions.sort(key=lambda s: (not s.is_dir, collation_key(s.label)))
    return suggestions


def _entry_is_dir(item: os.DirEntry[str]) -> bool:
    try:
        return item.is_dir()  # follows a link: a link to a directory completes as one
    except OSError:
        return False


def _completed_path(typed: str, name: str) -> str:
    """The typed word with its last part replaced by ``name`` (``~/``, ``./`` kept)."""
    if typed.endswith("/"):
        return typed + name
    if "/" not in typed:
        return "~/" + name if typed.startswith("~") else name
    directory = posixpath.dirname(typed)
    if typed.startswith(("~/", "/")):
        return ("" if directory == "/" else directory) + "/" + name
    joined = posixpath.normpath(posixpath.join(directory, name))
    return "./" + joined if typed.startswith("./") and not joined.startswith("./") else joined


# -- the editor --------------------------------------------------------------------------------


class FileCompletion(Completion):
    """An entry of an ``@`` list or of Tab's path list (``chosen``: told when it is picked)."""

    def __init__(
        self,
        *args: Any,
        chosen: Callable[[], None] | None = None,
        alone: bool = False,
        **kw: Any,
    ) -> None:
        super().__init__(*args, **kw)
        self.chosen = chosen
        self.alone = alone
        """The one path a Tab press found (inserted at once, not a list to choose from)."""


def _completion(
    suggestion: Suggestion,
    prefix: str,
    chosen: Callable[[], None] | None = None,
    *,
    alone: bool = False,
) -> FileCompletion:
    after = " " if prefix.startswith("@") and not suggestion.is_dir else ""
    return FileCompletion(
        suggestion.value + after,
        start_position=-len(prefix),
        display=shown(suggestion.label),
        display_meta=shown(suggestion.description),
        chosen=chosen,
        alone=alone,
    )


class EditorCompleter(Completer):
    """The editor's completions: ``@`` lists while typing, paths on Tab, and ``commands``
    (the ``/command`` completer) at the start of the input. The tree is walked off the
    editor's thread (:meth:`get_completions_async`).

    A Tab that finds several paths opens a list that keeps narrowing as the word is typed on
    (as pi's does) until an entry is chosen or the word ends.
    """

    def __init__(
        self,
        commands: Completer,
        cwd: Callable[[], Path],
        index: FileIndex | None = None,
    ) -> None:
        self.commands = commands
        self.cwd = cwd
        self.index = index or FileIndex()
        self._tab_word: str | None = None
        """The text before the word a Tab list is open for."""

    def _close_tab_list(self) -> None:
        self._tab_word = None

    def _tab_list(self, document: Document, event: CompleteEvent) -> bool:
        """Whether paths are offered: on Tab, and while the word of an open Tab list grows."""
        prefix = path_prefix(document.current_line_before_cursor)
        before = document.text_before_cursor[: len(document.text_before_cursor) - len(prefix)]
        if event.completion_requested:
            self._tab_word = before
            return True
        if self._tab_word is not None and self._tab_word == before:
            return True
        self._tab_word = None
        return False

    def _files(
        self, document: Document, event: CompleteEvent, tab: bool
    ) -> list[FileCompletion] | None:
        """The path completions, or ``None`` when the input is a ``/command`` name."""
        line = document.current_line_before_cursor
        at = at_prefix(line)
        if at is not None:
            return [_completion(s, at) for s in file_suggestions(at, self.cwd(), self.index)]
        if _command_name(document):
            return None
        if not tab:
            return []
        prefix = path_prefix(line)
        found = path_suggestions(prefix, self.cwd())
        if len(found) < 2:  # nothing, or inserted at once: no list stays open
            self._tab_word = None
        alone = event.completion_requested and len(found) == 1
        return [_completion(s, prefix, self._close_tab_list, alone=alone) for s in found]

    def get_completions(
        self, document: Document, complete_event: CompleteEvent
    ) -> Iterable[Completion]:
        tab = not _command_name(document) and self._tab_list(document, complete_event)
        found = self._files(document, complete_event, tab)
        if found is None:
            yield from self.commands.get_completions(document, complete_event)
        else:
            yield from found

    async def get_completions_async(
        self, document: Document, complete_event: CompleteEvent
    ) -> AsyncGenerator[Completion, None]:
        if _command_name(document):
            async for completion in self.commands.get_completions_async(document, complete_event):
                yield completion
            return
        tab = self._tab_list(document, complete_event)
        if at_prefix(document.current_line_before_cursor) is None and not tab:
            return  # plain typing: nothing to look up (and Tab right after is not held up)
        loop = asyncio.get_running_loop()
        found = await loop.run_in_executor(None, self._files, document, complete_event, tab)
        for completion in found or ():
            yield completion


def _command_name(document: Document) -> bool:
    """The input is a ``/command`` name being typed (the start of the input, no space yet)."""
    text = document.text_before_cursor
    return text.startswith("/") and not any(c.isspace() for c in text)


def tab_path_inserted(state: CompletionState) -> bool:
    """Whether ``state`` is the one path a Tab found, already inserted: a path that needs
    quotes is inserted by selecting it, and prompt_toolkit keeps that list of one open. It is
    done, not a list to choose from: Enter sends the line, as after any completed path."""
    return (
        len(state.completions) == 1
        and state.complete_index == 0
        and isinstance(state.completions[0], FileCompletion)
        and state.completions[0].alone
    )


def completion_key_bindings() -> KeyBindings:
    """Tab and Enter in an open ``@`` or path list insert its highlighted entry (the first
    when none is highlighted), as pi's lists do; Up/Down move through it."""
    bindings = KeyBindings()

    @Condition
    def file_list_open() -> bool:
        from prompt_toolkit.application import get_app

        state = get_app().current_buffer.complete_state
        if state is None or not state.completions:
            return False
        return isinstance(state.completions[0], FileCompletion) and not tab_path_inserted(state)

    @bindings.add(Keys.Tab, filter=file_list_open)
    @bindings.add(Keys.Enter, filter=file_list_open)
    def _choose(event: KeyPressEvent) -> None:
        buffer = event.current_buffer
        state = buffer.complete_state
        if state is None:
            return
        chosen = state.current_completion or state.completions[0]
        buffer.apply_completion(chosen)
        if isinstance(chosen, FileCompletion) and chosen.chosen is not None:
            chosen.chosen()

    return bindings
