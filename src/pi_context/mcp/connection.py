"""One MCP server's connection, over the official ``mcp`` SDK (stdio or streamable HTTP).

The SDK's transports and its ``ClientSession`` are anyio context managers that must be
entered and left by one task, so each connection lives in its own task: it connects,
initializes, lists the tools, reports ready, then waits until it is closed. Calls come from
any task of the same loop. A stdio server runs in its own process group; closing ends its
stdin, then the SDK escalates to SIGTERM and SIGKILL of the group, so no server process
outlives the session.

States: ``connecting`` → ``connected`` | ``failed``; later ``disconnected`` (the transport
dropped: the next call reconnects) or ``closed``. Every request has the server's timeout,
re-armed by each progress notification for it, so a long job that reports progress is not
cut off while a silent one is.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Awaitable, Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Final, TypeVar

from pi_context._version import __version__
from pi_context.errors import PiContextError

from .config import ServerConfig
from .sdk import import_client, load_client_parts
from .values import ValueResolutionError, resolve_values

if TYPE_CHECKING:
    import subprocess

__all__ = ["McpConnection", "McpRequestError", "ProgressCallback"]

T = TypeVar("T")
ProgressCallback = Callable[[float, float | None, str | None], None]

STDERR_TAIL_BYTES: Final = 64 * 1024
ERROR_STDERR_CHARS: Final = 2000
LOG_ROTATE_BYTES: Final = 5 * 1024 * 1024
HTTP_RETRY_DELAYS: Final = (0.25, 1.0)
_CLOSED_TEXT: Final = "MCP connection closed"


class McpRequestError(PiContextError):
    """A request to a server failed (timeout, closed connection, error reply)."""


def _leaf(exc: BaseException) -> BaseException:
    """The first real error inside anyio's exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _message(exc: BaseException, command: str | None) -> str:
    exc = _leaf(exc)
    load_client_parts()
    from mcp.shared.exceptions import MCPError  # the SDK is imported when a server connects

    if isinstance(exc, MCPError):
        if exc.error.code == -32000 and "closed" in exc.error.message.lower():
            return _CLOSED_TEXT
        return exc.error.message
    if isinstance(exc, FileNotFoundError) and command is not None:
        return f"spawn {command} ENOENT"
    if isinstance(exc, PermissionError) and command is not None:
        return f"spawn {command} EACCES"
    if isinstance(exc, (EOFError, BrokenPipeError, ConnectionResetError)):
        return _CLOSED_TEXT
    text = str(exc)
    if "closed" in text.lower() and ("connection" in text.lower() or not text.strip()):
        return _CLOSED_TEXT
    return text or type(exc).__name__


def _is_closed_error(exc: BaseException) -> bool:
    return _message(exc, None) == _CLOSED_TEXT


def append_log(agent_dir: Path, server: str, level: str, logger: str | None, data: Any) -> None:
    """One ``notifications/message`` line in ``<agentDir>/mcp.log`` (rotated over 5 MiB)."""
    import json

    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    text = text.replace("\n", "\n    ")
    stamp = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    where = f" {logger}:" if logger else ""
    line = f"{stamp} [{server}] {level}{where} {text}\n"
    path = agent_dir / "mcp.log"
    try:
        if path.exists() and path.stat().st_size > LOG_ROTATE_BYTES:
            os.replace(path, agent_dir / "mcp.log.1")
        agent_dir.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as handle:
            handle.write(line)
    except OSError:
        pass  # logging never fails a connection


class McpConnection:
    """A live (or failed) connection to one configured server."""

    def __init__(
        self,
        config: ServerConfig,
        *,
        cwd: str,
        agent_dir: Path,
        on_tools_changed: Callable[[McpConnection], None] | None = None,
    ) -> None:
        self.config = config
        self.name = config.name
        self._cwd = cwd
        self._agent_dir = agent_dir
        self._on_tools_changed = on_tools_changed
        self.state = "connecting"
        self.error: str | None = None
        self.tools: list[dict[str, Any]] = []
        self.has_resources = False
        self.instructions: str | None = None
        self._session: Any = None
        self._task: asyncio.Task[None] | None = None
        self._ready: asyncio.Future[None] | None = None
        self._stop: asyncio.Event | None = None
        self._stderr: IO[bytes] | None = None
        self._spawned: subprocess.Popen[bytes] | OSError | None = None
        self.leave_at_close = False
        """Set when the program ends with the session: closing a stdio server then does not
        wait for it to exit (:func:`.stdio.leave_process`)."""
        self.timings: dict[str, float] = {}
        """Seconds of the last connection's phases (client imports, transport, initialize,
        tools/list), for the benchmark."""
        self._lock = asyncio.Lock()

    # -- lifecycle -------------------------------------------------------------------------------

    def spawn_early(self) -> None:
        """Start a stdio server now, before the SDK is imported, so that the server's own
        start-up runs while the client side loads; :meth:`connect` then talks to it. Values
        read from a shell command (``!…``) are left to :meth:`connect`, which never blocks the
        caller on them; so are failures, which :meth:`connect` reports."""
        raw = self.config.raw
        if self.config.transport != "stdio" or self._spawned is not None:
            return
        env = raw.get("env") or {}
        if any(str(v).startswith("!") for v in env.values()):
            return
        with contextlib.suppress(ValueResolutionError):
            self._spawned = self._spawn(env)

    def _spawn(self, env: Mapping[str, Any]) -> subprocess.Popen[bytes] | OSError:
        """The server process (or why it could not start); raises when a value of ``env``
        cannot be resolved."""
        from . import early
        from .stdio import anonymous_file, spawn

        raw = self.config.raw
        resolved = resolve_values(env, f'MCP server "{self.config.name}" env')
        command = str(raw["command"])
        args = [str(a) for a in raw.get("args") or []]
        cwd = str(Path(self._cwd) / str(raw.get("cwd") or "."))
        started = early.claim(early.key(command, args, cwd, resolved))
        if started is not None:  # the command line started it before pictx loaded
            process, self._stderr = started
            return process
        self._stderr = anonymous_file()  # closed in _with_stderr/close
        try:
            return spawn(
                command, args, env={**os.environ, **resolved}, cwd=cwd, stderr=self._stderr
            )
        except OSError as exc:
            return exc

    async def connect(self) -> None:
        """Connect (again); never raises: a failure is in ``state`` and ``error``."""
        async with self._lock:
            await self._shutdown()
            attempts = len(HTTP_RETRY_DELAYS) + 1 if self.config.transport == "http" else 1
            for attempt in range(attempts):
                self.state, self.error = "connecting", None
                loop = asyncio.get_running_loop()
                self._ready = loop.create_future()
                self._stop = asyncio.Event()
                self._task = loop.create_task(self._run(self._ready, self._stop))
                try:
                    await asyncio.shield(self._ready)
                    self.state = "connected"
                    return
                except asyncio.CancelledError:
                    await self._shutdown()
                    raise
                except BaseException as exc:  # noqa: BLE001 - every failure becomes the state
                    self.error = self._with_stderr(
                        exc.args[0] if isinstance(exc, McpRequestError) else _message(exc, None)
                    )
                    await self._shutdown()
                    self.state = "failed"
                    if attempt + 1 < attempts and _transient(exc):
                        await asyncio.sleep(HTTP_RETRY_DELAYS[attempt])
                        continue
                    return

    async def close(self) -> None:
        async with self._lock:
            await self._shutdown()
            spawned, self._spawned = self._spawned, None
            if spawned is not None and not isinstance(spawned, OSError):
                from .stdio import leave_process, stop_process  # spawned, never connected

                if self.leave_at_close:
                    leave_process(spawned)
                else:
                    await stop_process(spawned)
            self.state = "closed"

    async def _shutdown(self) -> None:
        task, self._task = self._task, None
        if self._stop is not None:
            self._stop.set()
        if task is not None and not task.done():
            try:
                await asyncio.wait_for(asyncio.shield(task), 5.0)
            except (TimeoutError, asyncio.CancelledError):
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task
        elif task is not None:
            with contextlib.suppress(BaseException):
                task.result()
        self._session = None

    async def _run(self, ready: asyncio.Future[None], stop: asyncio.Event) -> None:
        clock = time.perf_counter
        started = clock()
        import_client(self.config.transport)
        from mcp.client.session import ClientSession
        from mcp.shared.exceptions import MCPError
        from mcp_types import Implementation

        config = self.config
        timeout = config.timeout
        timings = self.timings = {"client imports": clock() - started}
        try:
            async with contextlib.AsyncExitStack() as stack:
                mark = clock()
                read, write = await self._open_transport(stack)
                timings["transport"] = clock() - mark
                session = ClientSession(
                    read,
                    write,
                    list_roots_callback=self._roots,  # type: ignore[arg-type]
                    logging_callback=self._log,
                    message_handler=self._incoming,
                    client_info=Implementation(name="pictx", version=__version__),
                )
                await stack.enter_async_context(session)
                mark = clock()
                try:
                    init = await asyncio.wait_for(session.initialize(), timeout)
                except TimeoutError:
                    raise McpRequestError(
                        f"MCP request timed out after {round(timeout * 1000)}ms"
                    ) from None
                timings["initialize"] = clock() - mark
                self.instructions = (init.instructions or "").strip() or None
                self.has_resources = init.capabilities.resources is not None
                self._session = session
                mark = clock()
                if init.capabilities.tools is not None:
                    self.tools = await self._list_tools(session)
                else:
                    self.tools = []
                timings["tools/list"] = clock() - mark
                if not ready.done():
                    ready.set_result(None)
                await stop.wait()
        except BaseException as exc:
            leaf = _leaf(exc)
            if not ready.done():
                if isinstance(leaf, MCPError | McpRequestError | Exception):
                    ready.set_exception(leaf if isinstance(leaf, Exception) else exc)
                else:
                    ready.set_exception(McpRequestError(_CLOSED_TEXT))
            elif not isinstance(exc, asyncio.CancelledError) and self.state == "connected":
                self.state, self.error = "disconnected", self._with_stderr("Connection closed")
            if isinstance(exc, asyncio.CancelledError):
                raise
        finally:
            self._session = None

    async def _open_transport(self, stack: contextlib.AsyncExitStack) -> tuple[Any, Any]:
        config = self.config
        raw = config.raw
        what = f'MCP server "{config.name}"'
        if config.transport == "http":
            from mcp.client.streamable_http import streamable_http_client
            from mcp.shared._httpx_utils import create_mcp_http_client

            headers = resolve_values(raw.get("headers") or {}, f"{what} header")
            client = create_mcp_http_client(headers=headers)
            await stack.enter_async_context(client)
            streams = await stack.enter_async_context(
                streamable_http_client(str(raw["url"]), http_client=client)
            )
            return streams[0], streams[1]
        from .stdio import stdio_streams

        process, self._spawned = self._spawned, None
        if process is None:
            process = self._spawn(raw.get("env") or {})
        stack.callback(self._stderr_done)
        if isinstance(process, OSError):
            raise McpRequestError(_message(process, str(raw["command"])))
        streams = await stack.enter_async_context(
            stdio_streams(process, lambda: self.leave_at_close)
        )
        return streams[0], streams[1]

    def _stderr_done(self) -> None:
        """Keep the stderr tail for error messages after the process is gone."""
        handle = self._stderr
        if handle is None:
            return
        with contextlib.suppress(OSError):
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - STDERR_TAIL_BYTES))
            self._stderr_tail = handle.read().decode("utf-8", "replace")
            handle.close()
        self._stderr = None

    _stderr_tail = ""

    def _with_stderr(self, message: str) -> str:
        if self._stderr is not None:
            self._stderr_done()
        tail = self._stderr_tail.strip()
        self._stderr_tail = ""
        return f"{message}\n{tail[-ERROR_STDERR_CHARS:]}" if tail else message

    # -- server → client -------------------------------------------------------------------------

    async def _roots(self, _context: Any) -> Any:
        from mcp_types import ListRootsResult, Root

        path = Path(self._cwd)
        return ListRootsResult(roots=[Root(uri=path.as_uri(), name=path.name)])  # type: ignore[arg-type]

    async def _log(self, params: Any) -> None:
        append_log(self._agent_dir, self.name, str(params.level), params.logger, params.data)

    async def _incoming(self, message: Any) -> None:
        from mcp_types import ToolListChangedNotification

        if isinstance(message, ToolListChangedNotification):
            asyncio.get_running_loop().create_task(self.refresh_tools())

    async def refresh_tools(self) -> None:
        session = self._session
        if session is None:
            return
        try:
            self.tools = await self._list_tools(session)
        except Exception as exc:  # noqa: BLE001 - recorded on the server
            self.error = f"Failed to refresh tools: {_message(exc, None)}"
            return
        if self._on_tools_changed is not None:
            self._on_tools_changed(self)

    async def _list_tools(self, session: Any) -> list[dict[str, Any]]:
        from mcp_types import PaginatedRequestParams

        tools: list[dict[str, Any]] = []
        cursor: str | None = None
        seen: set[str] = set()
        for _ in range(1000):
            params = PaginatedRequestParams(cursor=cursor) if cursor else None

            async def page_of(p: Any = params) -> Any:
                return await session.list_tools(params=p)

            page = await self._timed(page_of)
            tools.extend(t.model_dump(by_alias=True, exclude_none=True) for t in page.tools)
            cursor = page.next_cursor or None
            if cursor is None:
                return tools
            if cursor in seen:
                raise McpRequestError("MCP server repeated a pagination cursor")
            seen.add(cursor)
        raise McpRequestError("MCP server returned more than 1000 pages")

    # -- client → server -------------------------------------------------------------------------

    async def _timed(
        self,
        start: Callable[[], Awaitable[T]],
        progress: list[asyncio.Event] | None = None,
    ) -> T:
        """Run a request with the server's timeout, re-armed whenever ``progress[0]`` is set
        (the deadline is always the last progress plus the timeout)."""
        timeout = self.config.timeout
        task = asyncio.ensure_future(start())
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        try:
            while True:
                wait = [task] + ([loop.create_task(progress[0].wait())] if progress else [])
                done, _ = await asyncio.wait(
                    wait,
                    timeout=max(0.0, deadline - loop.time()),
                    return_when=asyncio.FIRST_COMPLETED,
                )
                for extra in wait[1:]:
                    extra.cancel()
                if task in done:
                    return task.result()
                if progress and progress[0].is_set():
                    progress[0].clear()
                    deadline = loop.time() + timeout
                    continue
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task
                raise McpRequestError(f"MCP request timed out after {round(timeout * 1000)}ms")
        finally:
            if not task.done():
                task.cancel()

    async def _live_session(self) -> Any:
        """The session, reconnecting first when the server dropped or never came up."""
        if self._session is None and self.state in ("disconnected", "failed", "closed"):
            await self.connect()
            if self.state != "connected":
                raise McpRequestError(
                    f'MCP server "{self.name}" failed to connect: {self.error or "unknown error"}'
                )
        if self._session is None:
            raise McpRequestError(_CLOSED_TEXT)
        return self._session

    async def request(
        self,
        call: Callable[[Any, Any], Awaitable[T]],
        on_progress: ProgressCallback | None = None,
    ) -> T:
        """``call(session, progress_callback)`` with timeout, progress and drop detection."""
        session = await self._live_session()
        marker = [asyncio.Event()]

        async def progressed(value: float, total: float | None, message: str | None) -> None:
            marker[0].set()
            if on_progress is not None:
                on_progress(value, total, message)

        try:
            return await self._timed(lambda: call(session, progressed), marker)
        except McpRequestError:
            raise
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - the SDK's errors become McpRequestError
            if _is_closed_error(exc):
                self.state, self.error = "disconnected", self._with_stderr("Connection closed")
                self._session = None
                if self._stop is not None:
                    self._stop.set()
                raise McpRequestError(_CLOSED_TEXT) from None
            raise McpRequestError(_message(exc, None)) from None

    async def call_tool(
        self,
        tool: str,
        arguments: Mapping[str, Any],
        on_progress: ProgressCallback | None = None,
    ) -> dict[str, Any]:
        """``tools/call``; the ``CallToolResult`` as JSON (without ``_meta``)."""

        async def call(session: Any, progress: Any) -> Any:
            return await session.call_tool(tool, dict(arguments), progress_callback=progress)

        result = await self.request(call, on_progress)
        data: dict[str, Any] = result.model_dump(by_alias=True, exclude_none=True)
        data.pop("_meta", None)
        return data

    async def list_page(self, kind: str, cursor: str | None) -> dict[str, Any]:
        """One page of ``resources/list`` or ``resources/templates/list`` as JSON."""
        from mcp_types import PaginatedRequestParams

        params = PaginatedRequestParams(cursor=cursor) if cursor else None

        async def call(session: Any, _progress: Any) -> Any:
            if kind == "resources":
                return await session.list_resources(params=params)
            return await session.list_resource_templates(params=params)

        result = await self.request(call)
        out: dict[str, Any] = result.model_dump(by_alias=True, exclude_none=True)
        return out

    async def read_resource(self, uri: str) -> dict[str, Any]:
        async def call(session: Any, _progress: Any) -> Any:
            return await session.read_resource(uri)

        result = await self.request(call)
        out: dict[str, Any] = result.model_dump(by_alias=True, exclude_none=True)
        return out


def _transient(exc: BaseException) -> bool:
    """An HTTP connect failure worth retrying (network error, 408, 429, 5xx but 501)."""
    leaf = _leaf(exc)
    status = getattr(getattr(leaf, "response", None), "status_code", None)
    if isinstance(status, int):
        return status in (408, 429) or (status >= 500 and status != 501)
    name = type(leaf).__name__
    return name in ("ConnectError", "ReadError", "RemoteProtocolError", "ConnectTimeout")


def resolution_error(exc: BaseException) -> str | None:
    return str(exc) if isinstance(exc, ValueResolutionError) else None
