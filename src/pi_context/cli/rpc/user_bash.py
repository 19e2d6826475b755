"""A user's shell command, outside the model's tool calls: RPC's ``bash`` and the editor's
``!command`` (:func:`run_user_bash`, both).

The command runs with the configured shell (settings ``shellPath``; ``shellCommandPrefix`` is
put before it on its own line) in the session's working directory, stdout and stderr merged.
Every chunk of output is passed to ``on_output`` as it arrives (all of it, even when the
result is truncated); the result keeps the tail within the bash tool's limits, and the whole
output goes to a temporary file once it passes them (``fullOutputPath``).
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import secrets
import signal
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from pi_context.messages import BashExecutionMessage, bash_execution_message
from pi_context.tools.bash import default_shell
from pi_context.tools.truncate import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, truncate_tail

__all__ = ["BashResult", "UserBash", "run_user_bash"]

_READ = 65536
_KEEP = 4 * DEFAULT_MAX_BYTES  # in-memory tail; the whole output is spilled past the limits


@dataclass(frozen=True, slots=True)
class BashResult:
    output: str
    exit_code: int | None
    cancelled: bool
    truncated: bool
    full_output_path: str | None = None

    def to_json(self) -> dict[str, Any]:
        record: dict[str, Any] = {"output": self.output}
        if self.exit_code is not None:
            record["exitCode"] = self.exit_code
        record["cancelled"] = self.cancelled
        record["truncated"] = self.truncated
        if self.full_output_path is not None:
            record["fullOutputPath"] = self.full_output_path
        return record


class _Collected:
    def __init__(self) -> None:
        self.tail = bytearray()
        self.total = 0
        self.lines = 0
        self.spill: IO[bytes] | None = None
        self.spill_path: str | None = None

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        self.lines += chunk.count(b"\n")
        self.tail += chunk
        if self.spill is not None:
            self.spill.write(chunk)
        elif self.total > DEFAULT_MAX_BYTES or self.lines > DEFAULT_MAX_LINES:
            # the tail is still whole here: it is trimmed only well past the limits
            path = Path(tempfile.gettempdir()) / f"pi-bash-{secrets.token_hex(8)}.log"
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            self.spill = os.fdopen(fd, "wb")
            self.spill_path = str(path)
            self.spill.write(bytes(self.tail))
        if len(self.tail) > 2 * _KEEP:
            del self.tail[: len(self.tail) - _KEEP]

    def close(self) -> None:
        if self.spill is not None:
            self.spill.close()


class UserBash:
    """Runs user commands; :meth:`abort_all` stops every one still running."""

    def __init__(self) -> None:
        self._running: set[asyncio.subprocess.Process] = set()
        self._cancelled: set[int] = set()

    @property
    def running(self) -> bool:
        return bool(self._running)

    async def run(
        self,
        command: str,
        *,
        cwd: str,
        shell_path: str | None = None,
        command_prefix: str | None = None,
        on_output: Callable[[str], None] | None = None,
    ) -> BashResult:
        shell = default_shell(shell_path)
        if command_prefix:
            command = f"{command_prefix}\n{command}"
        proc = await asyncio.create_subprocess_exec(
            shell,
            "-c",
            command,
            cwd=cwd,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
        self._running.add(proc)
        collected = _Collected()
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        try:
            assert proc.stdout is not None
            while chunk := await proc.stdout.read(_READ):
                collected.add(chunk)
                text = decoder.decode(chunk)
                if text and on_output is not None:
                    on_output(text)
            rest = decoder.decode(b"", final=True)
            if rest and on_output is not None:
                on_output(rest)
            code = await proc.wait()
        except asyncio.CancelledError:
            _kill(proc)
            raise
        finally:
            self._running.discard(proc)
            collected.close()
        cancelled = proc.pid in self._cancelled
        self._cancelled.discard(proc.pid)
        text = bytes(collected.tail).decode("utf-8", "replace")
        result = truncate_tail(text)
        return BashResult(
            output=result.content if result.truncated else text,
            exit_code=None if cancelled else (code if code >= 0 else 128 - code),
            cancelled=cancelled,
            truncated=result.truncated or collected.spill_path is not None,
            full_output_path=collected.spill_path,
        )

    def abort_all(self) -> None:
        for proc in list(self._running):
            self._cancelled.add(proc.pid)
            _kill(proc)


async def run_user_bash(
    bash: UserBash,
    command: str,
    *,
    cwd: str,
    settings: Mapping[str, object],
    timestamp: Callable[[], int],
    on_output: Callable[[str], None] | None = None,
    exclude_from_context: bool | None = None,
) -> tuple[BashResult, BashExecutionMessage]:
    """Run a user's command as RPC ``bash`` and the editor's ``!command`` both do (the
    settings' ``shellPath`` and ``shellCommandPrefix``), and the ``bashExecution`` message
    recording it (``exclude_from_context`` ``None`` leaves the field out, as pi does)."""
    shell = settings.get("shellPath")
    prefix = settings.get("shellCommandPrefix")
    result = await bash.run(
        command,
        cwd=cwd,
        shell_path=shell if isinstance(shell, str) else None,
        command_prefix=prefix if isinstance(prefix, str) else None,
        on_output=on_output,
    )
    message = bash_execution_message(
        command,
        result.output,
        exit_code=result.exit_code,
        cancelled=result.cancelled,
        truncated=result.truncated,
        full_output_path=result.full_output_path,
        exclude_from_context=exclude_from_context,
        timestamp=timestamp(),
    )
    return result, message


def _kill(proc: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
