"""Starting a shell command with its own output pipe, and stopping everything it started.

The command runs in a new session (so in its own process group) with stdout and stderr on one
pipe this module creates. Owning the pipe, rather than letting asyncio's subprocess transport
own it, lets the caller stop reading when the shell has exited even though a background child
still holds the pipe's write end, and close it: nothing is left for the event loop to clean
up after it has closed (no ``Event loop is closed`` noise at exit).

:func:`kill_command` kills the process group and, on Linux, every other process that still
holds the pipe: children that left the group (``setsid``, daemons) are found by the pipe they
inherited.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal as signals
from collections.abc import Callable, Mapping
from pathlib import Path

from msgspec import Struct

__all__ = ["CommandPipe", "kill_command", "pipe_holders", "start_command"]


class _PipeProtocol(asyncio.Protocol):
    def __init__(self, on_data: Callable[[bytes], None], eof: asyncio.Future[None]) -> None:
        self._on_data = on_data
        self._eof = eof

    def data_received(self, data: bytes) -> None:
        self._on_data(data)

    def eof_received(self) -> bool:
        self._done()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self._done()

    def _done(self) -> None:
        if not self._eof.done():
            self._eof.set_result(None)


class CommandPipe(Struct):
    """The read end of a command's output pipe, delivering data as it arrives."""

    transport: asyncio.ReadTransport
    eof: asyncio.Future[None]
    """Done when every process holding the write end has closed it (or the pipe is closed)."""
    inode: int
    """Identifies the pipe in ``/proc/<pid>/fd`` (``pipe:[<inode>]``)."""

    def close(self) -> None:
        """Stop reading; a process still writing gets ``EPIPE``/``SIGPIPE``."""
        self.transport.close()


async def start_command(
    argv: list[str], *, cwd: Path, env: Mapping[str, str], on_data: Callable[[bytes], None]
) -> tuple[asyncio.subprocess.Process, CommandPipe]:
    """Start ``argv`` in a new session with stdin from ``/dev/null`` and stdout+stderr merged
    on a new pipe whose data goes to ``on_data``.

    Cancelled while starting, the command is killed (with all it started) before
    :class:`asyncio.CancelledError` propagates.
    """
    loop = asyncio.get_running_loop()
    read_fd, write_fd = os.pipe()
    inode = os.fstat(read_fd).st_ino
    try:
        spawn = asyncio.ensure_future(
            asyncio.create_subprocess_exec(
                *argv,
                cwd=str(cwd),
                env=dict(env),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=write_fd,
                stderr=write_fd,
                start_new_session=True,
            )
        )
        try:
            proc = await asyncio.shield(spawn)
        except asyncio.CancelledError:
            # The shell may already run: finish the spawn and kill what it started.
            proc = await spawn
            kill_command(proc, inode)
            await proc.wait()
            raise
        finally:
            os.close(write_fd)  # the command has its own copies
        eof: asyncio.Future[None] = loop.create_future()
        pipe_file = os.fdopen(read_fd, "rb", buffering=0)
    except BaseException:
        os.close(read_fd)
        raise
    try:
        transport, _ = await loop.connect_read_pipe(lambda: _PipeProtocol(on_data, eof), pipe_file)
    except BaseException:
        pipe_file.close()
        kill_command(proc, inode)
        raise
    return proc, CommandPipe(transport, eof, inode)


def kill_command(proc: asyncio.subprocess.Process, inode: int | None = None) -> None:
    """SIGKILL the command's process group and every other process holding its pipe."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signals.SIGKILL)
    if inode is None:
        return
    for pid in pipe_holders(inode):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signals.SIGKILL)


def pipe_holders(inode: int) -> list[int]:
    """Processes other than this one with the pipe ``inode`` open (Linux; elsewhere none)."""
    target = f"pipe:[{inode}]"
    me = os.getpid()
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    holders: list[int] = []
    for name in entries:
        if not name.isdigit() or int(name) == me:
            continue
        try:
            fds = os.listdir(f"/proc/{name}/fd")
        except OSError:  # gone, or another user's
            continue
        for fd in fds:
            with contextlib.suppress(OSError):
                if os.readlink(f"/proc/{name}/fd/{fd}") == target:
                    holders.append(int(name))
                    break
    return holders
