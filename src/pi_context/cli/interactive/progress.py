"""The run indicator of interactive mode: what the agent is doing, for how long, and the status.

From Enter to the end of a run one of these is always on screen, with the status line (model,
context, cost) under it:

* ``Waiting for the model… 3s`` until the first token of each request (and between a tool
  result and the next answer);
* the answer itself while tokens stream (drawn by
  :class:`~pi_context.cli.interactive.render.EventRenderer`, which keeps the status line under it);
* ``Running bash… 2s`` while a tool runs, with the last :data:`LIVE_OUTPUT_LINES` lines of
  what it printed so far under it (its ``tool_execution_update`` partial results), as pi's
  terminal shows a running command; the full result is printed when the tool ends;
* ``Retrying in 4s (attempt 2/3)…`` during a retry's wait.

The indicator is a transient :class:`rich.live.Live`: it is erased when the run ends, and is
stopped before anything else is printed (rich allows one live region at a time).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from rich.console import Console, ConsoleOptions, Group, RenderResult
from rich.live import Live
from rich.spinner import Spinner
from rich.text import Text

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
    ToolExecutionUpdate,
)

__all__ = ["LIVE_OUTPUT_LINES", "RunProgress", "output_tail"]

LIVE_OUTPUT_LINES = 5
"""Lines of a running tool's output shown under the indicator (pi shows five)."""
_TAIL_CHARS = 4 * 1024
"""Only the end of a partial result is looked at: the lines shown come from it, whatever the
size of the output."""

WAITING = "Waiting for the model…"
HINT = "Esc to abort"


class _Elapsed:
    """``label Ns · Esc to abort``, the seconds computed each time it is drawn."""

    def __init__(self, label: str, since: float, clock: Callable[[], float]) -> None:
        self.label, self.since, self.clock = label, since, clock

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        seconds = max(0, int(self.clock() - self.since))
        yield Text.assemble(
            (self.label, "yellow"), f" {seconds}s", (f" · {HINT}", "dim"), no_wrap=True
        )


_DRAWN = (
    MessageUpdate,
    MessageEnd,
    ToolExecutionStart,
    ToolExecutionEnd,
    CompactionStart,
    CompactionEnd,
    AutoRetryStart,
    ExtensionFailure,
)
"""Events the renderer prints something for: the indicator steps aside for them."""


def output_tail(text: str, lines: int = LIVE_OUTPUT_LINES) -> tuple[list[str], int]:
    """The last ``lines`` lines of a running command's output as a terminal would show them
    (a carriage return starts the line over, as progress bars use it), and how many earlier
    lines there are. Only the output's end is split, so a long output costs no more."""
    body = text.rstrip("\n")
    if not body:
        return [], 0
    tail = body[-_TAIL_CHARS:]
    rows = [row.rsplit("\r", 1)[-1] for row in tail.split("\n")]
    if len(body) > _TAIL_CHARS and len(rows) > 1:
        rows = rows[1:]  # the first row is cut: leave it out
    shown = rows[-lines:]
    return shown, body.count("\n") + 1 - len(shown)


class RunProgress:
    """Shows what a run is doing between the renderer's own output; feed it every event."""

    def __init__(
        self,
        console: Console,
        status: Callable[[], str],
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._console = console
        self._status = status
        self._clock = clock
        self._live: Live | None = None
        self._phase: tuple[str, float] | None = None
        """What the run is doing and since when; ``None`` while the answer streams."""
        self._outputs: dict[str, str] = {}
        """The latest partial output of each running tool call, by call id."""

    @property
    def visible(self) -> bool:
        return self._live is not None

    def start(self, label: str = WAITING) -> None:
        """Begin a phase now (``label``, seconds from now) and show it."""
        self._phase = (label, self._clock())
        self._show()

    def stop(self) -> None:
        """Erase the indicator for good (the run ended)."""
        self._phase = None
        self._hide()

    def before(self, event: AgentEvent) -> None:
        """Call before the renderer draws ``event``: the indicator makes room for it."""
        if isinstance(event, _DRAWN):
            self._hide()

    def after(self, event: AgentEvent) -> None:
        """Call after the renderer drew ``event``: show what the run is doing now."""
        if isinstance(event, ToolExecutionUpdate):
            self._outputs[event.tool_call_id] = "".join(
                str(b.get("text", "")) for b in event.partial_result.content if b["type"] == "text"
            )
            if self._live is not None:
                self._live.update(self._body())  # drawn at the next refresh
            return
        if isinstance(event, ToolExecutionEnd):
            self._outputs.pop(event.tool_call_id, None)
        if isinstance(event, ToolExecutionStart):
            self._phase = (f"Running {event.tool_name}…", self._clock())
        elif isinstance(event, AutoRetryStart):
            label = (
                f"Retrying in {event.delay_ms / 1000:g}s ({event.attempt}/{event.max_attempts})…"
            )
            self._phase = (label, self._clock())
        elif isinstance(event, ToolExecutionEnd | CompactionEnd) or (
            isinstance(event, MessageEnd) and event.message.get("role") == "user"
        ):
            self._phase = (WAITING, self._clock())
        elif isinstance(event, MessageUpdate | CompactionStart) or (
            isinstance(event, MessageEnd) and event.message.get("role") == "assistant"
        ):
            self._phase = None  # the answer (or the compaction's spinner) is on screen
        if self._phase is not None and self._live is None:
            self._show()

    def _show(self) -> None:
        self._hide()
        if self._phase is None:
            return
        self._live = Live(self._body(), console=self._console, refresh_per_second=4, transient=True)
        self._live.start()

    def _body(self) -> Group:
        """The indicator, the running tools' latest output lines, the status line. Output is
        put in ``Text`` (never markup) with one terminal row per line, and the console makes
        every segment terminal-safe."""
        assert self._phase is not None
        label, since = self._phase
        parts: list[Any] = [
            Spinner("dots", text=_Elapsed(label, since, self._clock), style="yellow")
        ]
        for output in self._outputs.values():
            rows, hidden = output_tail(output)
            if hidden:
                parts.append(Text(f"  … {hidden} earlier lines", style="dim italic"))
            parts.extend(
                Text(f"  {row}", style="dim", no_wrap=True, overflow="ellipsis") for row in rows
            )
        # the status is computed here, on the loop's thread; the live region only redraws it
        parts.append(Text(self._status(), style="dim", no_wrap=True, overflow="ellipsis"))
        return Group(*parts)

    def _hide(self) -> None:
        if self._live is not None:
            self._live.stop()
        self._live = None
