"""The list picker: search, movement, choosing, key actions, text and confirm prompts, driven
through a prompt_toolkit pipe input (no terminal needed)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from prompt_toolkit.input import PipeInput
from prompt_toolkit.output import DummyOutput

from pi_context.cli.interactive.pickers.list import (
    AskText,
    Close,
    Confirm,
    OptionPicker,
    Outcome,
    PickerKey,
    PickerRow,
    PickerSource,
    Stay,
    fuzzy_score,
    run_picker,
)
from pi_context.cli.terminal_text import one_line

T = TypeVar("T")


class Fruits:
    def __init__(self) -> None:
        self.items = ["apple", "banana", "cherry"]
        self.log: list[str] = []

    def title(self) -> str:
        return "Fruit"

    def rows(self, query: str) -> Sequence[PickerRow[str]]:
        return [PickerRow(i, i) for i in self.items if fuzzy_score(query, i) is not None]

    def initial(self, rows: Sequence[PickerRow[str]]) -> int:
        return 0

    def choose(self, value: str, query: str) -> Outcome[str]:
        return Close(value)

    def _rename(self, value: str | None, _query: str) -> Outcome[str]:
        assert value is not None

        def then(text: str) -> Outcome[str]:
            self.items[self.items.index(value)] = text
            return Stay(f"renamed to {text}")

        return AskText("Name:", then, default=value)

    def _drop(self, value: str | None, _query: str) -> Outcome[str]:
        assert value is not None

        def then() -> Outcome[str]:
            self.items.remove(value)
            return Stay("dropped")

        return Confirm(f"Drop {value}?", then)

    def bindings(self) -> list[PickerKey[str]]:
        return [
            PickerKey(("c-r",), "Ctrl+R", "rename", self._rename),
            PickerKey(("c-d",), "Ctrl+D", "drop", self._drop),
        ]


async def _pick(pipe: PipeInput, source: PickerSource[T], keys: str, query: str = "") -> T | None:
    pipe.send_text(keys)
    return await run_picker(source, pt_input=pipe, pt_output=DummyOutput(), query=query)


async def test_enter_chooses_the_selected_row_and_arrows_wrap(pipe: PipeInput) -> None:
    assert await _pick(pipe, Fruits(), "\r") == "apple"
    assert await _pick(pipe, Fruits(), "\x1b[B\r") == "banana"  # Down
    assert await _pick(pipe, Fruits(), "\x1b[A\r") == "cherry"  # Up wraps to the last


async def test_typing_searches_and_backspace_widens_again(pipe: PipeInput) -> None:
    assert await _pick(pipe, Fruits(), "chy\r") == "cherry"
    assert await _pick(pipe, Fruits(), "chy\x7f\x7f\x7f\x1b[B\r") == "banana"
    assert await _pick(pipe, Fruits(), "\r", query="nan") == "banana"


async def test_escape_clears_the_search_then_closes(pipe: PipeInput) -> None:
    assert await _pick(pipe, Fruits(), "zzz\x1b\x1b[B\r") == "banana"
    assert await _pick(pipe, Fruits(), "\x1b") is None
    assert await _pick(pipe, Fruits(), "\x03") is None  # Ctrl-C


async def test_enter_on_an_empty_list_does_nothing(pipe: PipeInput) -> None:
    assert await _pick(pipe, Fruits(), "zzz\r\x1b\x1b") is None


async def test_a_key_action_asks_for_text_and_stays(pipe: PipeInput) -> None:
    fruits = Fruits()
    # Ctrl+R, erase "apple" and type "apricot", Enter saves; then Enter chooses it
    chosen = await _pick(pipe, fruits, "\x12" + "\x7f" * 5 + "apricot\r\r")
    assert chosen == "apricot"
    assert fruits.items == ["apricot", "banana", "cherry"]


async def test_escape_cancels_a_text_question(pipe: PipeInput) -> None:
    fruits = Fruits()
    assert await _pick(pipe, fruits, "\x12xyz\x1b\r") == "apple"
    assert fruits.items == ["apple", "banana", "cherry"]


async def test_confirm_needs_y(pipe: PipeInput) -> None:
    fruits = Fruits()
    assert await _pick(pipe, fruits, "\x04n\x1b") is None
    assert fruits.items == ["apple", "banana", "cherry"]
    assert await _pick(pipe, fruits, "\x04y\r") == "banana"
    assert fruits.items == ["banana", "cherry"]


async def test_option_picker_returns_the_index(pipe: PipeInput) -> None:
    options = OptionPicker("Which?", ["Continue", "Fork", "Cancel"], initial=1)
    assert await _pick(pipe, options, "\r") == 1
    assert await _pick(pipe, OptionPicker("Which?", ["a", "b"]), "\x1b[B\r") == 1


def test_fuzzy_score_prefers_whole_words_and_early_matches() -> None:
    assert fuzzy_score("", "anything") == 0
    assert fuzzy_score("xyz", "abc") is None
    assert fuzzy_score("snt", "claude-sonnet") is not None
    whole = fuzzy_score("sonnet", "claude-sonnet")
    spread = fuzzy_score("sonnet", "s-o-n-n-e-t")
    assert whole is not None
    assert spread is not None
    assert whole < spread
    assert fuzzy_score("gpt mini", "openai gpt-5-mini") is not None
    assert fuzzy_score("gpt maxi", "openai gpt-5-mini") is None


def test_one_line_makes_text_terminal_safe() -> None:
    assert one_line("two\nlines  here") == "two lines here"
    shown = one_line("name\x1b]52;c;aGk=\x07 \x1b[31mred\x1b[0m")
    assert "\x1b" not in shown
    assert "\x07" not in shown
    assert "␛]52;c;aGk=␇" in shown
    assert "red" in shown
