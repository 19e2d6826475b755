"""A list picker that takes the place of the input line: search, move, choose, and act.

Every interactive picker (``/model``, ``/resume``, ``/fork``, ``/scoped-models``, ``/thinking``)
is a :class:`PickerSource`: it builds the rows for the current search text and names its extra
keys; :func:`run_picker` draws them with prompt_toolkit and returns the chosen value (``None``
when cancelled). The sources are plain objects, so their behaviour is tested without a
terminal; the picker itself is tested through a pipe input.

Keys common to every picker: Up/Down move (wrapping), PageUp/PageDown move by a page, Enter
chooses, Esc clears the search (closes when it is empty), Ctrl+C closes, printable keys type
into the search and Backspace deletes. A key action returns an :class:`Outcome`: close with a
value, stay (optionally with a status message), ask for a line of text, or ask to confirm.

Everything shown passes through :func:`~pi_context.cli.terminal_text.terminal_safe` on one
line: a session name or a message preview cannot move the cursor or write the clipboard.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from prompt_toolkit.application import Application
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.input import Input
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.keys import Keys
from prompt_toolkit.layout import FormattedTextControl, Layout, Window
from prompt_toolkit.output import Output
from prompt_toolkit.styles import Style

from pi_context.cli.terminal_text import terminal_safe

__all__ = [
    "AskText",
    "Close",
    "Confirm",
    "OptionPicker",
    "Outcome",
    "PickerKey",
    "PickerRow",
    "PickerSource",
    "Stay",
    "fuzzy_score",
    "one_line",
    "run_picker",
]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class PickerRow(Generic[T]):
    value: T
    text: str
    """What the row shows (made one-line and terminal-safe when drawn)."""
    note: str = ""
    """Dimmed text after ``text`` (a hint such as ``no key``)."""
    marked: bool = False
    """Drawn with a check mark (a row that is "on", e.g. in the model scope)."""


@dataclass(frozen=True, slots=True)
class Close(Generic[T]):
    """Close the picker with ``value``."""

    value: T | None


@dataclass(frozen=True, slots=True)
class Stay:
    """Keep the picker open; show ``status`` under the list."""

    status: str = ""


@dataclass(frozen=True, slots=True)
class AskText(Generic[T]):
    """Read a line of text below the list; ``then`` gets it (Esc cancels and stays)."""

    label: str
    then: Callable[[str], Outcome[T]]
    default: str = ""


@dataclass(frozen=True, slots=True)
class Confirm(Generic[T]):
    """Ask ``question`` (y confirms, anything else cancels); ``then`` runs on yes."""

    question: str
    then: Callable[[], Outcome[T]]


Outcome = Close[T] | Stay | AskText[T] | Confirm[T]


@dataclass(frozen=True, slots=True)
class PickerKey(Generic[T]):
    keys: tuple[str | Keys, ...]
    """prompt_toolkit key names, e.g. ``("c-s",)`` or ``(Keys.Tab,)``."""
    label: str
    """How the hint line names the key (``Ctrl+S``)."""
    help: str
    action: Callable[[T | None, str], Outcome[T]]
    """Called with the selected value (``None`` when the list is empty) and the search text."""


class PickerSource(Protocol[T]):
    """What a picker shows and does; ``rows`` is called again after every change."""

    def title(self) -> str: ...

    def rows(self, query: str) -> Sequence[PickerRow[T]]: ...

    def bindings(self) -> Sequence[PickerKey[T]]: ...

    def initial(self, rows: Sequence[PickerRow[T]]) -> int:
        """The row selected when the picker opens (and after the search changes)."""
        ...

    def choose(self, value: T, query: str) -> Outcome[T]:
        """Enter on a row."""
        ...


def one_line(text: str) -> str:
    """``text`` on one line (runs of whitespace become one space), terminal-safe."""
    return terminal_safe(" ".join(text.split()))


def fuzzy_score(query: str, text: str) -> float | None:
    """How well ``query`` matches ``text`` (lower is better), ``None`` when it does not.

    Every whitespace-separated word must occur in ``text`` as a subsequence of its letters
    (case-insensitive); a word found as a whole substring scores best, earlier and tighter
    matches score better.
    """
    lowered = text.lower()
    total = 0.0
    for word in query.lower().split():
        at = lowered.find(word)
        if at >= 0:
            total += at / 1000
            continue
        start = position = lowered.find(word[0])
        if position < 0:
            return None
        for char in word[1:]:
            position = lowered.find(char, position + 1)
            if position < 0:
                return None
        total += 1 + (position - start - len(word) + 1) / 10 + start / 1000
    return total


@dataclass
class _State(Generic[T]):
    query: str
    rows: Sequence[PickerRow[T]] = ()
    index: int = 0
    status: str = ""
    ask: AskText[T] | None = None
    answer: str = ""
    confirm: Confirm[T] | None = None


_STYLE = Style.from_dict(
    {
        "title": "bold",
        "selected": "reverse",
        "note": "#888888",
        "hint": "#888888",
        "status": "#d7af00",
        "search": "",
    }
)


async def run_picker(
    source: PickerSource[T],
    *,
    pt_input: Input | None = None,
    pt_output: Output | None = None,
    query: str = "",
    height: int = 10,
) -> T | None:
    """Show ``source`` until a row is chosen (its value) or the picker is closed (``None``).

    ``height`` is the number of rows visible at once; the list scrolls to keep the selection
    in view.
    """
    state: _State[T] = _State(query=query)
    result: list[T | None] = [None]

    def refresh(*, keep: T | None = None, reset: bool = False) -> None:
        state.rows = source.rows(state.query)
        if reset or keep is None:
            state.index = source.initial(state.rows) if state.rows else 0
        else:
            state.index = next(
                (i for i, row in enumerate(state.rows) if row.value == keep),
                min(state.index, max(len(state.rows) - 1, 0)),
            )

    def selected() -> T | None:
        return state.rows[state.index].value if state.rows else None

    refresh(reset=True)

    def apply(outcome: Outcome[T], app: Application[None]) -> None:
        state.status = ""
        if isinstance(outcome, Close):
            result[0] = outcome.value
            app.exit()
        elif isinstance(outcome, Stay):
            keep = selected()
            refresh(keep=keep)
            state.status = outcome.status
        elif isinstance(outcome, AskText):
            state.ask = outcome
            state.answer = outcome.default
        else:
            state.confirm = outcome

    def render() -> StyleAndTextTuples:
        lines: StyleAndTextTuples = [("class:title", one_line(source.title())), ("", "\n")]
        lines += [("class:search", "Search: " + one_line(state.query)), ("", "\n")]
        if not state.rows:
            lines += [("class:note", "  (nothing matches)"), ("", "\n")]
        top = max(0, min(state.index - height // 2, len(state.rows) - height))
        for number, row in enumerate(state.rows[top : top + height], start=top):
            mark = "✓ " if row.marked else "  "
            style = "class:selected" if number == state.index else ""
            pointer = "› " if number == state.index else "  "
            lines.append((style, pointer + mark + one_line(row.text)))
            if row.note:
                lines.append(("class:note", "  " + one_line(row.note)))
            lines.append(("", "\n"))
        if len(state.rows) > height:
            lines += [("class:note", f"  ({state.index + 1}/{len(state.rows)})"), ("", "\n")]
        if state.ask is not None:
            lines.append(("class:status", f"{one_line(state.ask.label)} {one_line(state.answer)}"))
            lines += [("", "\n"), ("class:hint", "Enter saves · Esc cancels")]
            return lines
        if state.confirm is not None:
            lines.append(("class:status", one_line(state.confirm.question) + " [y/N]"))
            return lines
        if state.status:
            lines += [("class:status", one_line(state.status)), ("", "\n")]
        lines.append(("class:hint", "↑↓ move · type to search · Enter select · Esc cancel"))
        extra = [f"{key.label} {key.help}" for key in source.bindings()]
        if extra:
            lines += [("", "\n"), ("class:hint", " · ".join(extra))]
        return lines

    bindings = KeyBindings()

    def move(step: int) -> None:
        if state.rows:
            state.index = (state.index + step) % len(state.rows)

    def page(step: int) -> None:
        if state.rows:
            state.index = max(0, min(len(state.rows) - 1, state.index + step))

    def modal() -> bool:
        return state.ask is not None or state.confirm is not None

    @bindings.add(Keys.Up)
    def _up(_event: KeyPressEvent) -> None:
        if not modal():
            move(-1)

    @bindings.add(Keys.Down)
    def _down(_event: KeyPressEvent) -> None:
        if not modal():
            move(1)

    @bindings.add(Keys.PageUp)
    def _page_up(_event: KeyPressEvent) -> None:
        if not modal():
            page(-height)

    @bindings.add(Keys.PageDown)
    def _page_down(_event: KeyPressEvent) -> None:
        if not modal():
            page(height)

    @bindings.add(Keys.Enter)
    def _enter(event: KeyPressEvent) -> None:
        if state.confirm is not None:
            state.confirm = None
            state.status = "Cancelled"
            return
        if state.ask is not None:
            ask, state.ask = state.ask, None
            apply(ask.then(state.answer), event.app)
            return
        value = selected()
        if value is not None:
            apply(source.choose(value, state.query), event.app)

    @bindings.add(Keys.Escape, eager=True)
    def _escape(event: KeyPressEvent) -> None:
        if modal():
            state.ask = state.confirm = None
            state.status = "Cancelled"
        elif state.query:
            state.query = ""
            refresh(reset=True)
        else:
            event.app.exit()

    @bindings.add(Keys.ControlC)
    def _cancel(event: KeyPressEvent) -> None:
        event.app.exit()

    @bindings.add(Keys.Backspace)
    def _erase(_event: KeyPressEvent) -> None:
        if state.ask is not None:
            state.answer = state.answer[:-1]
        elif state.confirm is None and state.query:
            state.query = state.query[:-1]
            refresh(reset=True)

    @bindings.add(Keys.Any)
    def _type(event: KeyPressEvent) -> None:
        text = event.data
        if not text.isprintable():
            return
        if state.confirm is not None:
            confirm, state.confirm = state.confirm, None
            if text.lower() == "y":
                apply(confirm.then(), event.app)
            else:
                state.status = "Cancelled"
            return
        if state.ask is not None:
            state.answer += text
            return
        state.query += text
        refresh(reset=True)

    for key in source.bindings():

        def run(event: KeyPressEvent, key: PickerKey[T] = key) -> None:
            if not modal():
                apply(key.action(selected(), state.query), event.app)

        bindings.add(*key.keys)(run)

    app: Application[None] = Application(
        layout=Layout(Window(FormattedTextControl(render, show_cursor=False), wrap_lines=False)),
        key_bindings=bindings,
        style=_STYLE,
        full_screen=False,
        erase_when_done=True,
        input=pt_input,
        output=pt_output,
    )
    await app.run_async()
    return result[0]


class OptionPicker:
    """A fixed list of choices (a question with answers); returns the chosen index."""

    def __init__(self, question: str, options: Sequence[str], *, initial: int = 0) -> None:
        self._question = question
        self._options = list(options)
        self._initial = initial

    def title(self) -> str:
        return self._question

    def rows(self, query: str) -> list[PickerRow[int]]:
        return [
            PickerRow(index, text)
            for index, text in enumerate(self._options)
            if query.lower() in text.lower()
        ]

    def initial(self, rows: Sequence[PickerRow[int]]) -> int:
        return next((i for i, row in enumerate(rows) if row.value == self._initial), 0)

    def choose(self, value: int, query: str) -> Outcome[int]:
        return Close(value)

    def bindings(self) -> list[PickerKey[int]]:
        return []
