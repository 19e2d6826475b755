"""What the plain-HTTP adapters share: server-sent events and the errors a server answers.

The Anthropic and OpenAI Chat Completions adapters send one streaming POST each and read its
server-sent events (:func:`server_sent_events`); an answer with an HTTP status of 400 or more
becomes a :class:`StatusError` carrying the parsed body and the headers (``retry-after``), as
the official SDKs' status errors do, and an error reported inside a stream a
:class:`StreamError`.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Mapping

import httpx2

__all__ = ["StatusError", "StreamError", "body_of", "http_client", "server_sent_events"]

_PROXY_VARIABLES = ("http_proxy", "all_proxy")


def http_client(base_url: str, timeout: float) -> httpx2.AsyncClient:
    """The pooled client for requests to ``base_url``.

    A client loads the system's certificate store when it is made (tens of milliseconds of
    CPU in every process). A plain ``http://`` endpoint (a local server, a simulator) never
    negotiates TLS, so its client is made without one, unless a proxy is configured for plain
    HTTP (the proxy may speak TLS, and its certificate is then checked as usual).
    """
    plain = base_url.startswith("http://") and not any(
        os.environ.get(name) or os.environ.get(name.upper()) for name in _PROXY_VARIABLES
    )
    return httpx2.AsyncClient(timeout=httpx2.Timeout(timeout), verify=not plain)


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
