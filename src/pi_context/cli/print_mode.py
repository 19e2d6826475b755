"""Non-interactive runs: ``pictx -p "..."`` (final answer on stdout) and ``--mode json``.

Text mode prints, after all prompts ran, each text block of the last message (when it is an
assistant message) followed by a newline. An ``error``/``aborted`` stop prints the error to
stderr and exits 1; a ``length`` stop prints the text, a note on stderr, and exits 1.

JSON mode writes strict JSONL to stdout: the session header first, then every agent event as
``to_json()`` produces it (pi's event names and fields). It exits 0 even when the assistant
ended in an error; only exceptions give 1.

SIGTERM and SIGHUP abort the run and exit 143 and 129; SIGINT exits 130.

Text mode output is the answer as data when stdout is a pipe or a file (kept byte for byte,
only lone surrogates become U+FFFD so it can be written as UTF-8) and terminal-safe when
stdout is a terminal (:mod:`pi_context.cli.terminal_text`); stderr notes are always
terminal-safe. JSON lines escape control characters (C1 and DEL too).
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import Any, Literal, Protocol, TextIO

from pi_context import _json
from pi_context.cli.terminal_text import json_for_terminal, terminal_safe, text_for_stream
from pi_context.events import AgentEvent, MessageEnd
from pi_context.messages import AgentMessage

__all__ = ["PrintAgent", "final_text_outcome", "run_print"]

PrintMode = Literal["text", "json"]


class PrintAgent(Protocol):
    """What print mode needs of an agent session."""

    def prompt(self, text: str) -> AsyncIterator[AgentEvent]: ...

    def abort(self) -> None: ...


def final_text_outcome(last: AgentMessage | None) -> tuple[list[str], str | None, int]:
    """``(stdout lines, stderr text, exit code)`` for the last message of a text-mode run."""
    if last is None or last.get("role") != "assistant":
        return [], None, 0
    message: Mapping[str, Any] = last
    blocks = message.get("content") or []
    lines = [
        str(b.get("text", "")) for b in blocks if isinstance(b, dict) and b.get("type") == "text"
    ]
    stop = message.get("stopReason")
    if stop in ("error", "aborted"):
        return [], str(message.get("errorMessage") or f"Request {stop}"), 1
    if stop == "length":
        note = "Warning: the response hit the output token limit and is truncated."
        return lines, note, 1
    return lines, None, 0


def _install_signals(on_signal: Callable[[int], None]) -> list[int]:
    loop = asyncio.get_running_loop()
    installed = []
    for signo in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        try:
            loop.add_signal_handler(signo, on_signal, int(signo))
        except (NotImplementedError, RuntimeError, ValueError):  # not on this platform/thread
            continue
        installed.append(int(signo))
    return installed


def _remove_signals(installed: Sequence[int]) -> None:
    loop = asyncio.get_running_loop()
    for signo in installed:
        loop.remove_signal_handler(signo)


async def run_print(
    agent: PrintAgent,
    prompts: Sequence[str],
    *,
    mode: PrintMode,
    out: TextIO,
    err: TextIO,
    header: Mapping[str, Any] | None = None,
) -> int:
    """Send ``prompts`` one after another and report as ``mode`` says; returns the exit code."""
    received: list[int] = []

    def on_signal(signo: int) -> None:
        received.append(signo)
        agent.abort()

    installed = _install_signals(on_signal)
    last: AgentMessage | None = None
    try:
        if mode == "json" and header is not None:
            out.write(json_for_terminal(_json.dumps(dict(header)).decode("utf-8")) + "\n")
            out.flush()
        for text in prompts:
            async for event in agent.prompt(text):
                if isinstance(event, MessageEnd):
                    last = event.message
                if mode == "json":
                    line = _json.dumps(event.to_json()).decode("utf-8", "replace")
                    out.write(json_for_terminal(line) + "\n")
                    out.flush()
            if received:
                break
    finally:
        _remove_signals(installed)
    if received:
        return 128 + received[0]
    if mode == "json":
        return 0
    lines, problem, code = final_text_outcome(last)
    for line in lines:
        out.write(text_for_stream(line, out) + "\n")
    out.flush()
    if problem:
        err.write(terminal_safe(problem) + "\n")
        err.flush()
    return code
