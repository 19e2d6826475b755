"""The full-screen ``/tree`` selector, the ``Summarize branch?`` dialog and the instructions
editor, on prompt_toolkit (pi 1.6.0's tree selector, agent-parity.md §5.4).

What is shown comes from :class:`~pi_context.cli.interactive.tree.view.TreeView`; this module only
draws it and maps keys onto it. Every text from the session (messages, labels, tool arguments) is
drawn through :func:`~pi_context.cli.terminal_text.terminal_safe`.

Keys: Up/Down move (wrapping); Left/Right and PageUp/PageDown page; Ctrl+Left/Alt+Left and
Ctrl+Right/Alt+Right fold/unfold a branch segment or jump between segment starts; Enter
selects; Esc clears the search, else closes; Shift+L edits the label; Shift+T toggles label
times; Ctrl+X copies the entry's text; Ctrl+D/T/U/L/A pick a filter; Ctrl+O and Shift+Ctrl+O
cycle the filters; printable characters search; Backspace deletes from the search.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

from prompt_toolkit.application import Application
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.document import Document
from prompt_toolkit.filters import Condition, Filter
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.input import Input
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.keys import Keys
from prompt_toolkit.layout import (
    BufferControl,
    ConditionalContainer,
    FormattedTextControl,
    HSplit,
    Layout,
    Window,
)
from prompt_toolkit.output import Output
from prompt_toolkit.styles import Style

from pi_context.cli.interactive.tree.view import FILTERS, TreeView, entry_text, visible_height
from pi_context.cli.terminal_text import terminal_safe
from pi_context.export import SessionDocument

__all__ = [
    "SUMMARY_CHOICES",
    "TreeSelector",
    "choose_summary",
    "edit_instructions",
]

SUMMARY_CHOICES: Final = ("No summary", "Summarize", "Summarize with custom prompt")
"""The ``Summarize branch?`` dialog's options, in pi's order."""

_ESC_WAIT: Final = 0.05
"""Seconds a lone Esc waits for the rest of an escape sequence (Alt+Left starts with Esc)."""

_SHIFT_CTRL_O: Final = (
    (Keys.Escape, "[", "7", "9", ";", "6", "u"),  # CSI-u (kitty, foot, WezTerm, …)
    (Keys.Escape, "[", "2", "7", ";", "6", ";", "7", "9", "~"),  # xterm modifyOtherKeys
)
"""How terminals that report Shift+Ctrl+O send it (the others send plain Ctrl+O)."""

_STYLE: Final = Style.from_dict(
    {
        "title": "bold",
        "dim": "#888888",
        "selected": "reverse",
        "path": "",
        "active": "bold",
        "label": "#d7af00",
        "status": "#5fafff",
        "search": "bold",
    }
)

LabelSetter = Callable[[str, str | None], SessionDocument]
"""Record ``label`` (``None`` removes it) on an entry; returns the session as it is now."""
Copier = Callable[[str], bool]
"""Put text on the system clipboard; ``False`` when there is no clipboard."""


def _safe(text: str) -> str:
    return terminal_safe(text).replace("\n", " ").replace("\t", " ")


class TreeSelector:
    """One full-screen run of the tree selector over ``view``; :meth:`run` returns the id of
    the selected entry, or ``None`` when closed."""

    def __init__(
        self,
        view: TreeView,
        *,
        set_label: LabelSetter,
        copy: Copier,
        pt_input: Input | None = None,
        pt_output: Output | None = None,
    ) -> None:
        self.view = view
        self._set_label = set_label
        self._copy = copy
        self.status = ""
        """The last notice (copied, label saved, …), shown above the key help."""
        self._labeling: str | None = None
        """The entry whose label is being edited."""
        self._label_buffer = Buffer(multiline=False)
        editing = Condition(lambda: self._labeling is not None)
        body = Window(FormattedTextControl(self._tree_lines), wrap_lines=False)
        label_line = ConditionalContainer(
            HSplit(
                [
                    Window(
                        FormattedTextControl(
                            [("class:title", "Label (empty to remove):")], show_cursor=False
                        ),
                        height=1,
                    ),
                    Window(BufferControl(self._label_buffer), height=1),
                ]
            ),
            filter=editing,
        )
        layout = HSplit(
            [
                Window(FormattedTextControl(self._header), height=2, wrap_lines=False),
                body,
                label_line,
                Window(FormattedTextControl(self._footer), height=3, wrap_lines=False),
            ]
        )
        self.app: Application[str | None] = Application(
            layout=Layout(layout, focused_element=body),
            key_bindings=self._bindings(~editing, editing),
            full_screen=True,
            style=_STYLE,
            input=pt_input,
            output=pt_output,
        )
        self.app.ttimeoutlen = _ESC_WAIT
        self.app.timeoutlen = _ESC_WAIT

    async def run(self) -> str | None:
        return await self.app.run_async()

    # -- drawing -------------------------------------------------------------------------------

    def _fit_height(self) -> None:
        self.view.height = visible_height(self.app.output.get_size().rows)

    def _header(self) -> StyleAndTextTuples:
        view = self.view
        filters = " ".join(f"[{f}]" if f == view.filter_mode else f for f in FILTERS)
        line: StyleAndTextTuples = [
            ("class:title", "Session tree"),
            ("class:dim", f"  filter: {filters}"),
            ("", "\n"),
        ]
        if view.query:
            line.append(("class:search", f"Search: {_safe(view.query)}"))
        else:
            line.append(("class:dim", "Type to search"))
        return line

    def _tree_lines(self) -> StyleAndTextTuples:
        self._fit_height()
        view = self.view
        if view.row_count == 0:
            return [("class:dim", "  No entries match the filter and search")]
        start, rows = view.window()
        lines: StyleAndTextTuples = []
        for row in rows:
            style = "class:selected" if row.selected else ""
            if row.is_leaf:
                style += " class:active"
            lines.append((style, "› " if row.selected else "  "))
            lines.append((style + " class:dim", _safe(row.prefix)))
            if row.label is not None:
                stamp = f" {row.label_time}" if view.show_label_times and row.label_time else ""
                lines.append((style + " class:label", f"[{_safe(row.label)}{stamp}] "))
            lines.append((style, _safe(row.text)))
            if row.is_leaf:
                lines.append((style + " class:dim", " ← active"))
            lines.append(("", "\n"))
        shown = f"({start + 1}-{start + len(rows)}/{view.row_count})"
        lines.append(("class:dim", shown))
        return lines

    def _footer(self) -> StyleAndTextTuples:
        return [
            ("class:status", _safe(self.status)),
            ("", "\n"),
            ("class:dim", "↑↓ move · ←→ page · Ctrl+←→ fold/jump · Enter select · Esc close"),
            ("", "\n"),
            ("class:dim", "Shift+L label · Shift+T times · Ctrl+X copy · Ctrl+D/T/U/L/A/O filter"),
        ]

    # -- keys ------------------------------------------------------------------------------------

    def _bindings(self, browsing: Filter, editing: Filter) -> KeyBindings:
        kb = KeyBindings()
        view = self.view

        def on(*keys: str | Keys, when: Filter = browsing) -> Callable[..., object]:
            def register(action: Callable[[], object]) -> Callable[..., object]:
                @kb.add(*keys, filter=when)
                def _(event: KeyPressEvent) -> None:
                    self.status = ""
                    action()

                return action

            return register

        on(Keys.Up)(lambda: view.move(-1))
        on(Keys.Down)(lambda: view.move(1))
        for key in (Keys.Left, Keys.PageUp):
            on(key)(lambda: view.page(-1))
        for key in (Keys.Right, Keys.PageDown):
            on(key)(lambda: view.page(1))
        on(Keys.ControlLeft)(view.fold_or_previous)
        on(Keys.Escape, Keys.Left)(view.fold_or_previous)
        on(Keys.ControlRight)(view.unfold_or_next)
        on(Keys.Escape, Keys.Right)(view.unfold_or_next)
        on(Keys.ControlD)(lambda: view.set_filter("default"))
        on(Keys.ControlT)(view.toggle_no_tools)
        on(Keys.ControlU)(lambda: view.set_filter("user-only"))
        on(Keys.ControlL)(lambda: view.set_filter("labeled-only"))
        on(Keys.ControlA)(lambda: view.set_filter("all"))
        on(Keys.ControlO)(lambda: view.cycle_filter(True))
        for sequence in _SHIFT_CTRL_O:
            on(*sequence)(lambda: view.cycle_filter(False))
        on("T")(view.toggle_label_times)
        on("L")(self._start_label)
        on(Keys.ControlX)(self._copy_selected)
        on(Keys.Backspace)(view.backspace)
        on(Keys.ControlH)(view.backspace)

        @kb.add(Keys.Enter, filter=browsing)
        def _select(event: KeyPressEvent) -> None:
            if view.selected_id is not None:
                event.app.exit(result=view.selected_id)

        @kb.add(Keys.Escape, filter=browsing)
        def _escape(event: KeyPressEvent) -> None:
            self.status = ""
            if not view.clear_search():
                event.app.exit(result=None)

        @kb.add(Keys.ControlC, filter=browsing)
        def _close(event: KeyPressEvent) -> None:
            event.app.exit(result=None)

        @kb.add(Keys.Any, filter=browsing)
        def _type(event: KeyPressEvent) -> None:
            if event.data.isprintable():
                self.status = ""
                view.type(event.data)

        @kb.add(Keys.BracketedPaste, filter=browsing)
        def _paste(event: KeyPressEvent) -> None:
            view.type(" ".join(event.data.split()))

        @kb.add(Keys.Enter, filter=editing)
        def _save_label(event: KeyPressEvent) -> None:
            self._finish_label(save=True)

        @kb.add(Keys.Escape, filter=editing)
        @kb.add(Keys.ControlC, filter=editing)
        def _cancel_label(event: KeyPressEvent) -> None:
            self._finish_label(save=False)

        return kb

    def _start_label(self) -> None:
        entry_id = self.view.selected_id
        if entry_id is None:
            return
        self._labeling = entry_id
        current = self.view.row(self.view.selected_index or 0).label or ""
        self._label_buffer.set_document(Document(current, len(current)), bypass_readonly=True)
        self.app.layout.focus(self._label_buffer)

    def _finish_label(self, *, save: bool) -> None:
        target = self._labeling
        self._labeling = None
        self.app.layout.focus_last()
        if not save or target is None:
            return
        text = self._label_buffer.text.strip()
        self.view.reload(self._set_label(target, text or None))
        self.status = f"Label set: {text}" if text else "Label removed"

    def _copy_selected(self) -> None:
        entry = self.view.selected_entry
        if entry is None:
            return
        if self._copy(entry_text(entry)):
            self.status = "Copied selected message to clipboard"
        else:
            self.status = "No clipboard available (install wl-copy, xclip or xsel)"


class _Choice:
    """A small inline list: Up/Down (k/j) move, Enter picks, Esc/Ctrl+C cancels."""

    def __init__(
        self,
        title: str,
        options: Sequence[str],
        pt_input: Input | None,
        pt_output: Output | None,
    ) -> None:
        self.title = title
        self.options = list(options)
        self.at = 0
        kb = KeyBindings()

        @kb.add(Keys.Up)
        @kb.add("k")
        def _up(event: KeyPressEvent) -> None:
            self.at = (self.at - 1) % len(self.options)

        @kb.add(Keys.Down)
        @kb.add("j")
        def _down(event: KeyPressEvent) -> None:
            self.at = (self.at + 1) % len(self.options)

        @kb.add(Keys.Enter)
        def _pick(event: KeyPressEvent) -> None:
            event.app.exit(result=self.at)

        @kb.add(Keys.Escape)
        @kb.add(Keys.ControlC)
        def _cancel(event: KeyPressEvent) -> None:
            event.app.exit(result=None)

        self.app: Application[int | None] = Application(
            layout=Layout(Window(FormattedTextControl(self._lines), dont_extend_height=True)),
            key_bindings=kb,
            style=_STYLE,
            input=pt_input,
            output=pt_output,
            erase_when_done=True,
        )
        self.app.ttimeoutlen = _ESC_WAIT
        self.app.timeoutlen = _ESC_WAIT

    def _lines(self) -> StyleAndTextTuples:
        lines: StyleAndTextTuples = [("class:title", self.title), ("", "\n")]
        for index, option in enumerate(self.options):
            chosen = index == self.at
            lines.append(("class:selected" if chosen else "", f"{'›' if chosen else ' '} {option}"))
            lines.append(("", "\n"))
        lines.append(("class:dim", "↑↓ choose · Enter confirm · Esc back to the tree"))
        return lines


async def choose_summary(
    pt_input: Input | None = None, pt_output: Output | None = None
) -> int | None:
    """The ``Summarize branch?`` dialog: the index into :data:`SUMMARY_CHOICES`, ``None`` on Esc."""
    return await _Choice("Summarize branch?", SUMMARY_CHOICES, pt_input, pt_output).app.run_async()


async def edit_instructions(
    pt_input: Input | None = None, pt_output: Output | None = None
) -> str | None:
    """The ``Custom summarization instructions`` editor: Enter submits, Alt+Enter adds a line,
    Esc cancels (``None``)."""
    buffer = Buffer(multiline=True)
    kb = KeyBindings()

    @kb.add(Keys.Enter)
    def _submit(event: KeyPressEvent) -> None:
        event.app.exit(result=buffer.text)

    @kb.add(Keys.Escape, Keys.Enter)
    def _newline(event: KeyPressEvent) -> None:
        buffer.insert_text("\n")

    @kb.add(Keys.Escape)
    @kb.add(Keys.ControlC)
    def _cancel(event: KeyPressEvent) -> None:
        event.app.exit(result=None)

    layout = HSplit(
        [
            Window(
                FormattedTextControl([("class:title", "Custom summarization instructions")]),
                height=1,
            ),
            Window(BufferControl(buffer), dont_extend_height=True, wrap_lines=True),
            Window(
                FormattedTextControl(
                    [("class:dim", "Enter summarize · Alt+Enter new line · Esc back")]
                ),
                height=1,
            ),
        ]
    )
    app: Application[str | None] = Application(
        layout=Layout(layout, focused_element=buffer),
        key_bindings=kb,
        style=_STYLE,
        input=pt_input,
        output=pt_output,
        erase_when_done=True,
    )
    app.ttimeoutlen = _ESC_WAIT
    app.timeoutlen = _ESC_WAIT
    return await app.run_async()
