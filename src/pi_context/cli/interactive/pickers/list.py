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

from pi_context.cli.terminal_text import one_line

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


class _Picker(Generic[T]):
    """One open picker: the search, the rows it matches, the selection and the modal question
    (a line of text or a yes/no) if one is open; each key is a method."""

    def __init__(self, source: PickerSource[T], *, query: str, height: int) -> None:
        self.source = source
        self.height = height
        self.query = query
        self.rows: Sequence[PickerRow[T]] = ()
        self.index = 0
        self.status = ""
        self.ask: AskText[T] | None = None
        self.answer = ""
        self.confirm: Confirm[T] | None = None
        self.result: T | None = None
        self.refresh(reset=True)

    async def run(self, pt_input: Input | None, pt_output: Output | None) -> T | None:
        app: Application[None] = Application(
            layout=Layout(
                Window(FormattedTextControl(self.render, show_cursor=False), wrap_lines=False)
            ),
            key_bindings=self.key_bindings(),
            style=_STYLE,
            full_screen=False,
            erase_when_done=True,
            input=pt_input,
            output=pt_output,
        )
        await app.run_async()
        return self.result

    # -- state --------------------------------------------------------------------------------

    def refresh(self, *, keep: T | None = None, reset: bool = False) -> None:
        self.rows = self.source.rows(self.query)
        if reset or keep is None:
            self.index = self.source.initial(self.rows) if self.rows else 0
        else:
            self.index = next(
                (i for i, row in enumerate(self.rows) if row.value == keep),
                min(self.index, max(len(self.rows) - 1, 0)),
            )

    def selected(self) -> T | None:
        return self.rows[self.index].value if self.rows else None

    def modal(self) -> bool:
        return self.ask is not None or self.confirm is not None

    def apply(self, outcome: Outcome[T], app: Application[None]) -> None:
        self.status = ""
        if isinstance(outcome, Close):
            self.result = outcome.value
            app.exit()
        elif isinstance(outcome, Stay):
            self.refresh(keep=self.selected())
            self.status = outcome.status
        elif isinstance(outcome, AskText):
            self.ask = outcome
            self.answer = outcome.default
        else:
            self.confirm = outcome

    def move(self, step: int) -> None:
        if self.rows:
            self.index = (self.index + step) % len(self.rows)

    def page(self, step: int) -> None:
        if self.rows:
            self.index = max(0, min(len(self.rows) - 1, self.index + step))

    # -- drawing ------------------------------------------------------------------------------

    def render(self) -> StyleAndTextTuples:
        height = self.height
        lines: StyleAndTextTuples = [("class:title", one_line(self.source.title())), ("", "\n")]
        lines += [("class:search", "Search: " + one_line(self.query)), ("", "\n")]
        if not self.rows:
            lines += [("class:note", "  (nothing matches)"), ("", "\n")]
        top = max(0, min(self.index - height // 2, len(self.rows) - height))
        for number, row in enumerate(self.rows[top : top + height], start=top):
            mark = "✓ " if row.marked else "  "
            style = "class:selected" if number == self.index else ""
            pointer = "› " if number == self.index else "  "
            lines.append((style, pointer + mark + one_line(row.text)))
            if row.note:
                lines.append(("class:note", "  " + one_line(row.note)))
            lines.append(("", "\n"))
        if len(self.rows) > height:
            lines += [("class:note", f"  ({self.index + 1}/{len(self.rows)})"), ("", "\n")]
        if self.ask is not None:
            lines.append(("class:status", f"{one_line(self.ask.label)} {one_line(self.answer)}"))
            lines += [("", "\n"), ("class:hint", "Enter saves · Esc cancels")]
            return lines
        if self.confirm is not None:
            lines.append(("class:status", one_line(self.confirm.question) + " [y/N]"))
            return lines
        if self.status:
            lines += [("class:status", one_line(self.status)), ("", "\n")]
        lines.append(("class:hint", "↑↓ move · type to search · Enter select · Esc cancel"))
        extra = [f"{key.label} {key.help}" for key in self.source.bindings()]
        if extra:
            lines += [("", "\n"), ("class:hint", " · ".join(extra))]
        return lines

    # -- keys ---------------------------------------------------------------------------------

    def key_bindings(self) -> KeyBindings:
        bindings = KeyBindings()
        bindings.add(Keys.Up)(self.up)
        bindings.add(Keys.Down)(self.down)
        bindings.add(Keys.PageUp)(self.page_up)
        bindings.add(Keys.PageDown)(self.page_down)
        bindings.add(Keys.Enter)(self.enter)
        bindings.add(Keys.Escape, eager=True)(self.escape)
        bindings.add(Keys.ControlC)(self.cancel)
        bindings.add(Keys.Backspace)(self.erase)
        bindings.add(Keys.Any)(self.type_text)
        for key in self.source.bindings():

            def run(event: KeyPressEvent, key: PickerKey[T] = key) -> None:
                self.extra_key(key, event)

            bindings.add(*key.keys)(run)
        return bindings

    def up(self, _event: KeyPressEvent) -> None:
        if not self.modal():
            self.move(-1)

    def down(self, _event: KeyPressEvent) -> None:
        if not self.modal():
            self.move(1)

    def page_up(self, _event: KeyPressEvent) -> None:
        if not self.modal():
            self.page(-self.height)

    def page_down(self, _event: KeyPressEvent) -> None:
        if not self.modal():
            self.page(self.height)

    def enter(self, event: KeyPressEvent) -> None:
        if self.confirm is not None:
            self.confirm = None
            self.status = "Cancelled"
            return
        if self.ask is not None:
            ask, self.ask = self.ask, None
            self.apply(ask.then(self.answer), event.app)
            return
        value = self.selected()
        if value is not None:
            self.apply(self.source.choose(value, self.query), event.app)

    def escape(self, event: KeyPressEvent) -> None:
        if self.modal():
            self.ask = self.confirm = None
            self.status = "Cancelled"
        elif self.query:
            self.query = ""
            self.refresh(reset=True)
        else:
            event.app.exit()

    def cancel(self, event: KeyPressEvent) -> None:
        event.app.exit()

    def erase(self, _event: KeyPressEvent) -> None:
        if self.ask is not None:
            self.answer = self.answer[:-1]
        elif self.confirm is None and self.query:
            self.query = self.query[:-1]
            self.refresh(reset=True)

    def type_text(self, event: KeyPressEvent) -> None:
        text = event.data
        if not text.isprintable():
            return
        if self.confirm is not None:
            confirm, self.confirm = self.confirm, None
            if text.lower() == "y":
                self.apply(confirm.then(), event.app)
            else:
                self.status = "Cancelled"
            return
        if self.ask is not None:
            self.answer += text
            return
        self.query += text
        self.refresh(reset=True)

    def extra_key(self, key: PickerKey[T], event: KeyPressEvent) -> None:
        if not self.modal():
            self.apply(key.action(self.selected(), self.query), event.app)


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
    return await _Picker(source, query=query, height=height).run(pt_input, pt_output)


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
