"""The ``bash`` tool: run a shell command in the session's cwd.

stdout and stderr are merged in arrival order. The model gets the last 2000 lines / 50 KB
(tail truncation); once the output outgrows that, it is also saved to a temp file (at most
64 MiB of it) whose path the note names.

Where pi 1.6.0 can hang or leak, this tool bounds:

- **Timeout.** pi has none by default; here a command gets :data:`DEFAULT_TIMEOUT_SECONDS`
  (120 s) unless the call sets ``timeout`` (the tool's schema tells the model so).
- **Background processes.** pi reads until every process holding the output pipe closes it,
  so ``sleep 100 &`` holds the call for 100 s. Here the call ends
  :data:`DRAIN_SECONDS` after the shell exits: output written until then is kept, processes
  still holding the pipe keep running (as they would in a terminal), and the result says so.
- **Stopping.** A timeout, an abort signal or task cancellation kills the command's process
  group and every process still holding its pipe (which catches ``setsid`` children).
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Final

from pi_context._json import js_number
from pi_context._keywords import keyword_checked
from pi_context.errors import ToolError
from pi_context.messages import text_block
from pi_context.tools.base import (
    CONSTRAINED_SAMPLING,
    ContextTool,
    ToolContext,
    ToolOutcome,
    UpdateCallback,
    error_outcome,
    text_outcome,
)
from pi_context.tools.bash_output import MAX_SPILL_BYTES, CommandOutput
from pi_context.tools.command_process import CommandPipe, kill_command, start_command
from pi_context.tools.truncate import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES

__all__ = [
    "DEFAULT_TIMEOUT_SECONDS",
    "DRAIN_SECONDS",
    "MAX_TIMEOUT_SECONDS",
    "SESSION_ENV_VARS",
    "BashTool",
    "default_shell",
    "format_seconds",
]

MAX_TIMEOUT_SECONDS: Final = 2147483.647
DEFAULT_TIMEOUT_SECONDS: Final = 120.0
"""A call without ``timeout`` is killed after two minutes (pi 1.6.0: never)."""
DRAIN_SECONDS: Final = 1.0
"""How long output is still collected after the shell exits while background processes keep
the pipe open."""
SESSION_ENV_VARS: Final = (
    "PI_SESSION_ID",
    "PI_SESSION_FILE",
    "PI_PROVIDER",
    "PI_MODEL",
    "PI_REASONING_LEVEL",
)
"""Inherited values of these are dropped; the live session's values are set instead."""

_UPDATE_INTERVAL: Final = 0.1
STRUCTURED_OUTPUT_MAX_BYTES: Final = 1024 * 1024
"""The most of a command's output that ``structuredContent.output`` holds (head and tail)."""
_STOP_DRAIN_SECONDS: Final = 1.0
_REAP_SECONDS: Final = 5.0
_BACKGROUND_NOTE: Final = (
    "[The shell exited, but processes it started in the background still hold its output; "
    "what they write from now on is not captured.]"
)


def _expand_shell_path(text: str) -> str:
    """``~`` / ``~/…`` from the home directory (``$HOME`` first) and a ``file://`` URL as its
    path, as pi reads the ``shellPath`` setting."""
    if text == "~" or text.startswith("~/"):
        home = os.environ.get("HOME") or str(Path.home())
        return home if text == "~" else os.path.join(home, text[2:])
    if text.startswith("file://"):
        from urllib.parse import unquote, urlparse

        return unquote(urlparse(text).path)
    return text


def default_shell(shell_path: str | None = None) -> str:
    """The configured shell (``~`` and ``file://`` understood), else ``/bin/bash``, else
    ``bash`` on PATH, else ``sh``."""
    if shell_path:
        shell_path = _expand_shell_path(shell_path)
        if not Path(shell_path).exists():
            raise ToolError(f"Custom shell path not found: {shell_path}")
        return shell_path
    if Path("/bin/bash").exists():
        return "/bin/bash"
    import shutil  # neither /bin/bash nor a configured shell: look on PATH

    return shutil.which("bash") or "sh"


def format_seconds(value: float) -> str:
    """Seconds the way JavaScript prints the number (``5``, ``1.5``)."""
    return js_number(value)


@keyword_checked
class BashTool(ContextTool):
    """Run a command with the configured shell; output is merged, tail-truncated, saved."""

    name = "bash"
    description = (
        "Run a bash command in the current working directory and return its combined stdout "
        f"and stderr. Only the last {DEFAULT_MAX_LINES} lines or {DEFAULT_MAX_BYTES // 1024}KB "
        "of output are returned; when output is cut, the full output is saved to a file whose "
        "path is given. Optionally set a timeout in seconds."
    )
    prompt_snippet = "Run shell commands (bash)"
    prompt_guidelines = (
        "Commands run with PI_SESSION_ID, PI_PROVIDER and PI_MODEL set for the current session.",
    )
    constrained_sampling = CONSTRAINED_SAMPLING

    def __init__(
        self,
        *,
        shell_path: str | None = None,
        command_prefix: str | None = None,
        agent_dir: Path | None = None,
        session_env: Callable[[], Mapping[str, str]] | None = None,
        default_timeout: float | None = DEFAULT_TIMEOUT_SECONDS,
        drain_seconds: float = DRAIN_SECONDS,
        max_spill_bytes: int = MAX_SPILL_BYTES,
    ) -> None:
        self.shell_path = shell_path
        self.command_prefix = command_prefix
        self.agent_dir = agent_dir
        self.session_env = session_env
        """Called per command for the live ``PI_*`` session variables."""
        self.default_timeout = default_timeout
        """Seconds for a call that sets no ``timeout``; ``None`` waits forever (as pi does)."""
        self.drain_seconds = drain_seconds
        self.max_spill_bytes = max_spill_bytes
        default = (
            f"; default {format_seconds(default_timeout)}" if default_timeout is not None else ""
        )
        self.parameters: dict[str, Any] = {
            "type": "object",
            "required": ["command"],
            "properties": {
                "command": {"type": "string", "description": "The command line to run"},
                "timeout": {
                    "type": "number",
                    "description": f"Seconds before the command is killed (optional{default})",
                },
            },
        }

    def environment(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in SESSION_ENV_VARS}
        if self.agent_dir is not None:
            bin_dir = str(Path(self.agent_dir) / "bin")
            path = env.get("PATH", "")
            if bin_dir not in path.split(os.pathsep):  # once, however deep pictx is nested
                env["PATH"] = bin_dir + os.pathsep + path if path else bin_dir
        if self.session_env is not None:
            env.update(self.session_env())
        return env

    def _timeout(self, arguments: dict[str, Any]) -> tuple[float | None, bool]:
        """The call's timeout in seconds, and whether it is the default one."""
        timeout = arguments.get("timeout")
        if timeout is None:
            return self.default_timeout, self.default_timeout is not None
        timeout = float(timeout)
        if not math.isfinite(timeout) or timeout <= 0:
            raise ToolError("Invalid timeout: must be a finite number of seconds")
        if timeout > MAX_TIMEOUT_SECONDS:
            raise ToolError(f"Invalid timeout: maximum is {MAX_TIMEOUT_SECONDS} seconds")
        return timeout, False

    async def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        command: str = arguments["command"]
        timeout, by_default = self._timeout(arguments)
        if not ctx.cwd.is_dir():
            raise ToolError(
                f"Working directory does not exist: {ctx.cwd}\nCannot execute bash commands."
            )
        shell = default_shell(self.shell_path)
        if self.command_prefix:
            command = f"{self.command_prefix}\n{command}"
        output = CommandOutput(max_spill_bytes=self.max_spill_bytes)
        updates = _Updates(output, ctx.on_update)
        try:
            proc, pipe = await start_command(
                [shell, "-c", command], cwd=ctx.cwd, env=self.environment(), on_data=updates.add
            )
            try:
                outcome = await self._supervise(proc, pipe, output, timeout, by_default, ctx)
                updates.finish()
                return outcome
            except BaseException:
                # Cancelled: nothing the command started may outlive it.
                kill_command(proc, pipe.inode)
                with contextlib.suppress(BaseException):
                    await asyncio.wait_for(proc.wait(), _REAP_SECONDS)
                raise
            finally:
                pipe.close()
        finally:
            updates.close()
            output.close()

    async def _supervise(
        self,
        proc: asyncio.subprocess.Process,
        pipe: CommandPipe,
        output: CommandOutput,
        timeout: float | None,
        by_default: bool,
        ctx: ToolContext,
    ) -> ToolOutcome:
        started = time.monotonic()
        deadline = None if timeout is None else started + timeout
        exited = asyncio.ensure_future(proc.wait())
        abort = asyncio.ensure_future(ctx.signal.wait()) if ctx.signal is not None else None
        shell_exit: float | None = None  # seconds from start to the shell's exit
        drain_until: float | None = None
        lingering = False
        try:
            while not (pipe.eof.done() and exited.done()):
                now = time.monotonic()
                if drain_until is not None and now >= drain_until:
                    lingering = True  # background processes keep the pipe: stop reading
                    break
                if deadline is not None and now >= deadline:
                    assert timeout is not None  # a deadline exists only with a timeout
                    await _stop(proc, pipe)
                    return _stopped(output, _timeout_message(timeout, by_default, proc, shell_exit))
                wakes = [t for t in (deadline, drain_until) if t is not None]
                waits = [f for f in (pipe.eof, exited, abort) if f is not None and not f.done()]
                await asyncio.wait(
                    waits,
                    timeout=max(0.0, min(wakes) - now) if wakes else None,
                    return_when=asyncio.FIRST_COMPLETED,
                )
                if abort is not None and abort.done():
                    await _stop(proc, pipe)
                    return _stopped(output, "Command aborted")
                if exited.done() and shell_exit is None:
                    shell_exit = time.monotonic() - started
                    drain_until = time.monotonic() + self.drain_seconds
            code = _exit_code(exited.result())
        finally:
            for task in (exited, abort):
                if task is not None and not task.done():
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await task
        text, trunc = output.truncated()
        if lingering:
            text = f"{text}\n\n{_BACKGROUND_NOTE}"
        details = (
            {"truncation": trunc.to_json(), "fullOutputPath": output.spill_path}
            if trunc.truncated
            else None
        )
        structured = _structured(output, code, time.monotonic() - started)
        if code != 0:
            return ToolOutcome(
                [text_block(f"{text}\n\nCommand exited with code {code}")],
                details,
                is_error=True,
                structured_content=structured,
            )
        return ToolOutcome([text_block(text)], details, structured_content=structured)


def _structured(output: CommandOutput, code: int, seconds: float) -> dict[str, Any]:
    """The result for programs, as pi's ``structuredContent``: the whole output (up to 1 MiB:
    its head and tail around an omission note beyond), the exit code and the wall time in
    tenths of a second."""
    text, cut = output.full_text(STRUCTURED_OUTPUT_MAX_BYTES)
    record: dict[str, Any] = {"output": text, "truncated": cut}
    if cut and output.spill_path is not None:
        record["full_output_path"] = output.spill_path
    record["exit_code"] = code
    record["wall_time_seconds"] = round(seconds, 1)
    return record


class _Updates:
    """Feeds output to the collector and sends live updates: an empty one at once (a client
    waits for it to show that output is coming), then the output so far at most every
    :data:`_UPDATE_INTERVAL` seconds, with a trailing update for output that arrived within
    an interval (so the last update shows everything the command printed)."""

    def __init__(self, output: CommandOutput, on_update: UpdateCallback | None) -> None:
        self.output = output
        self.on_update = on_update
        self.last = 0.0
        self.pending: asyncio.TimerHandle | None = None
        if on_update is not None:
            on_update(ToolOutcome([]))

    def add(self, chunk: bytes) -> None:
        self.output.add(chunk)
        if self.on_update is None:
            return
        wait = _UPDATE_INTERVAL - (time.monotonic() - self.last)
        if wait <= 0:
            self.send()
        elif self.pending is None:
            self.pending = asyncio.get_running_loop().call_later(wait, self.send)

    def send(self) -> None:
        """The output so far as an update."""
        if self.pending is not None:
            self.pending.cancel()
            self.pending = None
        if self.on_update is None:
            return
        self.last = time.monotonic()
        text, trunc = self.output.preview()
        details: dict[str, Any] = {}
        if trunc.truncated:
            details = {"truncation": trunc.to_json(), "fullOutputPath": self.output.spill_path}
        self.on_update(text_outcome(text, details=details))

    def finish(self) -> None:
        """The command is done: send what a pending update would have shown, then no more."""
        if self.pending is not None:
            self.send()
        self.close()

    def close(self) -> None:
        """No more updates (a pending one is dropped)."""
        if self.pending is not None:
            self.pending.cancel()
            self.pending = None
        self.on_update = None


def _timeout_message(
    timeout: float, by_default: bool, proc: asyncio.subprocess.Process, shell_exit: float | None
) -> str:
    message = f"Command timed out after {format_seconds(timeout)} seconds"
    if by_default:
        message += " (the default; set timeout to allow longer)"
    if shell_exit is not None and proc.returncode is not None:
        message += (
            f". The shell exited with code {_exit_code(proc.returncode)} after "
            f"{format_seconds(round(shell_exit, 1))} seconds, but background "
            "processes it started kept writing output until the timeout."
        )
    return message


async def _stop(proc: asyncio.subprocess.Process, pipe: CommandPipe) -> None:
    """Kill everything the command started, take what is left in the pipe, reap the shell."""
    kill_command(proc, pipe.inode)
    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(asyncio.shield(pipe.eof), _STOP_DRAIN_SECONDS)
    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(proc.wait(), _REAP_SECONDS)


def _stopped(output: CommandOutput, message: str) -> ToolOutcome:
    text = output.text()
    if text:
        text, _ = output.truncated()
        return error_outcome(f"{text}\n\n{message}")
    return error_outcome(message)


def _exit_code(returncode: int) -> int:
    return 128 - returncode if returncode < 0 else returncode
