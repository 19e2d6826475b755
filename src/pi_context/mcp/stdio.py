"""The stdio transport: a server process spawned at once, its pipes bridged to the SDK session.

The server is spawned by :func:`spawn` with :class:`subprocess.Popen`, synchronously, before
anything of the SDK is imported: a server written in Python or Node needs a second or more to
start, and it can use it while the client imports its own side. :func:`stdio_streams` then
bridges the pipes to the memory streams ``mcp``'s ``ClientSession`` reads and writes:
newline-delimited JSON messages (a trailing ``\\r`` dropped, blank lines skipped, 16 MiB at most
per message).

The server runs in its own process group. Closing ends its stdin, gives it 0.5 s to exit, then
sends SIGTERM to the group and, 2 s later, SIGKILL. A group still alive when the interpreter
exits (a session never closed) is sent SIGTERM then.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import subprocess

TYPE_CHECKING = False  # not typing's: the command line imports this before spawning servers
if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable, Mapping, Sequence
    from typing import IO, Any, Final

__all__ = [
    "MAX_MESSAGE_BYTES",
    "anonymous_file",
    "leave_process",
    "spawn",
    "stdio_streams",
    "stop_process",
]

MAX_MESSAGE_BYTES: Final = 16 * 1024 * 1024
EXIT_GRACE_SECONDS: Final = 0.5
"""How long a server has to exit by itself once its stdin is closed."""
TERM_GRACE_SECONDS: Final = 2.0
"""How long after SIGTERM its process group is sent SIGKILL."""
_POLL_SECONDS: Final = 0.01

_LIVE: set[subprocess.Popen[bytes]] = set()
"""Spawned servers not stopped yet (their groups get SIGTERM at interpreter exit)."""


def anonymous_file() -> IO[bytes]:
    """A temporary file with no name, for a server's stderr: opened with ``O_TMPFILE`` in
    ``$TMPDIR`` (or ``/tmp``) where the system has it, else by :func:`tempfile.TemporaryFile`
    (whose import costs the command line's early spawn more than the file does)."""
    flag = getattr(os, "O_TMPFILE", 0)
    if flag:
        try:
            fd = os.open(os.environ.get("TMPDIR") or "/tmp", flag | os.O_RDWR, 0o600)
        except OSError:
            pass
        else:
            return open(fd, "w+b")
    import tempfile

    return tempfile.TemporaryFile()


def spawn(
    command: str,
    args: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: str,
    stderr: IO[bytes],
) -> subprocess.Popen[bytes]:
    """Start the server without a shell, in a new process group; raises :class:`OSError`
    when it cannot be started."""
    proc = subprocess.Popen(
        [command, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=stderr,
        cwd=cwd,
        env=dict(env),
        start_new_session=True,
    )
    _LIVE.add(proc)
    return proc


@contextlib.asynccontextmanager
async def stdio_streams(
    proc: subprocess.Popen[bytes], leave: Callable[[], bool] = lambda: False
) -> AsyncIterator[tuple[Any, Any]]:
    """``(read_stream, write_stream)`` for ``ClientSession`` over the process's pipes; the
    process is stopped when the block ends (left to stop without us when ``leave()`` says so
    then: :func:`leave_process`)."""
    import asyncio
    import typing

    import anyio
    from mcp.shared.message import SessionMessage
    from mcp_types import jsonrpc_message_adapter

    assert proc.stdin is not None
    assert proc.stdout is not None
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=MAX_MESSAGE_BYTES, loop=loop)
    read_transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader, loop=loop), proc.stdout
    )
    write_transport, write_protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, proc.stdin
    )
    writer = asyncio.StreamWriter(write_transport, write_protocol, None, loop)
    incoming_send, incoming = anyio.create_memory_object_stream[typing.Any](0)
    outgoing, outgoing_receive = anyio.create_memory_object_stream[typing.Any](0)

    async def read_lines() -> None:
        async with incoming_send:
            while True:
                try:
                    line = await reader.readuntil(b"\n")
                except asyncio.IncompleteReadError as end:
                    line = end.partial
                    if not line.strip():
                        return
                except (asyncio.LimitOverrunError, ValueError, OSError):
                    return  # an oversized message or a broken pipe ends the connection
                text = line.rstrip(b"\n").removesuffix(b"\r")
                if not text.strip():
                    continue
                item: Any
                try:
                    item = SessionMessage(
                        jsonrpc_message_adapter.validate_json(text, by_name=False)
                    )
                except ValueError as exc:  # the session reports a malformed message
                    item = exc
                try:
                    await incoming_send.send(item)
                except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                    return

    async def write_messages() -> None:
        try:
            async with outgoing_receive:
                async for message in outgoing_receive:
                    data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    writer.write(data.encode() + b"\n")
                    await writer.drain()
        except (OSError, anyio.ClosedResourceError, anyio.BrokenResourceError):
            await incoming_send.aclose()  # the session sees the connection end

    tasks = [loop.create_task(read_lines()), loop.create_task(write_messages())]
    try:
        yield incoming, outgoing
    finally:
        outgoing.close()
        incoming.close()
        # every message the session sent is in the pipe's buffer already (the streams hold
        # none); closing the pipe writes the buffer out, then the server's stdin ends
        write_transport.close()
        try:
            if leave():
                leave_process(proc, pipes_owned=True)
            else:
                await stop_process(proc, pipes_owned=True)
        except BaseException:  # cancelled while waiting: the stop goes on without us
            leave_process(proc, pipes_owned=True)
            raise
        finally:
            read_transport.close()
            for task in tasks:
                task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def stop_process(proc: subprocess.Popen[bytes], *, pipes_owned: bool = False) -> None:
    """Close stdin, wait :data:`EXIT_GRACE_SECONDS`, SIGTERM the group, wait
    :data:`TERM_GRACE_SECONDS`, SIGKILL it. ``pipes_owned``: the pipes belong to transports,
    which close them (stdin is closed already)."""
    if not pipes_owned and proc.stdin is not None:
        with contextlib.suppress(OSError):
            proc.stdin.close()
    try:
        if await _exited(proc, EXIT_GRACE_SECONDS):
            return
        _signal_group(proc, signal.SIGTERM)
        if await _exited(proc, TERM_GRACE_SECONDS):
            return
        _signal_group(proc, signal.SIGKILL)
        await _exited(proc, TERM_GRACE_SECONDS)
    finally:
        _LIVE.discard(proc)
        if not pipes_owned and proc.stdout is not None:
            with contextlib.suppress(OSError):
                proc.stdout.close()


_REAPER: Final = (
    '( sleep "$2"; kill -0 -"$1" 2>/dev/null || exit 0; kill -TERM -"$1"; '
    'sleep "$3"; kill -KILL -"$1" 2>/dev/null ) &'
)
"""``sh -c`` script: ``$1`` the process group, ``$2`` and ``$3`` the two grace periods. The
work runs in a background subshell, so ``sh`` itself returns at once and the subshell, adopted
by init, outlives pictx (no ``--`` before a negative pid: dash's ``kill`` takes none)."""


def leave_process(proc: subprocess.Popen[bytes], *, pipes_owned: bool = False) -> None:
    """Stop a server without waiting for it, when the process that runs the session is about
    to exit: its stdin is closed now (by its transport when ``pipes_owned``), and a detached
    ``sh`` carries out the rest of :func:`stop_process` (SIGTERM to the group after
    :data:`EXIT_GRACE_SECONDS` if it is still there, SIGKILL :data:`TERM_GRACE_SECONDS`
    later)."""
    _LIVE.discard(proc)
    for pipe in () if pipes_owned else (proc.stdin, proc.stdout):
        if pipe is not None:
            with contextlib.suppress(OSError):
                pipe.close()
    if proc.poll() is not None:
        return
    args = [str(proc.pid), str(EXIT_GRACE_SECONDS), str(TERM_GRACE_SECONDS)]
    try:
        subprocess.run(
            ["/bin/sh", "-c", _REAPER, "pictx-mcp-stop", *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            check=False,
            timeout=5,
        )
    except (OSError, subprocess.TimeoutExpired):
        _signal_group(proc, signal.SIGTERM)  # no shell: the group gets SIGTERM at once
    proc.returncode = 0  # not ours to wait for any more (no "still running" warning)


async def _exited(proc: subprocess.Popen[bytes], seconds: float) -> bool:
    import asyncio

    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while proc.poll() is None:
        if loop.time() >= deadline:
            return False
        await asyncio.sleep(_POLL_SECONDS)
    return True


def _signal_group(proc: subprocess.Popen[bytes], sig: signal.Signals) -> None:
    with contextlib.suppress(OSError):
        os.killpg(proc.pid, sig)  # its own group: start_new_session made it the leader


@atexit.register
def _terminate_left_over() -> None:
    for proc in list(_LIVE):
        if proc.poll() is None:
            _signal_group(proc, signal.SIGTERM)
    _LIVE.clear()
