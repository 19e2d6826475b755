"""The terminal-safe text rule and the console that applies it."""

from __future__ import annotations

import io
import json
import re

from hypothesis import given
from hypothesis import strategies as st
from rich.markdown import Markdown
from rich.text import Text

from pi_context.cli.interactive.terminal_console import TerminalConsole
from pi_context.cli.terminal_text import (
    json_for_terminal,
    terminal_safe,
    text_for_stream,
    well_formed,
)

OSC52 = "\x1b]52;c;SGVsbG8=\x07"
TITLE = "\x1b]0;PWNED\x1b\\"
# what no terminal-safe text may hold: C0 but tab/newline, DEL, C1, lone surrogates
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")


def test_osc_sequences_become_visible_and_inert() -> None:
    assert terminal_safe(f"a{OSC52}b") == "a␛]52;c;SGVsbG8=␇b"
    assert terminal_safe(f"x{TITLE}y") == "x␛]0;PWNED␛\\y"
    assert terminal_safe("\x9d0;t\x9c") == "\\x9d0;t\\x9c"


def test_csi_sequences_are_removed() -> None:
    assert terminal_safe("\x1b[31mred\x1b[0m \x1b[2J\x1b[1;1H\x9b2Kdone") == "red done"


def test_other_controls_are_shown_and_tab_newline_kept() -> None:
    assert terminal_safe("a\tb\nc\r\nd\re\x00\x08\x7f") == "a\tb\nc\nd␍e␀␈␡"


def test_lone_surrogates_are_shown_as_replacement_characters() -> None:
    assert terminal_safe("ok \ud800 \udfff 😀") == "ok \ufffd \ufffd 😀"
    assert well_formed("\ud83d") == "\ufffd"


def test_ordinary_text_is_returned_unchanged() -> None:
    text = "Résumé — 日本語\tline\n😀 [bold] <b> \\x1b"
    assert terminal_safe(text) is text


@given(st.text())
def test_nothing_unsafe_survives(text: str) -> None:
    shown = terminal_safe(text)
    assert not UNSAFE.search(shown)
    assert terminal_safe(shown) == shown
    shown.encode("utf-8")


@given(st.text())
def test_json_for_terminal_keeps_the_value(text: str) -> None:
    dumped = json.dumps({"t": text}, ensure_ascii=False)
    safe = json_for_terminal(dumped)
    assert json.loads(safe) == {"t": text}
    assert not re.search("[\x00-\x1f\x7f-\x9f]", safe)


class _Stream(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self._tty = tty

    def isatty(self) -> bool:
        return self._tty


def test_stream_text_is_data_in_a_pipe_and_safe_on_a_terminal() -> None:
    text = f"x{OSC52}\ud800"
    assert text_for_stream(text, _Stream(tty=False)) == f"x{OSC52}\ufffd"
    assert text_for_stream(text, _Stream(tty=True)) == "x␛]52;c;SGVsbG8=␇\ufffd"


def _console() -> tuple[TerminalConsole, io.StringIO]:
    out = io.StringIO()
    return TerminalConsole(file=out, force_terminal=True, width=100, color_system="truecolor"), out


def test_console_shows_markdown_and_text_safely_but_keeps_its_own_styles() -> None:
    console, out = _console()
    console.print(Markdown(f"**bold** {OSC52} done \ud800"))
    console.print(Text(f"name {TITLE}", style="red"))
    shown = out.getvalue()
    assert "\x1b]52" not in shown
    assert "\x1b]0;" not in shown
    assert "␛]52;c;SGVsbG8=" in shown
    assert "\ufffd" in shown
    assert "\x1b[1m" in shown  # rich's own bold is still emitted


def test_console_drops_links_whose_target_holds_a_control() -> None:
    console, out = _console()
    console.print(Text("click", style=f"link https://e.test/{OSC52}"))
    console.print(Text("fine", style="link https://e.test/ok"))
    shown = out.getvalue()
    assert "\x1b]52" not in shown
    assert "click" in shown
    assert "\x1b]8;id=" in shown  # the ordinary link is kept
    assert "https://e.test/ok" in shown
