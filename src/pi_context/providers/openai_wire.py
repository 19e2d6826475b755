"""OpenAI Chat Completions over plain HTTP: one streaming POST, its chunks decoded as JSON.

The Chat Completions adapter needs two calls: ``POST /chat/completions`` with ``stream: true``
(read as server-sent events up to ``data: [DONE]``) and, to list a local server's models,
``GET /models``. The official ``openai`` SDK makes them too, at the price of importing it
(most of a second of CPU in every process that talks to an OpenAI-compatible server) and of
parsing each streamed chunk into a pydantic model the adapter dumps back into the dict the
server sent. This client sends what the SDK sends (URL, ``Authorization``, the organization and
project headers it takes from the environment, the body) and hands each chunk on as decoded.

Errors keep the SDK's meaning: an HTTP status of 400 or more raises
:class:`~pi_context.providers.http_stream.StatusError` (its ``body`` the inner ``error`` object
when there is one, as the SDK's); a chunk holding an ``error`` raises
:class:`~pi_context.providers.http_stream.StreamError`. With ``max_retries`` (0 unless asked:
the agent's retry policy decides; pi's ``retry.provider.maxRetries``), a request answered 408, 409,
429 or 5xx, or whose connection fails before an answer, is sent again after the server's
``retry-after-ms`` / ``retry-after``, else after an exponential back-off, as the SDK does; a server
asking for more than ``max_retry_delay`` is not retried
(:func:`~pi_context.providers.http_stream.send_retrying`).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Mapping
from typing import Any, Final

import httpx2

from pi_context import _json
from pi_context.errors import ProviderError
from pi_context.providers.http_stream import (
    HttpClient,
    StatusError,
    StreamError,
    body_of,
    send_retrying,
    server_sent_events,
)

__all__ = ["DEFAULT_BASE_URL", "ChatCompletionsClient"]

DEFAULT_BASE_URL: Final = "https://api.openai.com/v1"


class ChatCompletionsClient:
    """A pooled HTTP client for one OpenAI-compatible endpoint (see the module docstring)."""

    def __init__(
        self,
        *,
        api_key: str,
        base_url: str | None,
        default_headers: Mapping[str, str],
        timeout: float | None,
        max_retries: int = 0,
        max_retry_delay: float | None = 60.0,
    ) -> None:
        self.base_url = (base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip(
            "/"
        )
        headers = {"authorization": f"Bearer {api_key}", "accept": "application/json"}
        organization = os.environ.get("OPENAI_ORG_ID")
        if organization:
            headers["openai-organization"] = organization
        project = os.environ.get("OPENAI_PROJECT_ID")
        if project:
            headers["openai-project"] = project
        headers.update(default_headers)
        self._headers = headers
        self._max_retries = max_retries
        self._max_retry_delay = max_retry_delay
        self._http = HttpClient(self.base_url, timeout)

    async def close(self) -> None:
        await self._http.aclose()

    async def list_model_ids(self, *, timeout: float) -> list[str] | None:
        """The ids ``GET /models`` lists; ``None`` when the answer is not such a list."""
        try:
            response = await self._http.get().get(
                f"{self.base_url}/models", headers=self._headers, timeout=timeout
            )
            if response.status_code >= 400:
                return None
            data = _json.loads(response.content).get("data")
        except (httpx2.HTTPError, OSError, ValueError, AttributeError, ProviderError):
            return None
        if not isinstance(data, list):
            return None
        ids = [m["id"] for m in data if isinstance(m, dict) and isinstance(m.get("id"), str)]
        return ids or None

    async def _send(self, body: bytes, headers: Mapping[str, str]) -> httpx2.Response:
        """The streaming response to the POST, after any retries; raises :class:`StatusError`
        for an error answer."""
        url = f"{self.base_url}/chat/completions"
        response = await send_retrying(
            self._http,
            lambda client: client.build_request("POST", url, content=body, headers=headers),
            max_retries=self._max_retries,
            max_retry_delay=self._max_retry_delay,
        )
        status = response.status_code
        if status < 400:
            return response
        text = (await response.aread()).decode("utf-8", errors="replace")
        await response.aclose()
        parsed = body_of(text)
        inner = parsed.get("error", parsed) if isinstance(parsed, dict) else parsed
        error = StatusError(status, parsed, response.headers)
        error.body = inner
        raise error

    def headers_for(self, params: Mapping[str, Any]) -> dict[str, str | None]:
        """The headers a request with ``params`` carries (an ``extra_headers`` value of
        ``None`` removes that header)."""
        headers: dict[str, str | None] = {**self._headers, **(params.get("extra_headers") or {})}
        headers["content-type"] = "application/json"
        return headers

    async def stream(self, params: Mapping[str, Any]) -> AsyncIterator[dict[str, Any]]:
        """POST ``params`` (the SDK's keyword arguments: the body, plus ``extra_body`` merged
        into it and ``extra_headers`` sent) and yield each chunk's JSON object."""
        body = {k: v for k, v in params.items() if k not in ("extra_body", "extra_headers")}
        body.update(params.get("extra_body") or {})
        headers = {k: v for k, v in self.headers_for(params).items() if v is not None}
        response = await self._send(_json.dumps(body), headers)
        try:
            async for event, data in server_sent_events(response.aiter_lines()):
                if data.startswith("[DONE]"):
                    break
                value = _json.loads(data)
                if isinstance(value, dict) and value.get("error") and event in ("", "error"):
                    error = value["error"]
                    message = error.get("message") if isinstance(error, dict) else None
                    raise StreamError(str(message or "An error occurred during streaming"), error)
                if isinstance(value, dict) and event == "":
                    yield value
        finally:
            await response.aclose()
