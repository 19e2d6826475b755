"""The ``bash`` tool: run a shell command in the session's cwd.

stdout and stderr are merged in arrival order. The model gets the last 2000 lines / 50 KB
(tail truncation); once the output outgrows that, the whole of it is also saved to a temp
file whose path the note names. There is no default timeout. The command runs in its own
process group, so a timeout, an abort signal or task cancellation kills everything it started.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import secrets
import shutil
import signal as signals
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, Any, Final

from pi_context._json import js_number
from pi_context.errors import ToolError
from pi_context.tools.base import (
    CONSTRAINED_SAMPLING,
    ContextTool,
    ToolContext,
    ToolOutcome,
    UpdateCallback,
    error_outcome,
    text_outcome,
)
from pi_context.tools.truncate import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_LINES,
    TruncationResult,
    format_size,
    truncate_tail,
)

__all__ = ["MAX_TIMEOUT_SECONDS", "SESSION_ENV_VARS", "BashTool", "default_shell", "format_seconds"]

MAX_TIMEOUT_SECONDS: Final = 2147483.647
SESSION_ENV_VARS: Final = (
    "PI_SESSION_ID",
    "PI_SESSION_FILE",
    "PI_PROVIDER",
    "PI_MODEL",
    "PI_REASONING_LEVEL",
)
"""Inherited values of these are dropped; the live session's values are set instead."""

_UPDATE_INTERVAL: Final = 0.1
_READ_CHUNK: Final = 65536


def default_shell(shell_path: str | None = None) -> str:
    """The configured shell, else ``/bin/bash``, else ``bash`` on PATH, else ``sh``."""
    if shell_path:
        if not Path(shell_path).exists():
            raise ToolError(f"Custom shell path not found: {shell_path}")
        return shell_path
    if Path("/bin/bash").exists():
        return "/bin/bash"
    return shutil.which("bash") or "sh"


def format_seconds(value: float) -> str:
    """Seconds the way JavaScript prints the number (``5``, ``1.5``)."""
    return js_number(value)


@dataclass
class _Output:
    """Collects merged output: a bounded in-memory tail, line/byte counts, and a spill file."""

    max_bytes: int = DEFAULT_MAX_BYTES
    max_lines: int = DEFAULT_MAX_LINES
    tail: bytearray = field(default_factory=bytearray)
    trimmed: bool = False
    total_bytes: int = 0
    newlines: int = 0
    last_line_bytes: int = 0
    spill_path: str | None = None
    _spill: IO[bytes] | None = None

    def add(self, chunk: bytes) -> None:
        self.total_bytes += len(chunk)
        self.newlines += chunk.count(b"\n")
        cut = chunk.rfind(b"\n")
        self.last_line_bytes = (
            len(chunk) - cut - 1 if cut >= 0 else self.last_line_bytes + len(chunk)
        )
        if self._spill is None and (
            self.total_bytes > self.max_bytes or self.newlines > self.max_lines
        ):
            self._open_spill()
        if self._spill is not None:
            self._spill.write(chunk)
        self.tail += chunk
        keep = 4 * self.max_bytes
        if len(self.tail) > 2 * keep:
            del self.tail[: len(self.tail) - keep]
            self.trimmed = True

    def _open_spill(self) -> None:
        path = Path(tempfile.gettempdir()) / f"pi-bash-{secrets.token_hex(8)}.log"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        self._spill = os.fdopen(fd, "wb")
        self.spill_path = str(path)
        self._spill.write(bytes(self.tail))

    def close(self) -> None:
        if self._spill is not None:
            self._spill.close()

    @property
    def total_lines(self) -> int:
        ends_with_newline = self.total_bytes > 0 and self.tail.endswith(b"\n")
        return self.newlines + (0 if ends_with_newline else 1)

    def text(self) -> str:
        data = bytes(self.tail)
        if self.trimmed:
            cut = data.find(b"\n")
            if 0 <= cut < len(data) - 1:
                data = data[cut + 1 :]
        return data.decode("utf-8", "replace")

    def truncated(self) -> tuple[str, TruncationResult]:
        """The text to show (with its note) and the truncation record."""
        text = self.text()
        result = truncate_tail(text, max_lines=self.max_lines, max_bytes=self.max_bytes)
        if self.trimmed:  # the in-memory tail is partial: report the whole output's totals
            result = _with_totals(result, self.total_lines, self.total_bytes)
        if not result.truncated:
            return (text or "(no output)"), result
        if self._spill is None:  # cut by the line count of a final unterminated line
            self._open_spill()
        last = result.total_lines
        first = last - result.output_lines + 1
        if result.last_line_partial:
            note = (
                f"[Showing last {format_size(result.output_bytes)} of line {last} "
                f"(line is {format_size(self.last_line_bytes)}). Full output: {self.spill_path}]"
            )
        elif result.truncated_by == "lines":
            note = f"[Showing lines {first}-{last} of {last}. Full output: {self.spill_path}]"
        else:
            note = (
                f"[Showing lines {first}-{last} of {last} ({format_size(self.max_bytes)} limit). "
                f"Full output: {self.spill_path}]"
            )
        return f"{result.content or '(no output)'}\n\n{note}", result


def _with_totals(result: TruncationResult, lines: int, size: int) -> TruncationResult:
    return replace(
        result,
        total_lines=lines,
        total_bytes=size,
        truncated=True,
        truncated_by=result.truncated_by or "bytes",
    )


class BashTool(ContextTool):
    """Run a command with the configured shell; output is merged, tail-truncated, saved."""

    name = "bash"
    description = (
        "Run a bash command in the current working directory and return its combined stdout "
        f"and stderr. Only the last {DEFAULT_MAX_LINES} lines or {DEFAULT_MAX_BYTES // 1024}KB "
        "of output are returned; when output is cut, the full output is saved to a file whose "
        "path is given. Optionally set a timeout in seconds."
    )
    parameters: dict[str, Any] = {  # noqa: RUF012 - class-level schema, never mutated
        "type": "object",
        "required": ["command"],
        "properties": {
            "command": {"type": "string", "description": "The command line to run"},
            "timeout": {
                "type": "number",
                "description": "Seconds before the command is killed (optional)",
            },
        },
    }
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
    ) -> None:
        self.shell_path = shell_path
        self.command_prefix = command_prefix
        self.agent_dir = agent_dir
        self.session_env = session_env
        """Called per command for the live ``PI_*`` session variables."""

    def environment(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in SESSION_ENV_VARS}
        if self.agent_dir is not None:
            bin_dir = str(Path(self.agent_dir) / "bin")
            env["PATH"] = bin_dir + os.pathsep + env.get("PATH", "") if env.get("PATH") else bin_dir
        if self.session_env is not None:
            env.update(self.session_env())
        return env

    async def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        command: str = arguments["command"]
        timeout = arguments.get("timeout")
        if timeout is not None:
            timeout = float(timeout)
            if not math.isfinite(timeout) or timeout <= 0:
                raise ToolError("Invalid timeout: must be a finite number of seconds")
            if timeout > MAX_TIMEOUT_SECONDS:
                raise ToolError(f"Invalid timeout: maximum is {MAX_TIMEOUT_SECONDS} seconds")
        if not ctx.cwd.is_dir():
            raise ToolError(
                f"Working directory does not exist: {ctx.cwd}\nCannot execute bash commands."
            )
        shell = default_shell(self.shell_path)
        if self.command_prefix:
            command = f"{self.command_prefix}\n{command}"
        spawn = asyncio.ensure_future(
            asyncio.create_subprocess_exec(
                shell,
                "-c",
                command,
                cwd=str(ctx.cwd),
                env=self.environment(),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
                start_new_session=True,
            )
        )
        try:
            proc = await asyncio.shield(spawn)
        except asyncio.CancelledError:
            # Cancelled while the shell was starting: it may already run, so finish the
            # spawn and kill its whole group rather than orphan what it started.
            proc = await spawn
            await _kill_and_reap(proc, None)
            raise
        output = _Output()
        try:
            return await self._supervise(proc, output, timeout, ctx)
        except BaseException:
            _kill_group(proc)  # cancelled: nothing the command started may outlive it
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(proc.wait(), 5)
            raise
        finally:
            output.close()

    async def _supervise(
        self,
        proc: asyncio.subprocess.Process,
        output: _Output,
        timeout: float | None,
        ctx: ToolContext,
    ) -> ToolOutcome:
        started = time.monotonic()
        shell_exit: list[float] = []
        reader = asyncio.create_task(self._pump(proc, output, ctx.on_update))
        waiter = asyncio.create_task(proc.wait())
        watcher = asyncio.create_task(_watch_exit(proc, started, shell_exit))
        aborter = asyncio.create_task(ctx.signal.wait()) if ctx.signal is not None else None
        try:
            pending: set[asyncio.Future[Any]] = {reader}
            if aborter is not None:
                pending.add(aborter)
            deadline = None if timeout is None else started + timeout
            while not reader.done():
                remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
                await asyncio.wait(pending, timeout=remaining, return_when=asyncio.FIRST_COMPLETED)
                if aborter is not None and aborter.done():
                    await _kill_and_reap(proc, reader)
                    return _stopped(output, "Command aborted")
                if deadline is not None and time.monotonic() >= deadline and not reader.done():
                    assert timeout is not None  # a deadline exists only with a timeout
                    exited_early = proc.returncode is not None
                    await _kill_and_reap(proc, reader)
                    message = f"Command timed out after {format_seconds(timeout)} seconds"
                    if exited_early and proc.returncode is not None and shell_exit:
                        message += (
                            f". The shell exited with code {_exit_code(proc.returncode)} after "
                            f"{format_seconds(round(shell_exit[0], 1))} seconds, but background "
                            "processes it started kept writing output until the timeout."
                        )
                    return _stopped(output, message)
            code = _exit_code(await waiter)
        finally:
            for task in (reader, waiter, watcher, aborter):
                if task is not None and not task.done():
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError, ProcessLookupError):
                        await task
        text, trunc = output.truncated()
        details = (
            {"truncation": trunc.to_json(), "fullOutputPath": output.spill_path}
            if trunc.truncated
            else None
        )
        if code != 0:
            return text_outcome(
                f"{text}\n\nCommand exited with code {code}", details=details, is_error=True
            )
        return text_outcome(text, details=details)

    async def _pump(
        self, proc: asyncio.subprocess.Process, output: _Output, on_update: UpdateCallback | None
    ) -> None:
        assert proc.stdout is not None
        last_update = 0.0
        if on_update is not None:
            on_update(ToolOutcome([]))
        while chunk := await proc.stdout.read(_READ_CHUNK):
            output.add(chunk)
            now = time.monotonic()
            if on_update is not None and now - last_update >= _UPDATE_INTERVAL:
                last_update = now
                text, trunc = output.truncated()
                details: dict[str, Any] = {}
                if trunc.truncated:
                    details = {"truncation": trunc.to_json(), "fullOutputPath": output.spill_path}
                on_update(text_outcome(text, details=details))


def _stopped(output: _Output, message: str) -> ToolOutcome:
    text = output.text()
    if text:
        text, _ = output.truncated()
        return error_outcome(f"{text}\n\n{message}")
    return error_outcome(message)


def _exit_code(returncode: int) -> int:
    return 128 - returncode if returncode < 0 else returncode


async def _watch_exit(proc: asyncio.subprocess.Process, started: float, out: list[float]) -> None:
    """Note when the shell itself exits (``wait()`` also waits for the pipes to close)."""
    while proc.returncode is None:
        await asyncio.sleep(0.05)
    out.append(time.monotonic() - started)


async def _kill_and_reap(
    proc: asyncio.subprocess.Process, reader: asyncio.Task[None] | None
) -> None:
    """Kill the command's process group, then let the reader drain to EOF and reap the shell."""
    _kill_group(proc)
    if reader is not None:
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.shield(reader), 5)
    else:
        assert proc.stdout is not None
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(proc.stdout.read(), 5)
    await proc.wait()


def _kill_group(proc: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signals.SIGKILL)
