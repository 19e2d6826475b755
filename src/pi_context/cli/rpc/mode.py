"""``pictx --mode rpc``: pi's JSON-lines protocol over stdin and stdout.

Startup writes nothing (a client probes readiness with ``get_state``). Each input line is
dispatched as soon as it is read, so responses may come out of order and between events;
clients correlate them by ``id``. ``extension_ui_response`` lines answer extension dialogs
and get no response.

Shutdown: end of input, SIGTERM or SIGHUP stop the event stream, abort any run, tell
extensions (``session_shutdown``) and close the session, then the process ends at once; the
exit code is 0 for end of input, 143 for SIGTERM and 129 for SIGHUP. A second signal during
shutdown exits at once with its code.
A failed write to stdout (the client went away) exits with 1.

Where pi 1.6.0 has a defect, pictx does better (docs/compatibility.md): a second ``prompt``
sent before the first run is active is refused with pi's "already processing" error instead
of answering ``started`` and being dropped.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import signal
import sys
from typing import Any, BinaryIO

from pi_context.cli.app.agent_api import AgentApi

from .commands import CommandHandlers, Started
from .framing import MAX_LINE_CHARS, OVERLONG, LineReader, RecordWriter
from .records import RpcCommandError, failure, parse_command, success
from .runtime import RpcRuntime

__all__ = ["RpcServer", "run_rpc", "take_over_stdout"]

_GRACE_SECONDS = 5.0
"""How long commands in flight at shutdown (e.g. one waiting for a dialog answer) may take."""
_SIGNAL_CODES = {int(signal.SIGTERM): 143, int(signal.SIGHUP): 129}


def take_over_stdout() -> BinaryIO:
    """The real stdout for protocol records; everything else written to stdout (prints,
    file descriptor 1 of child processes) goes to stderr from now on."""
    sys.stdout.flush()
    protocol = os.fdopen(os.dup(1), "wb")  # buffered: a record is written whole, then flushed
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return protocol


class RpcServer:
    """Reads commands, dispatches them concurrently, writes responses and events."""

    def __init__(self, app: AgentApi, out: BinaryIO) -> None:
        self._done: asyncio.Future[int] | None = None
        self.writer = RecordWriter(out, on_failure=self._on_write_failure)
        self.runtime = RpcRuntime(app, self.writer.write)
        self.handlers = CommandHandlers(self.runtime)
        self._tasks: set[asyncio.Task[None]] = set()
        self._shutting_down = False
        self._exit_task: asyncio.Task[None] | None = None
        self.runtime.on_exit_request = self._exit_requested

    def _exit_requested(self) -> None:
        """``ctx.shutdown()``: end in order (exit code 0) once no command is being handled
        (the one that asked gets its response first) and the agent is idle."""
        if self._exit_task is None and not self._shutting_down:
            self._exit_task = asyncio.get_running_loop().create_task(self._exit_when_idle())

    async def _exit_when_idle(self) -> None:
        while True:
            busy = [task for task in self._tasks if not task.done()]
            if busy:
                await asyncio.wait(busy)
            elif self.runtime.streaming:
                await self.runtime.wait_idle()
            else:
                break
        await self.shutdown(0)

    def _on_write_failure(self, _exc: OSError) -> None:
        """The client's end of stdout is gone: shut down and exit with 1, as pi does."""
        asyncio.get_running_loop().create_task(self.shutdown(1))

    def _finish(self, code: int) -> None:
        if self._done is not None and not self._done.done():
            self._done.set_result(code)

    # -- one line ---------------------------------------------------------------------------------

    def dispatch(self, line: str) -> None:
        """Handle one input line in its own task (commands do not wait for each other)."""
        try:
            command = parse_command(line)
        except RpcCommandError as exc:
            self.writer.write(failure("parse", None, str(exc)))
            return
        if command.type == "extension_ui_response":
            self.runtime.ui.resolve(command.fields)
            return
        task = asyncio.get_running_loop().create_task(self._handle(command))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _handle(self, command: Any) -> None:
        kind, command_id = command.type, command.id
        handler = self.handlers.table.get(kind) if kind is not None else None
        if handler is None:
            shown = kind if kind is not None else "undefined"
            self.writer.write(failure(kind, command_id, f"Unknown command: {shown}"))
            return
        try:
            data = await handler(command)
        except RpcCommandError as exc:
            self.writer.write(failure(kind, command_id, str(exc)))
            return
        except Exception as exc:  # noqa: BLE001 - any failure becomes a failure response
            self.writer.write(failure(kind, command_id, str(exc) or type(exc).__name__))
            return
        if isinstance(data, Started):
            self.writer.write(success(kind, command_id, {"disposition": "started"}))
            data.start()
            return
        self.writer.write(success(kind, command_id, data))

    # -- the process ------------------------------------------------------------------------------

    async def serve(self, stdin_fd: int) -> int:
        loop = asyncio.get_running_loop()
        self._done = loop.create_future()
        installed = self._install_signals()
        reader = loop.create_task(self._read(stdin_fd))
        try:
            code = await self._done
        finally:
            reader.cancel()
            for signo in installed:
                loop.remove_signal_handler(signo)
        return code

    async def _read(self, fd: int) -> None:
        async for line in LineReader(fd).lines():
            if self._shutting_down:
                break
            if line is OVERLONG:
                error = f"Failed to parse command: line longer than {MAX_LINE_CHARS} characters"
                self.writer.write(failure("parse", None, error))
                continue
            assert isinstance(line, str)
            self.dispatch(line)
        await self.shutdown(0)

    async def shutdown(self, code: int) -> None:
        if self._shutting_down:
            return
        self._shutting_down = True
        runtime = self.runtime
        runtime.forwarding = False  # no event after end of input, as in pi
        runtime.agent.abort()
        runtime.bash.abort_all()
        if self._tasks:  # commands in flight still get their responses
            await asyncio.wait(list(self._tasks), timeout=_GRACE_SECONDS)
        for task in list(self._tasks):
            task.cancel()
        await runtime.shutdown()
        self._finish(code)

    def _install_signals(self) -> list[int]:
        loop = asyncio.get_running_loop()
        installed: list[int] = []
        for signo in _SIGNAL_CODES:
            try:
                loop.add_signal_handler(signo, self._on_signal, signo)
            except (NotImplementedError, RuntimeError, ValueError):  # not on this platform
                continue
            installed.append(signo)
        return installed

    def _on_signal(self, signo: int) -> None:
        code = _SIGNAL_CODES[signo]
        if self._shutting_down:
            os._exit(code)  # a second signal: leave now
        asyncio.get_running_loop().create_task(self.shutdown(code))


async def run_rpc(app: AgentApi, *, stdin_fd: int, out: BinaryIO, end_process: bool = True) -> int:
    """Serve the RPC protocol until end of input or a signal; returns the exit code.

    With ``end_process`` (the CLI's case: RPC mode owns the process) the process ends as soon
    as the shutdown is done: the session is closed, the records are flushed and ``atexit``
    handlers have run. The interpreter's own teardown is skipped: unloading the provider SDKs'
    thousand-odd modules takes about a second, and pi's client sends SIGKILL one second
    after SIGTERM.
    """
    code = await RpcServer(app, out).serve(stdin_fd)
    if end_process:
        _end_process(code, out)
    return code


def _end_process(code: int, out: BinaryIO) -> None:
    for stream in (out, sys.stdout, sys.stderr, sys.__stderr__):
        with contextlib.suppress(Exception):
            if stream is not None:
                stream.flush()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr, sys.__stderr__):
        with contextlib.suppress(Exception):
            if stream is not None:
                stream.flush()
    os._exit(code)
