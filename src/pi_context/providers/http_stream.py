"""What the plain-HTTP adapters share: server-sent events and the errors a server answers.

The Anthropic and OpenAI Chat Completions adapters send one streaming POST each and read its
server-sent events (:func:`server_sent_events`); an answer with an HTTP status of 400 or more
becomes a :class:`StatusError` carrying the parsed body and the headers (``retry-after``), as
the official SDKs' status errors do, and an error reported inside a stream a
:class:`StreamError`.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import ssl
import threading
from collections.abc import AsyncIterator, Callable, Mapping
from concurrent.futures import Future

import httpx2

from pi_context.errors import ProviderError

__all__ = [
    "HttpClient",
    "StatusError",
    "StreamError",
    "body_of",
    "send_retrying",
    "server_sent_events",
]

_PROXY_VARIABLES = ("http_proxy", "all_proxy")
_STORE_VARIABLES = ("SSL_CERT_FILE", "SSL_CERT_DIR")


class HttpClient:
    """The pooled client for requests to ``base_url``, made when the first request goes out.

    Making a client for ``https://`` loads the system's certificate store: OpenSSL parses a
    few hundred certificates in every process (benchmarks/README.md, "Start-up"). That
    parsing releases the
    GIL, so it starts in a background thread when this object is made (as the model is
    chosen) and overlaps the rest of the agent's start-up; the first request takes the loaded
    context. A plain ``http://`` endpoint (a local server, a simulator) never negotiates TLS and
    loads no store, unless a proxy is configured for plain HTTP (the proxy may speak TLS, and
    its certificate is then checked as usual).
    """

    __slots__ = ("_client", "_closed", "_timeout", "_tls")

    def __init__(self, base_url: str, timeout: float | None) -> None:
        plain = base_url.startswith("http://") and not any(
            os.environ.get(name) or os.environ.get(name.upper()) for name in _PROXY_VARIABLES
        )
        self._timeout = timeout
        self._client: httpx2.AsyncClient | None = None
        self._closed = False
        self._tls = None if plain else _in_background(httpx2.create_ssl_context)

    def get(self) -> httpx2.AsyncClient:
        """The client (made on the first call, then the same one); after :meth:`aclose`, a
        :class:`~pi_context.errors.ProviderError` saying so."""
        if self._closed:
            raise ProviderError("this model was closed (aclose()); make a new one", kind="other")
        client = self._client
        if client is None:
            verify: ssl.SSLContext | bool = self._tls_context() if self._tls is not None else False
            client = self._client = httpx2.AsyncClient(
                timeout=httpx2.Timeout(self._timeout), verify=verify
            )
        return client

    async def aclose(self) -> None:
        self._closed = True
        if self._client is not None:
            await self._client.aclose()

    def _tls_context(self) -> ssl.SSLContext:
        """The loaded store; one that cannot load is a configuration error, not a network
        failure: retrying cannot help, so it is never retried."""
        assert self._tls is not None
        try:
            return self._tls.result()
        except OSError as error:  # the store named by SSL_CERT_FILE / SSL_CERT_DIR, or the system's
            named = [f"{v}={os.environ[v]}" for v in _STORE_VARIABLES if os.environ.get(v)]
            where = f" ({', '.join(named)})" if named else ""
            reason = error.strerror or str(error)
            raise ProviderError(
                f"cannot load the TLS certificate store{where}: {reason}", kind="other"
            ) from error


def _in_background(call: Callable[[], ssl.SSLContext]) -> Future[ssl.SSLContext]:
    """``call()`` run in a daemon thread; the future holds its value or its exception (so an
    unreadable certificate file fails the first request, with the same error a client made on
    the spot would raise)."""
    future: Future[ssl.SSLContext] = Future()

    def run() -> None:
        try:
            future.set_result(call())
        except BaseException as error:  # noqa: BLE001 - handed to the waiting caller
            future.set_exception(error)

    threading.Thread(target=run, name="pictx-tls-store", daemon=True).start()
    return future


_RETRIED_STATUSES = frozenset({408, 409, 429})


def _retried(response: httpx2.Response) -> bool:
    """Whether the SDKs retry this error answer: the server's ``x-should-retry`` when it says,
    else 408, 409, 429 and any 5xx."""
    said = response.headers.get("x-should-retry")
    if said in ("true", "false"):
        return said == "true"
    status = response.status_code
    return status in _RETRIED_STATUSES or status >= 500


def _server_wait(headers: Mapping[str, str]) -> float | None:
    """The seconds the server asks to wait (``retry-after-ms``, else ``retry-after``), if any."""
    for key, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        try:
            return float(headers.get(key, "")) * scale
        except ValueError:
            continue
    return None


async def send_retrying(
    http: HttpClient,
    build: Callable[[httpx2.AsyncClient], httpx2.Request],
    *,
    max_retries: int,
    max_retry_delay: float | None,
) -> httpx2.Response:
    """The streaming response to ``build``'s request, sent again up to ``max_retries`` times
    when its connection fails or the answer is one the SDKs retry (:func:`_retried`).

    The wait before a retry is the server's (``retry-after-ms`` / ``retry-after``), else 0.5 s
    doubling up to 8 s, less up to a quarter at random. A server asking for more than
    ``max_retry_delay`` seconds (``None``: no limit) is not retried. An error answer not retried
    is returned unread, for the caller to report.
    """
    attempt = 0
    while True:
        client = http.get()
        try:
            response = await client.send(build(client), stream=True)
        except (httpx2.TransportError, OSError):
            if attempt >= max_retries:
                raise
            attempt += 1
            await asyncio.sleep(_backoff(attempt))
            continue
        if response.status_code < 400 or attempt >= max_retries or not _retried(response):
            return response
        wait = _server_wait(response.headers)
        if wait is not None and max_retry_delay is not None and wait > max_retry_delay:
            return response
        await response.aread()
        await response.aclose()
        attempt += 1
        await asyncio.sleep(wait if wait is not None and wait >= 0 else _backoff(attempt))


def _backoff(attempt: int) -> float:
    """Seconds before retry number ``attempt`` (1-based) when the server names none."""
    delay: float = min(0.5 * 2.0 ** (attempt - 1), 8.0)
    return delay * (1 - 0.25 * random.random())


class StatusError(Exception):
    """The server answered with an error: an HTTP status of 400 or more, or an ``error``
    event inside a stream (then :attr:`status_code` is the stream's own, 200)."""

    def __init__(self, status_code: int, body: object, headers: Mapping[str, str]) -> None:
        self.status_code = status_code
        self.body = body
        """The error body: its JSON value when it is JSON, else its text (``None``: empty)."""
        self.headers = dict(headers)
        message = f"Error code: {status_code}"
        if body:
            message += f" - {body}"
        self.message = message
        super().__init__(message)


def body_of(text: str) -> object:
    """An error body: its JSON value when it is JSON, else the text (``None``: empty)."""
    if not text:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text


class StreamError(Exception):
    """An error the server reported inside a stream that had begun (its ``message``)."""

    def __init__(self, message: str, body: object) -> None:
        self.message = message
        self.body = body
        super().__init__(message)


async def server_sent_events(lines: AsyncIterator[str]) -> AsyncIterator[tuple[str, str]]:
    """``(event, data)`` of each server-sent event (the ``data`` lines joined with newlines);
    comments and fields other than ``event`` and ``data`` are skipped."""
    event = ""
    data: list[str] = []
    async for line in lines:
        if not line:
            if data or event:
                yield event, "\n".join(data)
            event, data = "", []
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "event":
            event = value
        elif name == "data":
            data.append(value)
    if data or event:
        yield event, "\n".join(data)
