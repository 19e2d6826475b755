"""Non-interactive runs: ``pictx -p "..."`` (final answer on stdout) and ``--mode json``.

Text mode prints, after all prompts ran, each text block of the last message (when it is an
assistant message) followed by a newline. An ``error``/``aborted`` stop prints the error to
stderr and exits 1; a ``length`` stop prints the text, a note on stderr, and exits 0 (the
answer is there, only cut short).

JSON mode writes strict JSONL to stdout: the session header first, then every agent event as
``to_json()`` produces it (pi's event names and fields). It exits 0 even when the assistant
ended in an error; only exceptions give 1.

SIGTERM and SIGHUP abort the run and exit 143 and 129; SIGINT exits 130. A closed stdout
(``pictx --mode json ... | head -3``) aborts the run quietly and exits 141 (128 + SIGPIPE);
in every case the run settles first, so the session file keeps what was said.

Text mode output is the answer as data when stdout is a pipe or a file (kept byte for byte,
only lone surrogates become U+FFFD so it can be written as UTF-8) and terminal-safe when
stdout is a terminal (:mod:`pi_context.cli.terminal_text`); stderr notes are always
terminal-safe. JSON lines escape control characters (C1 and DEL too).
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, TextIO

from pi_context import _json
from pi_context.cli.app.agent_api import AgentApi
from pi_context.cli.terminal_text import json_for_terminal, terminal_safe, text_for_stream
from pi_context.events import AutoRetryStart, MessageEnd
from pi_context.messages import AgentMessage, ImageContent

__all__ = ["final_text_outcome", "retry_note", "run_print"]

PrintMode = Literal["text", "json"]


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
        reason = " ".join(str(message.get("errorMessage") or f"Request {stop}").split())
        return [], f"pictx: error: {reason}", 1
    if stop == "length":
        note = "pictx: note: the answer stopped at the model's output token limit (truncated)."
        return lines, note, 0
    return lines, None, 0


def retry_note(event: AutoRetryStart) -> str:
    """One stderr line per retry of a failed request (text mode; JSON has the event)."""
    reason = " ".join(event.error_message.split())
    return (
        f"pictx: retrying in {event.delay_ms / 1000:g}s "
        f"(attempt {event.attempt}/{event.max_attempts}): {reason}"
    )


def _silence(out: TextIO) -> None:
    """Point a stream whose reader went away at /dev/null, so that nothing (not even the
    interpreter's last flush) reports the broken pipe."""
    try:
        fd = out.fileno()
    except (OSError, ValueError):  # not a real file (tests): nothing will flush it at exit
        return
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, fd)
    finally:
        os.close(null)


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
    agent: AgentApi,
    prompts: Sequence[str],
    *,
    mode: PrintMode,
    out: TextIO,
    err: TextIO,
    header: Mapping[str, Any] | None = None,
    images: Sequence[ImageContent] = (),
) -> int:
    """Send ``prompts`` one after another and report as ``mode`` says; returns the exit code.
    ``images`` go with the first prompt."""
    received: list[int] = []

    def on_signal(signo: int) -> None:
        received.append(signo)
        agent.abort()

    def write(text: str) -> None:
        """Write a line to ``out``; a reader that went away aborts the run (it still settles,
        so the session keeps everything up to the abort)."""
        if signal.SIGPIPE in received:
            return
        try:
            out.write(text)
            out.flush()
        except BrokenPipeError:
            _silence(out)
            on_signal(signal.SIGPIPE)

    installed = _install_signals(on_signal)
    last: AgentMessage | None = None
    try:
        if mode == "json" and header is not None:
            write(json_for_terminal(_json.dumps(dict(header)).decode("utf-8")) + "\n")
        for number, text in enumerate(prompts):
            if received:
                break
            async for event in agent.prompt(text, images=images if number == 0 else ()):
                if isinstance(event, MessageEnd):
                    last = event.message
                if mode == "json":
                    line = _json.dumps(event.to_json()).decode("utf-8", "replace")
                    write(json_for_terminal(line) + "\n")
                elif isinstance(event, AutoRetryStart):
                    err.write(terminal_safe(retry_note(event)) + "\n")
                    err.flush()
    finally:
        _remove_signals(installed)
    if received:
        return 128 + received[0]
    if mode == "json":
        return 0
    lines, problem, code = final_text_outcome(last)
    for line in lines:
        write(text_for_stream(line, out) + "\n")
    if problem:
        err.write(terminal_safe(problem) + "\n")
        err.flush()
    return 128 + received[0] if received else code
