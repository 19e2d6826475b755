"""The Anthropic Messages API over plain HTTP: one streaming POST, its events decoded as JSON.

The adapter needs one call of the API: ``POST /v1/messages`` with ``stream: true``, read as
server-sent events. The official SDK does that too, but importing it builds some two thousand
pydantic models (about a second of CPU before the first request, paid by every ``pictx``
process that talks to Anthropic), and each streamed event is parsed into a model that the
adapter then dumps back into the very dict the server sent. This client sends the request the
SDK sends (the same headers, body and URL) and hands each event's JSON object on as decoded.

Errors keep the SDK's meaning: an HTTP status of 400 or more raises
:class:`~pi_context.providers.http_stream.StatusError` with the parsed body; an ``error`` event
inside a stream raises it too, with the stream's status (200), as the SDK does; a connection
that fails or drops raises the HTTP library's error. With ``max_retries`` (pi's
``retry.provider.maxRetries``, 0 by default: the agent's retry policy decides) the request is
retried as the OpenAI client retries it
(:func:`~pi_context.providers.http_stream.send_retrying`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Any, Final

from pi_context import _json
from pi_context.providers.http_stream import (
    HttpClient,
    StatusError,
    body_of,
    send_retrying,
    server_sent_events,
)

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


class MessagesClient:
    """A pooled HTTP client for one Anthropic endpoint (see the module docstring)."""

    def __init__(
        self,
        *,
        api_key: str | None,
        auth_token: str | None,
        base_url: str,
        default_headers: Mapping[str, str],
        timeout: float | None,
        max_retries: int = 0,
        max_retry_delay: float | None = 60.0,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        headers = {"anthropic-version": API_VERSION, "accept": "application/json"}
        if api_key is not None:
            headers["x-api-key"] = api_key
        if auth_token is not None:
            headers["authorization"] = f"Bearer {auth_token}"
        headers.update(default_headers)
        self._headers = headers
        self._max_retries = max_retries
        self._max_retry_delay = max_retry_delay
        self._http = HttpClient(self.base_url, timeout)

    async def close(self) -> None:
        await self._http.aclose()

    def headers_for(self, params: Mapping[str, Any]) -> dict[str, str | None]:
        """The headers a request with ``params`` carries (an ``extra_headers`` value of
        ``None`` removes that header)."""
        headers: dict[str, str | None] = {**self._headers, **(params.get("extra_headers") or {})}
        headers["content-type"] = "application/json"
        return headers

    async def stream(self, params: Mapping[str, Any]) -> AsyncIterator[dict[str, Any]]:
        """POST ``params`` (the SDK's keyword arguments: the body, plus ``extra_body`` merged
        into it and ``extra_headers`` sent) and yield each stream event's JSON object."""
        body = {k: v for k, v in params.items() if k not in ("extra_body", "extra_headers")}
        body.update(params.get("extra_body") or {})
        headers = {k: v for k, v in self.headers_for(params).items() if v is not None}
        url, content = f"{self.base_url}/v1/messages", _json.dumps(body)
        response = await send_retrying(
            self._http,
            lambda client: client.build_request("POST", url, content=content, headers=headers),
            max_retries=self._max_retries,
            max_retry_delay=self._max_retry_delay,
        )
        try:
            if response.status_code >= 400:
                text = (await response.aread()).decode("utf-8", errors="replace")
                raise StatusError(response.status_code, body_of(text), response.headers)
            async for event, data in server_sent_events(response.aiter_lines()):
                if event == "error":
                    raise StatusError(response.status_code, body_of(data), response.headers)
                if event in _STREAM_EVENTS:
                    value = _json.loads(data)
                    if isinstance(value, dict):
                        yield value
        finally:
            await response.aclose()
