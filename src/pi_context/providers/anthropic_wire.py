"""The Anthropic Messages API over plain HTTP: one streaming POST, its events decoded as JSON.

The adapter needs one call of the API: ``POST /v1/messages`` with ``stream: true``, read as
server-sent events. The official SDK does that too, but importing it builds some two thousand
pydantic models (about a second of CPU before the first request, paid by every ``pictx``
process that talks to Anthropic), and each streamed event is parsed into a model that the
adapter then dumps back into the very dict the server sent. This client sends the request the
SDK sends (the same headers, body and URL) and hands each event's JSON object on as decoded.

Errors keep the SDK's meaning: an HTTP status of 400 or more raises :class:`StatusError` with
the parsed body; an ``error`` event inside a stream raises it too, with the stream's status
(200); a connection that fails or drops raises the HTTP library's error.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from typing import Any, Final

import httpx2

from pi_context import _json

__all__ = ["API_VERSION", "MessagesClient", "StatusError"]

API_VERSION: Final = "2023-06-01"
"""The ``anthropic-version`` header the SDK sends."""

_STREAM_EVENTS: Final = frozenset(
    {
        "message_start",
        "message_delta",
        "message_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
    }
)


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


def _body_of(text: str) -> object:
    if not text:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text


class MessagesClient:
    """A pooled HTTP client for one Anthropic endpoint (see the module docstring)."""

    def __init__(
        self,
        *,
        api_key: str | None,
        auth_token: str | None,
        base_url: str,
        default_headers: Mapping[str, str],
        timeout: float,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        headers = {"anthropic-version": API_VERSION, "accept": "application/json"}
        if api_key is not None:
            headers["x-api-key"] = api_key
        if auth_token is not None:
            headers["authorization"] = f"Bearer {auth_token}"
        headers.update(default_headers)
        self._headers = headers
        self._http = httpx2.AsyncClient(timeout=httpx2.Timeout(timeout))

    async def close(self) -> None:
        await self._http.aclose()

    async def stream(self, params: Mapping[str, Any]) -> AsyncIterator[dict[str, Any]]:
        """POST ``params`` (the SDK's keyword arguments: the body, plus ``extra_body`` merged
        into it and ``extra_headers`` sent) and yield each stream event's JSON object."""
        body = {k: v for k, v in params.items() if k not in ("extra_body", "extra_headers")}
        body.update(params.get("extra_body") or {})
        headers = {**self._headers, **(params.get("extra_headers") or {})}
        headers["content-type"] = "application/json"
        request = self._http.build_request(
            "POST", f"{self.base_url}/v1/messages", content=_json.dumps(body), headers=headers
        )
        response = await self._http.send(request, stream=True)
        try:
            if response.status_code >= 400:
                text = (await response.aread()).decode("utf-8", errors="replace")
                raise StatusError(response.status_code, _body_of(text), response.headers)
            async for event, data in _server_sent_events(response.aiter_lines()):
                if event == "error":
                    raise StatusError(response.status_code, _body_of(data), response.headers)
                if event in _STREAM_EVENTS:
                    value = _json.loads(data)
                    if isinstance(value, dict):
                        yield value
        finally:
            await response.aclose()


async def _server_sent_events(lines: AsyncIterator[str]) -> AsyncIterator[tuple[str, str]]:
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
