"""Interactive mode: ``pictx`` with no prompt in a terminal.

* Input: prompt_toolkit with persistent history (``<agentDir>/pictx-history``), completion of
  slash commands and ``/skill:<name>``, ``@`` file references and Tab path completion (see
  :mod:`pi_context.cli.interactive.completion`), multi-line input (Alt+Enter or Esc Enter inserts a
  newline, as does Enter after a trailing backslash; pasted text keeps its newlines).
* Output: the answer streams as Markdown; thinking is dimmed; tool calls and their collapsed
  results are shown as they run (see :mod:`pi_context.cli.interactive.render`).
* Status: model, context tokens of the window (with percent), cache hit ratio and cost, in the
  bottom toolbar while typing and printed after every run.
* Typing while an answer runs: Enter queues the line as steering (delivered after the running
  tool calls), Alt+Enter as a follow-up (delivered when the agent would stop), Alt+Up takes
  every queued message back into the next input line; an extension command finished with Enter
  runs at once, a built-in slash command or a ``!command`` when the answer ends, and text
  without Enter waits in the next input line.
* ``!command`` runs a shell command, its output shown as it arrives and recorded in the
  session for the model; ``!!command`` records it kept out of the model's context (see
  :mod:`pi_context.cli.interactive.user_shell`).
* Ctrl+P / Alt+P (Shift+Ctrl+P where the terminal reports it) cycle the model scope forward /
  backward, Shift+Tab the thinking level; Ctrl+L opens the model picker. Slash commands that
  choose something (``/model``, ``/resume``, ...) show a list picker
  (:mod:`pi_context.cli.interactive.pickers.list`) when the input is a terminal.
* Ctrl+V or Alt+V pastes from the clipboard: file paths, an image saved to a temporary file
  (its path is inserted), or text (see :mod:`pi_context.cli.interactive.clipboard_paste`).
* Shift+Enter or Ctrl+J inserts a newline; Ctrl+G edits the input in an external editor,
  Ctrl+Z suspends, Ctrl+O expands tool output, Ctrl+T hides thinking, Ctrl+X (and ``/copy``)
  copies the last answer (see :mod:`pi_context.cli.interactive.editor_habits`); every
  application key comes from pi's ``keybindings.json`` when it remaps it
  (:mod:`pi_context.cli.interactive.keymap`).
* Esc or Ctrl-C during a run aborts it (a second press cancels outright; Esc first takes the
  queued messages back); Ctrl-C at the prompt clears the line, Ctrl-D or ``/quit`` leaves.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import signal
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from prompt_toolkit import PromptSession
from prompt_toolkit.application import get_app, run_in_terminal
from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document
from prompt_toolkit.filters import Condition
from prompt_toolkit.history import FileHistory, History, InMemoryHistory
from prompt_toolkit.input import Input
from prompt_toolkit.input.ansi_escape_sequences import ANSI_SEQUENCES
from prompt_toolkit.input.typeahead import get_typeahead, store_typeahead
from prompt_toolkit.key_binding import (
    DynamicKeyBindings,
    KeyBindings,
    KeyBindingsBase,
    KeyPressEvent,
    merge_key_bindings,
)
from prompt_toolkit.key_binding.key_processor import KeyPress
from prompt_toolkit.keys import Keys
from prompt_toolkit.layout.dimension import Dimension
from prompt_toolkit.layout.menus import CompletionsMenu
from prompt_toolkit.output import Output
from rich.console import Console
from rich.text import Text

from pi_context.cli.app.agent_api import AgentApi, no_model_help
from pi_context.cli.interactive.clipboard_paste import clipboard_key_bindings
from pi_context.cli.interactive.completion import (
    EditorCompleter,
    completion_key_bindings,
    tab_path_inserted,
)
from pi_context.cli.interactive.editor_habits import (
    ENABLE_EXTENDED_KEYS,
    RESET_EXTENDED_KEYS,
    DisplayState,
    HabitActions,
    copy_last_answer,
    editor_habit_bindings,
    external_editor_command,
    last_answer_text,
)
from pi_context.cli.interactive.keymap import Keymap, KeySeq, load_keymap
from pi_context.cli.interactive.pickers.list import PickerSource, run_picker
from pi_context.cli.interactive.progress import RunProgress
from pi_context.cli.interactive.render import EventRenderer
from pi_context.cli.interactive.slash import commands_for, run_slash
from pi_context.cli.interactive.stats import status_line
from pi_context.cli.interactive.terminal_console import TerminalConsole
from pi_context.cli.interactive.theme import apply_theme, refresh_theme, show_warnings
from pi_context.cli.terminal_text import terminal_safe
from pi_context.errors import PiContextError
from pi_context.events import AgentEvent
from pi_context.messages import ImageContent

if TYPE_CHECKING:
    from pi_context.cli.rpc.user_bash import UserBash

__all__ = ["InteractiveShell", "SlashCompleter", "run_interactive"]

T = TypeVar("T")

_ERASE_KEYS = (Keys.ControlH, Keys.Backspace)
_QUEUE_HINT = "↳ Alt+Up to edit all queued messages"
_ESC_FLUSH_SECONDS = 0.05
CLEAR_TWICE_SECONDS = 0.5
"""pi's window for a second Ctrl+C (exit) or a second Esc (``doubleEscapeAction``)."""
"""How long a lone Esc waits for the rest of an escape sequence before it counts as Esc."""


class SlashCompleter(Completer):
    """Completes ``/commands`` (built-ins and the session's extension commands) and
    ``/skill:<name>`` at the start of the input."""

    def __init__(self, agent: Callable[[], AgentApi]) -> None:
        self._agent = agent

    def get_completions(
        self, document: Document, _complete_event: CompleteEvent
    ) -> Iterable[Completion]:
        text = document.text_before_cursor
        if not text.startswith("/") or " " in text or "\n" in text:
            return
        agent = self._agent()
        commands = commands_for(agent)
        candidates = [(c.name, c.help) for c in commands if c.completes]
        candidates += [(f"skill:{name}", "skill") for name in agent.skill_names()]
        for name, meta in candidates:
            if ("/" + name).startswith(text):
                yield Completion("/" + name, start_position=-len(text), display_meta=meta)


# Shift+Ctrl+P reaches the program only from terminals that report modifiers (xterm's
# modifyOtherKeys, the kitty keyboard protocol); prompt_toolkit has no name for it, so its
# sequences are read as F24, a key no keyboard sends, bound to "previous model".
_SHIFT_CTRL_P = Keys.F24
for _sequence in ("\x1b[27;6;80~", "\x1b[27;6;112~", "\x1b[80;6u", "\x1b[112;6u"):
    ANSI_SEQUENCES.setdefault(_sequence, _SHIFT_CTRL_P)


def _key_bindings(
    cycle_thinking: Callable[[], None],
    cycle_model: Callable[[bool], None],
    open_model_picker: Callable[[KeyPressEvent], None],
    keymap: Keymap | None = None,
    escape_on_empty: Callable[[KeyPressEvent, bool], None] | None = None,
) -> KeyBindings:
    """The prompt's application keys, on the keys of ``keymap`` (pi's action ids)."""
    keymap = keymap if keymap is not None else load_keymap(None)
    bindings = KeyBindings()

    on = keymap.binder(bindings)

    if escape_on_empty is not None:
        on_empty = escape_on_empty

        empty = Condition(lambda: not get_app().current_buffer.text.strip())

        @bindings.add(Keys.Escape, filter=empty)
        def _escape(event: KeyPressEvent) -> None:  # doubleEscapeAction
            on_empty(event, False)

        # an Esc waits (prompt_toolkit's timeoutlen) for a key that would make it Alt+key, so
        # a quick second Esc arrives with the first: the pair is the double press
        @bindings.add(Keys.Escape, Keys.Escape, filter=empty)
        def _escape_twice(event: KeyPressEvent) -> None:
            on_empty(event, True)

    @on("app.model.cycleForward")  # Ctrl+P
    def _next_model(event: KeyPressEvent) -> None:
        cycle_model(True)
        event.app.invalidate()

    @on("app.model.cycleBackward")  # Shift+Ctrl+P; Alt+P where that does not reach us
    def _previous_model(event: KeyPressEvent) -> None:
        cycle_model(False)
        event.app.invalidate()

    @on("app.model.select")  # Ctrl+L
    def _model_picker(event: KeyPressEvent) -> None:
        open_model_picker(event)

    @on("app.thinking.cycle")  # Shift+Tab
    def _cycle_thinking(event: KeyPressEvent) -> None:
        cycle_thinking()
        event.app.invalidate()

    @on("app.message.followUp")  # Alt+Enter: at the prompt, a new line (a follow-up in a run)
    def _newline(event: KeyPressEvent) -> None:
        event.current_buffer.insert_text("\n")

    @on("tui.input.submit")  # Enter
    def _enter(event: KeyPressEvent) -> None:
        buffer = event.current_buffer
        state = buffer.complete_state
        if (
            state is not None
            and state.current_completion is not None
            and not tab_path_inserted(state)
        ):
            buffer.apply_completion(state.current_completion)
            return
        if buffer.text.endswith("\\") and buffer.cursor_position == len(buffer.text):
            buffer.delete_before_cursor(1)
            buffer.insert_text("\n")
            return
        buffer.validate_and_handle()

    return bindings


class InteractiveShell:
    """The read-run-render loop; implements :class:`pi_context.cli.interactive.shell.Shell`."""

    def __init__(
        self,
        agent: AgentApi,
        *,
        console: Console | None = None,
        history: History | None = None,
        pt_input: Input | None = None,
        pt_output: Output | None = None,
        notes: Sequence[str] = (),
        verbose: bool = False,
        pickers: bool | None = None,
        keymap: Keymap | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.agent = agent
        self.keymap = keymap if keymap is not None else load_keymap(agent.agent_dir)
        """The keys of pi's actions, ``keybindings.json`` applied (its problems shown once)."""
        self.display = DisplayState(
            hide_thinking=agent.settings_data().get("hideThinkingBlock") is True,
            expand_key=self.keymap.label("app.tools.expand"),
        )
        """Tool output expanded or not, thinking hidden or not (Ctrl+O, Ctrl+T)."""
        self._clock = clock
        self._last_clear = -math.inf
        """When Ctrl+C last cleared the editor (a second one within the window exits)."""
        self._last_escape = -math.inf
        self._escape_command: str | None = None
        """``/tree`` or ``/fork``, asked for by a double Esc on an empty editor."""
        self._notes = list(notes)
        """Shown once under the header (which model was chosen, and why)."""
        self._verbose = verbose
        """``--verbose``: the header also lists what the session loaded."""
        # everything shown goes through the terminal-safe console (no control sequence from a
        # file, a model or a tool reaches the terminal)
        self.console = console or TerminalConsole()
        self._theme_warnings = apply_theme(self.console, agent)  # shown under the header
        self.cwd = Path(agent.session.cwd or Path.cwd())
        self._bindings = self._keymap_bindings()
        """The prompt's own keys (rebuilt when ``/reload`` reads ``keybindings.json`` again)."""
        self._quit = False
        self._editor = ""
        self._input = pt_input
        self._prompt: PromptSession[str] = PromptSession(
            history=history or InMemoryHistory(),
            completer=EditorCompleter(SlashCompleter(lambda: self.agent), lambda: self.cwd),
            complete_while_typing=True,
            key_bindings=DynamicKeyBindings(lambda: self._bindings),
            multiline=True,
            bottom_toolbar=lambda: self._status or self.status(),
            input=pt_input,
            output=pt_output,
        )
        self._unsubscribe: Callable[[], None] | None = None
        self._renderer: EventRenderer | None = None
        self._busy = False
        self._side_work: set[asyncio.Future[bool]] = set()
        """Extension commands started while an answer runs."""
        self._status = ""
        """The last computed status line (the toolbar is redrawn on every key press)."""
        self._model_picker_requested = False
        self._user_bash: UserBash | None = None
        """Runs ``!command`` lines (created with the first one)."""
        self.pickers = self._is_tty(self._key_input()) if pickers is None else pickers
        """Slash commands show list pickers (else their text forms: a terminal is needed)."""
        self._fit_completion_menu()
        self._listen()

    def _keymap_bindings(self) -> KeyBindingsBase:
        return merge_key_bindings(
            [
                _key_bindings(
                    self.cycle_thinking,
                    self.cycle_model,
                    self._open_model_picker,
                    self.keymap,
                    self._escape_on_empty,
                ),
                clipboard_key_bindings(
                    self._paste_failed,
                    keys=self.keymap.sequences("app.clipboard.pasteImage"),
                ),
                editor_habit_bindings(self.keymap, self._habit_actions()),
                completion_key_bindings(),  # last: wins over Enter in an open @ list
            ]
        )

    def reload_keymap(self) -> None:
        """``/reload``: read ``keybindings.json`` again (its problems shown again)."""
        self.keymap = load_keymap(self.agent.agent_dir)
        self.display.expand_key = self.keymap.label("app.tools.expand")
        self._bindings = self._keymap_bindings()
        for problem in self.keymap.problems:
            self.console.print(Text(terminal_safe(problem), style="yellow"), soft_wrap=True)

    def suspend_now(self) -> bool:
        """The suspend key during a run: stop at once (the terminal as it was before pictx),
        carry on after ``fg``; ``False`` where there is no terminal or job control."""
        keys = self._key_input()
        if not hasattr(signal, "SIGTSTP") or not self._is_tty(keys):
            return False
        output = self._prompt.output
        output.write_raw(RESET_EXTENDED_KEYS)
        output.flush()
        with keys.cooked_mode():
            os.kill(0, signal.SIGTSTP)
        output.write_raw(ENABLE_EXTENDED_KEYS)
        output.flush()
        return True

    def _habit_actions(self) -> HabitActions:
        return HabitActions(
            notice=lambda line, style: self.console.print(Text(line, style=style)),
            editor_command=lambda: external_editor_command(self.agent.settings_data()),
            toggle_tools=lambda: _above_prompt(self.toggle_tools),
            toggle_thinking=lambda: _above_prompt(self.toggle_thinking),
            copy=lambda: _above_prompt(self.copy_last_answer),
            output=lambda: self._prompt.output if self._is_tty(self._key_input()) else None,
            cwd=lambda: self.cwd,
        )

    # -- display toggles and copying (pi's app.tools.expand, app.thinking.toggle, /copy) ---

    def toggle_tools(self) -> None:
        """Ctrl+O: tool output in full from now on (the last run's collapsed outputs printed
        in full now), or collapsed again."""
        display = self.display
        display.tools_expanded = not display.tools_expanded
        if display.tools_expanded:
            for shown in display.collapsed:
                self.console.print(Text(f"▶ {shown.title} (in full)", style="cyan"))
                self.console.print(
                    Text(shown.text.rstrip("\n"), style="red" if shown.is_error else "dim")
                )
            display.collapsed.clear()
        state = "expanded" if display.tools_expanded else "collapsed"
        self.console.print(Text(f"Tool output: {state}", style="dim"))

    def toggle_thinking(self) -> None:
        """Ctrl+T: hide or show thinking blocks; saved as ``hideThinkingBlock`` (global)."""
        from pi_context.cli.app.saved_settings import update_global_settings

        display = self.display
        display.hide_thinking = not display.hide_thinking
        try:
            update_global_settings(
                self.agent.agent_dir, {"hideThinkingBlock": display.hide_thinking}
            )
        except PiContextError as exc:
            self.console.print(Text(f"pictx: {exc}", style="red"))
        self.agent.override_settings({"hideThinkingBlock": display.hide_thinking})
        state = "hidden" if display.hide_thinking else "visible"
        self.console.print(Text(f"Thinking blocks: {state}", style="dim"))

    def copy_last_answer(self) -> None:
        """Ctrl+X and ``/copy``: the last assistant answer to the clipboard."""
        messages = [
            message
            for entry in self.agent.session.branch_view()
            if (message := entry.message) is not None
        ]
        output = self._prompt.output if self._is_tty(self._key_input()) else None

        def write(sequence: str) -> None:
            assert output is not None
            output.write_raw(sequence)
            output.flush()

        copied, line = copy_last_answer(
            last_answer_text(messages), write if output is not None else None
        )
        self.console.print(Text(line, style="dim" if copied else "red"))

    def _paste_failed(self, message: str) -> None:
        """Ctrl+V found nothing usable: say why above the prompt (the typed line stays)."""
        run_in_terminal(lambda: self.console.print(Text(message, style="red")))

    # -- Shell protocol ----------------------------------------------------------------------

    async def ask(self, question: str, default: str = "", *, secret: bool = False) -> str:
        session: PromptSession[str] = PromptSession(input=self._input, output=self._prompt.output)
        try:
            # a secret is shown as asterisks and kept out of the input history
            return await session.prompt_async(question, default=default, is_password=secret)
        except (KeyboardInterrupt, EOFError):
            return ""

    async def pick(self, source: PickerSource[T], query: str = "") -> T | None:
        app = self._prompt.app
        rows = app.output.get_size().rows if self._is_tty(app.input) else 24
        return await run_picker(
            source,
            pt_input=app.input,
            pt_output=app.output,
            query=query,
            height=max(5, rows // 2 - 4),
        )

    async def send(self, text: str, images: Sequence[ImageContent] = ()) -> None:
        if self.agent.model_info() is None:
            self.console.print(Text(no_model_help(self.agent.agent_dir), style="red"))
            return
        renderer = self._new_renderer()
        progress = RunProgress(self.console, self.status)

        events = self.agent.prompt(
            text, images=images
        )  # requested now: an abort from here on cancels it

        async def consume() -> None:
            async for event in events:
                progress.before(event)
                renderer.handle(event)
                progress.after(event)

        progress.start()
        try:
            await self._abortable(
                consume(),
                self.agent.abort,
                cancel_on_first=False,
                queue_input=True,
                progress=progress,
            )
            if self._side_work:  # extension commands typed during the answer
                await asyncio.wait(list(self._side_work))
        finally:
            progress.stop()
            renderer.close()
            self._renderer = None
        self.print_status()

    async def run_abortable(self, work: Awaitable[T], abort: Callable[[], None]) -> T | None:
        """Await ``work``; Esc or Ctrl-C calls ``abort``, a second press cancels it (``None``)."""
        return await self._abortable(work, abort, cancel_on_first=False)

    async def _user_command(self, line: str) -> bool:
        """Run ``line`` if it is ``!command`` or ``!!command``; ``False`` when it is not one."""
        from pi_context.cli.interactive.user_shell import parse_user_command, run_user_command

        parsed = parse_user_command(line)
        if parsed is None:
            return False
        if self._user_bash is None:
            from pi_context.cli.rpc.user_bash import UserBash

            self._user_bash = UserBash()
        command, excluded = parsed
        await run_user_command(
            self.agent,
            self.console,
            command,
            excluded=excluded,
            bash=self._user_bash,
            abortable=self.run_abortable,
        )
        self.print_status()
        return True

    async def busy(self, label: str, work: Callable[[], Awaitable[T]]) -> T | None:
        renderer = self._new_renderer()
        renderer.spinner(label)
        self._busy = True
        try:
            return await self._abortable(work(), self.agent.abort, cancel_on_first=True)
        finally:
            self._busy = False
            renderer.close()
            self._renderer = None
            self.print_status()

    def switch(self, agent: AgentApi) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
        if agent is not self.agent:
            self.agent.close()
        self.agent = agent
        # where the session runs (its header cwd, or here when that folder is gone)
        self.cwd = Path(agent.project_trust().directory or self.cwd)
        self._listen()

    def set_editor(self, text: str) -> None:
        self._editor = text

    def editor_text(self) -> str:
        return self._editor

    def full_screen_io(self) -> tuple[Input, Output] | None:
        # the prompts' own input: one parser sees every byte (see _key_input)
        return self._prompt.app.input, self._prompt.output

    def request_quit(self) -> None:
        self._quit = True

    # -- status --------------------------------------------------------------------------------

    def status(self) -> str:
        """Recompute the status line: model, context of the window, cache hit ratio, cost."""
        info = self.agent.model_info()
        name = "no model (use --model or /model)" if info is None else f"{info.provider}/{info.id}"
        if info is not None and info.reasoning:
            name += f" · thinking {self.agent.thinking_level()}"
        self._status = status_line(self.agent.stats(), name)
        return self._status

    def cycle_model(self, forward: bool) -> None:
        """Ctrl+P: the next model of the scope; says where it went."""
        try:
            note = self.agent.cycle_model(forward=forward)
        except PiContextError as exc:
            note = f"Error: {exc}"
        self._status = f"{note} · {self.status()}"
        run_in_terminal(lambda: self.console.print(Text(note, style="dim")))

    def cycle_thinking(self) -> None:
        """Shift+Tab: the model's next thinking level; the status line says which."""
        level = self.agent.cycle_thinking_level()
        note = (
            "Current model does not support thinking"
            if level is None
            else f"Thinking level: {level}"
        )
        self._status = f"{note} · {self.status()}"
        # shown above the prompt too, as pi's status message (the toolbar needs a terminal
        # that reports the cursor position)
        run_in_terminal(lambda: self.console.print(Text(note, style="dim")))

    def _open_model_picker(self, event: KeyPressEvent) -> None:
        """Ctrl+L: leave the prompt (keeping what was typed) and run ``/model``."""
        self._editor = event.current_buffer.text
        self._model_picker_requested = True
        event.app.exit(result="")

    def _escape_on_empty(self, event: KeyPressEvent, twice: bool) -> None:
        """Esc on an empty editor: a second one within the window (or both read together,
        ``twice``) runs ``doubleEscapeAction`` (``"tree"``, the default: ``/tree``;
        ``"fork"``: ``/fork``; ``"none"``: nothing)."""
        action = self.agent.settings_data().get("doubleEscapeAction")
        if action == "none":
            return
        now = self._clock()
        if not twice and now - self._last_escape >= CLEAR_TWICE_SECONDS:
            self._last_escape = now
            return
        self._last_escape = -math.inf
        self._escape_command = "/fork" if action == "fork" else "/tree"
        event.app.exit(result="")

    def _fit_completion_menu(self) -> None:
        """``autocompleteMaxVisible`` (3 to 20): the completion list's height, when set."""
        value = self.agent.settings_data().get("autocompleteMaxVisible")
        if isinstance(value, bool) or not isinstance(value, int | float):
            return
        rows = max(3, min(20, math.floor(value)))
        for container in self._prompt.layout.walk():
            if isinstance(container, CompletionsMenu):
                window = container.content
                window.height = Dimension(min=1, max=rows)  # type: ignore[attr-defined]

    def print_status(self) -> None:
        self.console.print(Text(self.status(), style="dim"))

    # -- plumbing ------------------------------------------------------------------------------

    def _estimate(self) -> int | None:
        return self.agent.estimate_context()

    def _new_renderer(self) -> EventRenderer:
        self.display.collapsed.clear()  # Ctrl+O expands the outputs of the latest run
        self._renderer = EventRenderer(
            self.console,
            estimate_after=self._estimate,
            footer=lambda: self._status,
            display=self.display,
        )
        return self._renderer

    def _listen(self) -> None:
        def on_event(event: AgentEvent) -> None:
            # events outside a prompt (compaction, branch summaries) render while busy();
            # during send() the prompt's own event stream is rendered instead
            if self._renderer is not None and self._busy:
                self._renderer.handle(event)

        self._unsubscribe = self.agent.subscribe(on_event)
        on_notice = getattr(self.agent, "on_notice", None)  # hosts without notices: none shown
        if on_notice is not None:
            on_notice(self._notice)
        # an extension's ctx.shutdown(): leave once the command or run under way is done
        self.agent.on_shutdown_request(self.request_quit)

    def _notice(self, message: str, kind: str) -> None:
        """A notice of the session (MCP start-up problems, ``/mcp``), above the prompt."""
        style = {"error": "red", "warning": "yellow"}.get(kind, "dim")
        run_in_terminal(lambda: self.console.print(Text(terminal_safe(message), style=style)))

    def _queue_line(self, kept: list[KeyPress], kind: str) -> bool:
        """Queue the line typed so far (``kept``) as steering or a follow-up; ``False`` (and
        nothing queued) for a blank line or a slash command, which wait for the next prompt."""
        text = _typed_text(kept)
        if not text.strip():
            return False
        if text.lstrip().startswith("/"):
            return kind == "steer" and self._run_extension_command_now(text, kept)
        if text.lstrip().startswith("!") and text.strip().strip("!"):
            return False  # a shell command waits for the next prompt
        kept.clear()
        if kind == "steer":
            self.agent.steer(text)
            label = "Steering"
        else:
            self.agent.follow_up(text)
            label = "Follow-up"
        self.console.print(Text(f"{label}: {text}", style="cyan"))
        self.console.print(Text(_QUEUE_HINT, style="dim"))
        return True

    def _run_extension_command_now(self, text: str, kept: list[KeyPress]) -> bool:
        """An extension command finished with Enter during a run runs at once, as in pi (other
        slash commands wait for the next prompt)."""
        name, _, args = text.strip()[1:].partition(" ")
        if name not in {command.name for command in self.agent.extension_commands()}:
            return False
        kept.clear()
        task = asyncio.ensure_future(self.agent.run_extension_command(name, args))
        self._side_work.add(task)
        task.add_done_callback(self._side_work.discard)
        return True

    def _restore_queue(self, kept: list[KeyPress]) -> None:
        """Alt+Up (and Esc before it aborts): every queued text back into the next input line,
        steering first, then follow-ups, then what was typed meanwhile."""
        steering, follow_up = self.agent.clear_queue()
        texts = [*steering, *follow_up]
        if not texts:
            self.console.print(Text("No queued messages to restore", style="dim"))
            return
        typed = _typed_text(kept)
        parts = [*texts, typed] if typed.strip() else texts
        kept.clear()
        self._editor = "\n\n".join(parts)
        self.console.print(Text(f"Restored {len(texts)} queued message(s) to editor", style="dim"))

    async def _abortable(
        self,
        work: Awaitable[T],
        abort: Callable[[], None],
        *,
        cancel_on_first: bool,
        progress: RunProgress | None = None,
        queue_input: bool = False,
    ) -> T | None:
        """Await ``work``; Esc or Ctrl-C aborts it (cancels on the second press).

        Every other key typed meanwhile is handed back to prompt_toolkit as typeahead, so the
        next input line receives it exactly as typed (Enter included: a line typed and sent
        during a run is sent when the run ends). Keys that arrived together with the Enter that
        started this run were left as typeahead by the prompt; they are read here first, so an
        Esc typed right after Enter still aborts. With ``queue_input`` (a running answer), a
        line finished with Enter is queued as steering, with Alt+Enter as a follow-up, and
        Alt+Up takes the queued messages back (see :meth:`_queue_line`).
        """
        watch = _AbortWatch(
            self,
            asyncio.ensure_future(work),
            abort,
            cancel_on_first=cancel_on_first,
            progress=progress,
            queue_input=queue_input,
        )
        return await watch.run()

    def _key_input(self) -> Input:
        """The input watched for Esc/Ctrl-C during runs: the prompts' own, so one parser sees
        every byte (an Esc held back as a possible escape sequence is not lost between them)."""
        return self._prompt.app.input

    @staticmethod
    def _is_tty(keys: Input) -> bool:
        try:
            return os.isatty(keys.fileno())
        except (NotImplementedError, OSError, ValueError):
            return False

    # -- main loop -----------------------------------------------------------------------------

    def _banner(self) -> None:
        # quietStartup: true hides the header, "header" keeps it; the details (what the session
        # loaded) show with --verbose or an explicit false (unset: pictx's short header)
        quiet = self.agent.settings_data().get("quietStartup")
        header = self._verbose or quiet is not True
        session = self.agent.session
        path = session.file_path
        title = session.name or (path.name if path is not None else "in-memory session")
        if header:
            self.console.print(Text(f"pictx · {title}", style="bold"))
        if path is not None and header:
            # the file itself is written with the first answer: name where it will be
            verb = "saved in" if path.exists() else "will be saved in"
            self.console.print(Text(f"{verb} {path.parent}", style="dim"), soft_wrap=True)
        for note in self._notes:
            self.console.print(Text(note, style="dim"), soft_wrap=True)
        show_warnings(self.console, self._theme_warnings)
        for problem in self.keymap.problems:  # keybindings.json entries not applied, once
            self.console.print(Text(terminal_safe(problem), style="yellow"), soft_wrap=True)
        if self._verbose or quiet is False:
            for line in self.agent.startup_details():
                self.console.print(Text(line, style="dim"), soft_wrap=True)
        if header:
            self.console.print(
                Text(
                    "Type /help for commands. Enter sends, Alt+Enter adds a line, Esc aborts.",
                    style="dim",
                )
            )
        self.print_status()
        if self.agent.model_info() is None:
            self.console.print(Text(no_model_help(self.agent.agent_dir), style="yellow"))

    async def run(self, initial: Iterable[str] = (), images: Sequence[ImageContent] = ()) -> int:
        """Send the ``initial`` prompts (``images`` with the first), then read and run until
        ``/quit`` or Ctrl-D.

        The terminal stays in raw mode for the whole session, not only while a prompt is being
        read: keys typed between two prompts are neither echoed into the answer nor turned into
        signals (Ctrl-C), and wait for whoever reads next. Returns the exit code.
        """
        keys = self._key_input()
        tty = self._is_tty(keys)
        with keys.raw_mode() if tty else contextlib.nullcontext():
            if tty:  # Shift+Enter told apart from Enter (see editor_habits)
                self._prompt.output.write_raw(ENABLE_EXTENDED_KEYS)
                self._prompt.output.flush()
            try:
                self._banner()
                for number, text in enumerate(initial):
                    await self.send(text, images if number == 0 else ())
                await self._loop()
            finally:
                if tty:
                    self._prompt.output.write_raw(RESET_EXTENDED_KEYS)
                    self._prompt.output.flush()
        if self._unsubscribe is not None:
            self._unsubscribe()
        return 0

    async def _loop(self) -> None:
        while not self._quit:
            show_warnings(self.console, refresh_theme(self.console))  # the theme file changed
            try:
                line = await self._prompt.prompt_async("› ", default=self._editor)
            except KeyboardInterrupt:  # app.clear: clears; a second one soon after exits
                self._editor = ""
                now = self._clock()
                if now - self._last_clear < CLEAR_TWICE_SECONDS:
                    break
                self._last_clear = now
                continue
            except EOFError:
                break
            if self._model_picker_requested:
                self._model_picker_requested = False
                line = "/model"
            elif self._escape_command is not None:
                line, self._escape_command = self._escape_command, None
            else:
                self._editor = ""
            if not line.strip():
                continue
            try:
                submitted = await self.agent.handle_input(line)
                if submitted is None or not submitted.strip():  # an extension handled it
                    continue
                line = submitted
                if await run_slash(self, line):
                    self.status()
                    continue
                if await self._user_command(line):
                    continue
                await self.send(line)
            except PiContextError as exc:
                self.console.print(Text(f"pictx: error: {exc}", style="red"))


def _above_prompt(action: Callable[[], None]) -> None:
    """Run ``action`` (which prints) above the prompt being edited."""
    run_in_terminal(action)


def _matched(items: Sequence[KeyPress], index: int, sequences: Iterable[KeySeq]) -> int:
    """The length of the first of ``sequences`` that ``items`` hold from ``index``; 0 if none."""
    for keys in sequences:
        pressed = [str(p.key.value if isinstance(p.key, Keys) else p.key) for p in items[index:]]
        if tuple(pressed[: len(keys)]) == keys:
            return len(keys)
    return 0


def _typed_text(presses: Iterable[KeyPress]) -> str:
    """The text a run of key presses typed (printable keys and pastes; Backspace erases)."""
    text = ""
    for press in presses:
        key = press.key
        if key in _ERASE_KEYS:
            text = text[:-1]
        elif key == Keys.BracketedPaste:
            text += press.data
        elif isinstance(key, str) and not isinstance(key, Keys) and key.isprintable():
            text += key
    return text


def history_for(agent_dir: Path | None) -> History:
    """Input history kept across runs in ``<agentDir>/pictx-history``."""
    if agent_dir is None:
        return InMemoryHistory()
    try:
        agent_dir.mkdir(parents=True, exist_ok=True)
    except OSError:
        return InMemoryHistory()
    return FileHistory(str(agent_dir / "pictx-history"))


async def run_interactive(agent: AgentApi, *, agent_dir: Path | None = None, **kwargs: Any) -> int:
    """Start interactive mode on ``agent``."""
    shell = InteractiveShell(agent, history=history_for(agent_dir), **kwargs)
    return await shell.run()


class _AbortWatch(Generic[T]):
    """One awaited piece of work and the keys typed while it runs (see
    :meth:`InteractiveShell._abortable`): the Esc/Ctrl-C presses counted towards the abort, the
    other keys kept as typeahead for the next input line, and the timer that flushes a lone Esc
    from the key parser."""

    def __init__(
        self,
        shell: InteractiveShell,
        task: asyncio.Future[T],
        abort: Callable[[], None],
        *,
        cancel_on_first: bool,
        progress: RunProgress | None,
        queue_input: bool,
    ) -> None:
        self.shell = shell
        self.task = task
        self.abort = abort
        self.cancel_on_first = cancel_on_first
        self.progress = progress
        self.queue_input = queue_input
        self.presses = 0
        """Esc/Ctrl-C presses so far: the first aborts, the second (or the first, with
        ``cancel_on_first``) cancels the task."""
        self.kept: list[KeyPress] = []
        """Every other key, handed back to prompt_toolkit as typeahead at the end."""
        self.keys = shell._key_input()
        self.loop = asyncio.get_running_loop()
        self.flush_timer: asyncio.TimerHandle | None = None

    async def run(self) -> T | None:
        shell, keys = self.shell, self.keys
        # what the prompt left unprocessed: keys that came in the same read as its Enter, and
        # an Esc its parser still holds (an abort before the work's first step still applies)
        self.handle([*get_typeahead(keys), *keys.flush_keys()])
        watching = keys.raw_mode() if shell._is_tty(keys) else contextlib.nullcontext()
        try:
            with watching, keys.attach(self.on_keys):
                return await self.task
        except asyncio.CancelledError:
            if not self.task.cancelled():
                raise
            shell.console.print(Text("Cancelled.", style="yellow"))
            return None
        except PiContextError as exc:
            if shell._renderer is None or not shell._renderer.errors_shown:
                shell.console.print(Text(f"pictx: error: {exc}", style="red"))
            return None
        finally:
            if self.flush_timer is not None:
                self.flush_timer.cancel()
            self.handle(keys.flush_keys())
            store_typeahead(keys, self.kept)

    def queued(self, items: Sequence[KeyPress], index: int) -> int:
        """How many presses (from ``items[index]``) were a queueing key (the keymap's
        follow-up, dequeue and submit keys); 0 when none was."""
        if not self.queue_input or self.task.done():
            return 0
        keymap = self.shell.keymap
        used = _matched(items, index, keymap.sequences("app.message.followUp"))
        if used:
            if self.shell._queue_line(self.kept, "follow_up"):
                return used
            self.kept.append(items[index])  # on a blank line: a newline for the next prompt
            return 1
        used = _matched(items, index, keymap.sequences("app.message.dequeue"))
        if used:
            self.shell._restore_queue(self.kept)
            return used
        used = _matched(items, index, keymap.sequences("tui.input.submit"))
        if used and self.shell._queue_line(self.kept, "steer"):
            return used
        return 0

    def display_toggle(self, items: Sequence[KeyPress], index: int) -> int:
        """Ctrl+O / Ctrl+T during the run: applied at once (to the rest of the run), as in pi."""
        if self.task.done():
            return 0
        keymap, shell = self.shell.keymap, self.shell
        for action, toggle in (
            ("app.tools.expand", shell.toggle_tools),
            ("app.thinking.toggle", shell.toggle_thinking),
        ):
            used = _matched(items, index, keymap.sequences(action))
            if used:
                toggle()
                return used
        return 0

    def handle(self, presses_read: Iterable[KeyPress]) -> None:
        items = list(presses_read)
        index = 0
        abort_keys = {Keys.ControlC.value} | {
            keys[0] for keys in self.shell.keymap.sequences("app.interrupt") if len(keys) == 1
        }
        while index < len(items):
            press = items[index]
            used = _matched(items, index, self.shell.keymap.sequences("app.suspend"))
            if used and not self.task.done() and self.shell.suspend_now():
                index += used  # suspended at once, as pi does, and resumed by fg
                continue
            used = self.display_toggle(items, index)
            if used:
                index += used
                continue
            used = self.queued(items, index)
            if used:
                index += used
                continue
            index += 1
            if press.key not in abort_keys:
                self.kept.append(press)
            elif not self.task.done():
                self.abort_press(press)

    def abort_press(self, press: KeyPress) -> None:
        self.presses += 1
        if self.presses == 1:
            if self.progress is not None:
                self.progress.stop()
            if self.queue_input and press.key == Keys.Escape:
                self.shell._restore_queue(self.kept)
            self.shell.console.print(Text("Aborting…", style="yellow"))
            self.abort()
        if self.cancel_on_first or self.presses > 1:
            self.task.cancel()

    def flush(self) -> None:
        self.flush_timer = None
        self.handle(self.keys.flush_keys())

    def on_keys(self) -> None:
        self.handle(self.keys.read_keys())
        # a lone Esc may start an escape sequence: the parser holds it until flushed
        if self.flush_timer is not None:
            self.flush_timer.cancel()
        self.flush_timer = self.loop.call_later(_ESC_FLUSH_SECONDS, self.flush)
