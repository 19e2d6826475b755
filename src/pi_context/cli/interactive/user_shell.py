"""``!command`` and ``!!command`` typed at the prompt: the user's own shell command.

The command runs as RPC's ``bash`` runs it (:class:`~pi_context.cli.rpc.user_bash.UserBash`:
the ``shellPath`` shell, ``shellCommandPrefix`` on its own line before it, the session's
directory, stdout and stderr merged), its output shown line by line as it arrives. The session
then records a ``bashExecution`` message as pi does: ``!command`` with ``excludeFromContext:
false``, so the model sees it on the next prompt, ``!!command`` with ``true``, so it is kept
out of the model's context. Esc or Ctrl-C stops the command (recorded as ``cancelled``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import cast

from rich.console import Console
from rich.text import Text

from pi_context.cli.app.agent_api import AgentApi
from pi_context.cli.rpc.user_bash import BashResult, UserBash, run_user_bash
from pi_context.cli.terminal_text import terminal_safe
from pi_context.messages import AgentMessage, BashExecutionMessage

Outcome = tuple[BashResult, BashExecutionMessage]
Abortable = Callable[[Awaitable[Outcome], Callable[[], None]], Awaitable[Outcome | None]]
"""``(work, abort)``: awaits ``work``, calling ``abort`` on Esc/Ctrl-C (``None``: cancelled)."""

__all__ = ["Abortable", "LiveLines", "parse_user_command", "run_user_command"]


def parse_user_command(line: str) -> tuple[str, bool] | None:
    """``(command, excluded from context)`` for ``!command`` / ``!!command``; ``None`` for any
    other line, and for a ``!`` or ``!!`` with nothing after it (sent as text, as in pi)."""
    text = line.strip()
    if not text.startswith("!"):
        return None
    excluded = text.startswith("!!")
    command = text[2 if excluded else 1 :].strip()
    return (command, excluded) if command else None


class LiveLines:
    """Output chunks as whole display lines: a line is shown when its newline arrives, as a
    terminal would leave it (only what follows its last carriage return), terminal-safe."""

    def __init__(self) -> None:
        self._pending = ""

    def feed(self, chunk: str) -> list[str]:
        self._pending += chunk
        *lines, self._pending = self._pending.split("\n")
        return [_shown(line) for line in lines]

    def flush(self) -> list[str]:
        rest, self._pending = self._pending, ""
        return [_shown(rest)] if rest else []


def _shown(line: str) -> str:
    return terminal_safe(line.rstrip("\r").rsplit("\r", 1)[-1])


async def run_user_command(
    agent: AgentApi,
    console: Console,
    command: str,
    *,
    excluded: bool,
    bash: UserBash,
    abortable: Abortable,
) -> BashResult | None:
    """Run ``command``, show its output live, record it; ``None`` when it could not start or
    was cancelled outright."""
    header = f"$ {command}" + ("  (not sent to the model)" if excluded else "")
    console.print(Text(terminal_safe(header), style="bold"))
    lines = LiveLines()

    def show(chunk: str) -> None:
        for line in lines.feed(chunk):
            console.print(Text(line), soft_wrap=True)

    try:
        outcome = await abortable(
            run_user_bash(
                bash,
                command,
                cwd=agent.cwd,
                settings=agent.settings_data(),
                timestamp=agent.session.now_ms,
                on_output=show,
                exclude_from_context=excluded,
            ),
            bash.abort_all,
        )
    except OSError as exc:
        console.print(Text(f"pictx: error: cannot run the command: {exc}", style="red"))
        return None
    for line in lines.flush():
        console.print(Text(line), soft_wrap=True)
    if outcome is None:
        return None
    result, message = outcome
    if result.cancelled:
        console.print(Text("(cancelled)", style="yellow"))
    elif result.exit_code not in (0, None):
        console.print(Text(f"(exit {result.exit_code})", style="red"))
    if result.full_output_path is not None:
        console.print(Text(f"Full output: {result.full_output_path}", style="dim"))
    agent.session.append_message(cast(AgentMessage, message))
    return result
