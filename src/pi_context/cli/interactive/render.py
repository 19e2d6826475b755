"""Rendering agent events in the terminal with rich.

The answer streams as Markdown in a live region that is re-rendered as deltas arrive and left
in place when the message ends. Thinking is dimmed, tool calls show their name and arguments,
tool results are collapsed to their first lines (with the count of hidden lines), errors are
red. Compaction shows a spinner while it runs and the tokens before and after when it ends.

Text from models, tools and extensions is never parsed as rich markup here (it is put in
``Text``), and the interactive console shows every segment terminal-safe
(:class:`pi_context.cli.terminal_text.TerminalConsole`).
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Mapping
from typing import Any

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.live import Live
from rich.markdown import Markdown
from rich.segment import Segment
from rich.spinner import Spinner
from rich.syntax import SyntaxTheme
from rich.text import Text

from pi_context.cli.interactive.editor_habits import HIDDEN_THINKING, DisplayState, ShownOutput
from pi_context.cli.interactive.stats import format_tokens
from pi_context.cli.interactive.theme import code_theme
from pi_context.events import (
    AgentEvent,
    AutoRetryStart,
    CompactionEnd,
    CompactionStart,
    ExtensionFailure,
    MessageEnd,
    MessageUpdate,
    ToolExecutionEnd,
    ToolExecutionStart,
)

__all__ = ["COLLAPSED_LINES", "FRAMES_PER_SECOND", "EventRenderer", "collapse"]

COLLAPSED_LINES = 8
"""Tool output lines shown before the rest is collapsed."""

FRAMES_PER_SECOND = 15
"""How often a streaming answer is redrawn at most (the final text is always drawn)."""


def collapse(text: str, keep: int = COLLAPSED_LINES) -> tuple[str, int]:
    """The first ``keep`` lines of ``text`` and how many lines were hidden."""
    lines = text.rstrip("\n").split("\n")
    if len(lines) <= keep:
        return "\n".join(lines), 0
    return "\n".join(lines[:keep]), len(lines) - keep


def _args_preview(args: Mapping[str, Any], limit: int = 160) -> str:
    if set(args) == {"command"} or "command" in args:
        text = str(args.get("command", ""))
    elif "path" in args:
        text = str(args["path"])
    else:
        text = json.dumps(dict(args), ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class _Stream:
    """The assistant message being streamed: text, thinking and tool-call blocks by index."""

    def __init__(
        self, syntax_theme: str | SyntaxTheme = "monokai", hide_thinking: bool = False
    ) -> None:
        self.blocks: dict[int, list[str]] = {}
        self.kinds: dict[int, str] = {}
        self.syntax_theme = syntax_theme
        """Code blocks' colors (the console's theme)."""
        self.hide_thinking = hide_thinking
        """Thinking shown as a ``Thinking...`` line (pi's ``hideThinkingBlock``)."""

    def feed(self, kind: str, index: int, delta: str | None, name: str | None) -> None:
        base = kind.split("_")[0]
        if kind.endswith("_start"):
            self.kinds[index] = base
            self.blocks[index] = [name] if base == "toolcall" and name else []
        elif kind.endswith("_delta") and delta is not None and base in ("text", "thinking"):
            self.kinds.setdefault(index, base)
            self.blocks.setdefault(index, []).append(delta)

    def renderable(self) -> RenderableType:
        parts: list[RenderableType] = []
        for index in sorted(self.blocks):
            text = "".join(self.blocks[index])
            kind = self.kinds.get(index)
            if kind == "thinking":
                parts.append(Text(HIDDEN_THINKING if self.hide_thinking else text, "dim italic"))
            elif kind == "toolcall":
                parts.append(Text(f"⚙ {text} …", style="cyan"))
            elif text:
                parts.append(Markdown(text, code_theme=self.syntax_theme))  # type: ignore[arg-type]
        return Group(*parts)


class _Tail:
    """Shows only the last lines that fit the terminal while streaming; everything when done.

    A live region taller than the screen cannot be redrawn in place, so a long streaming answer
    would repeat itself in the scrollback; the full text is printed once at the end instead.
    """

    def __init__(
        self, inner: RenderableType, *, full: bool, footer: RenderableType | None = None
    ) -> None:
        self.inner = inner
        self.full = full
        self.footer = footer
        """Drawn under the streaming text (the status line), not in the final output."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        lines = console.render_lines(self.inner, options, pad=False)
        if not self.full:
            room = max(1, console.height - 2 - (1 if self.footer is not None else 0))
            lines = lines[-room:]
            if self.footer is not None:
                lines = [*lines, *console.render_lines(self.footer, options, pad=False)]
        for index, line in enumerate(lines):
            yield from line
            if index < len(lines) - 1:
                yield Segment.line()


class EventRenderer:
    """Turns agent events into terminal output; call :meth:`close` when a run ends."""

    def __init__(
        self,
        console: Console,
        *,
        estimate_after: Callable[[], int | None] | None = None,
        clock: Callable[[], float] = time.monotonic,
        footer: Callable[[], str] | None = None,
        display: DisplayState | None = None,
    ):
        self.console = console
        self.display = display if display is not None else DisplayState()
        """Tool output expanded or collapsed, thinking shown or hidden (Ctrl+O, Ctrl+T)."""
        self._footer = footer
        """The status line, kept under a streaming answer."""
        self._live: Live | None = None
        self._stream: _Stream | None = None
        self._clock = clock
        self._last_frame = -math.inf
        self._spinner: Live | None = None
        self._estimate_after = estimate_after
        self.errors_shown = 0
        """How many failures were already reported (so callers do not repeat them)."""

    # -- live regions ------------------------------------------------------------------------

    def _start_live(self) -> None:
        self._stop_spinner()
        self._stream = _Stream(code_theme(self.console), self.display.hide_thinking)
        self._live = Live(
            self._tail(),
            console=self.console,
            auto_refresh=False,
            vertical_overflow="visible",
            transient=False,
        )
        self._live.start()

    def _tail(self) -> _Tail:
        assert self._stream is not None
        self._stream.hide_thinking = self.display.hide_thinking  # Ctrl+T during the answer
        footer = None
        if self._footer is not None:
            footer = Text(self._footer(), style="dim", no_wrap=True, overflow="ellipsis")
        return _Tail(self._stream.renderable(), full=False, footer=footer)

    def _stop_live(self) -> None:
        """Leave everything streamed so far on screen, in full, and end the live region."""
        if self._live is not None and self._stream is not None:
            self._stream.hide_thinking = self.display.hide_thinking
            self._live.update(_Tail(self._stream.renderable(), full=True), refresh=False)
        if self._live is not None:
            self._live.stop()
        self._live = None
        self._stream = None
        self._last_frame = -math.inf

    def spinner(self, text: str) -> None:
        """Show ``text`` with a spinner until the next output (or :meth:`close`)."""
        self._stop_spinner()
        self._spinner = Live(
            Spinner("dots", text=Text(text, style="yellow")),
            console=self.console,
            refresh_per_second=8,
            transient=True,
        )
        self._spinner.start()

    def _stop_spinner(self) -> None:
        if self._spinner is not None:
            self._spinner.stop()
        self._spinner = None

    def close(self) -> None:
        self._stop_live()
        self._stop_spinner()

    # -- events ------------------------------------------------------------------------------

    def __call__(self, event: AgentEvent) -> None:
        self.handle(event)

    def handle(self, event: AgentEvent) -> None:
        if isinstance(event, MessageUpdate):
            step = event.event
            if self._live is None or self._stream is None:
                self._start_live()
            assert self._stream is not None
            assert self._live is not None
            self._stream.feed(step.kind, step.content_index, step.delta, step.tool_name)
            # Markdown is re-parsed and redrawn whole: at most FRAMES_PER_SECOND times, or a long
            # answer streamed token by token would cost more than the model producing it
            now = self._clock()
            if now - self._last_frame >= 1 / FRAMES_PER_SECOND:
                self._last_frame = now
                self._live.update(self._tail(), refresh=True)
        elif isinstance(event, MessageEnd):
            self._message_end(event)
        elif isinstance(event, ToolExecutionStart):
            self._stop_live()
            self.console.print(
                Text.assemble(
                    ("▶ ", "cyan"), (event.tool_name, "bold cyan"), " ", _args_preview(event.args)
                )
            )
        elif isinstance(event, ToolExecutionEnd):
            self._tool_end(event)
        elif isinstance(event, CompactionStart):
            self._stop_live()
            self.spinner(f"Compacting the context ({event.reason})… Esc to cancel")
        elif isinstance(event, CompactionEnd):
            self._compaction_end(event)
        elif isinstance(event, AutoRetryStart):
            self._stop_live()
            self.console.print(
                Text(
                    f"Retrying ({event.attempt}/{event.max_attempts}) in "
                    f"{event.delay_ms / 1000:.1f}s: {event.error_message}",
                    style="yellow",
                )
            )
        elif isinstance(event, ExtensionFailure):
            self.console.print(
                Text(f"extension error in {event.event}: {event.error}", style="red")
            )

    def _message_end(self, event: MessageEnd) -> None:
        message: Mapping[str, Any] = event.message
        if message.get("role") != "assistant":
            return
        if self._live is None:
            # nothing was streamed (e.g. a replayed or very short answer): render it whole
            self._start_live()
            assert self._stream is not None
            for index, block in enumerate(message.get("content") or []):
                if not isinstance(block, dict):
                    continue
                kind = block.get("type")
                if kind == "text":
                    self._stream.feed("text_delta", index, str(block.get("text", "")), None)
                elif kind == "thinking":
                    self._stream.feed("thinking_delta", index, str(block.get("thinking", "")), None)
        assert self._live is not None
        assert self._stream is not None
        # tool calls are shown when they run; drop the streaming placeholders
        for index, kind in list(self._stream.kinds.items()):
            if kind == "toolcall":
                self._stream.blocks.pop(index, None)
        self._stop_live()
        stop = message.get("stopReason")
        if stop in ("error", "aborted"):
            reason = message.get("errorMessage") or (
                "Aborted" if stop == "aborted" else "Request failed"
            )
            self.console.print(Text(str(reason), style="red"))
        elif stop == "length":
            self.console.print(Text("(the answer hit the output token limit)", style="yellow"))

    def _tool_end(self, event: ToolExecutionEnd) -> None:
        blocks = event.result.get("content") or []
        text = "\n".join(
            str(b.get("text", ""))
            for b in blocks
            if isinstance(b, dict) and b.get("type") == "text"
        )
        display = self.display
        shown, hidden = (text.rstrip("\n"), 0) if display.tools_expanded else collapse(text)
        style = "red" if event.is_error else "dim"
        if shown:
            self.console.print(Text(shown, style=style))
        if hidden:
            self.console.print(
                Text(
                    f"… {hidden} more lines (collapsed) · {display.expand_key} to expand",
                    style="dim italic",
                )
            )
            display.collapsed.append(ShownOutput(event.tool_name, text, event.is_error))

    def _compaction_end(self, event: CompactionEnd) -> None:
        self._stop_spinner()
        if event.aborted:
            self.console.print("[yellow]Compaction cancelled.[/yellow]")
            return
        if event.result is None:
            reason = event.error_message or "unknown error"
            if not reason.lower().startswith("compaction"):
                reason = f"Compaction failed: {reason}"
            self.console.print(Text(reason, style="red"))
            self.errors_shown += 1
            return
        before = event.result.tokens_before
        after = self._estimate_after() if self._estimate_after is not None else None
        text = "Compacted"
        if isinstance(before, int | float):
            text += f": {format_tokens(before)} tokens before"
            if after is not None:
                text += f" → about {format_tokens(after)} after"
        self.console.print(Text(text, style="green"))
