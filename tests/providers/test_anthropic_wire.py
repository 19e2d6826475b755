"""The plain-HTTP Messages client sends what the SDK sent and reads events as servers write them."""

from __future__ import annotations

from typing import Any

import pytest

from pi_context.providers.anthropic_wire import API_VERSION, MessagesClient
from pi_context.providers.http_stream import StatusError
from tests.providers.replay_server import ReplayServer, anthropic_sse, json_reply, stream


def _client(server: ReplayServer, **kw: Any) -> MessagesClient:
    options: dict[str, Any] = {
        "api_key": "sk-ant-test",
        "auth_token": None,
        "base_url": server.url + "/",
        "default_headers": {"x-extra": "1"},
        "timeout": 30.0,
    }
    options.update(kw)
    return MessagesClient(**options)


async def test_request_headers_body_and_events(server: ReplayServer) -> None:
    events: list[dict[str, Any]] = [{"type": "message_start", "message": {"id": "m"}}]
    events.append({"type": "ping"})
    events.append({"type": "message_stop"})
    server.add(stream(anthropic_sse(events)))
    client = _client(server)
    try:
        params = {
            "model": "m",
            "stream": True,
            "extra_body": {"thinking": {"type": "adaptive"}},
            "extra_headers": {"anthropic-beta": "b1"},
        }
        got = [event async for event in client.stream(params)]
    finally:
        await client.close()
    assert [e["type"] for e in got] == ["message_start", "message_stop"]  # ping skipped
    sent = server.requests[0]
    assert sent.path == "/v1/messages"
    assert sent.json() == {"model": "m", "stream": True, "thinking": {"type": "adaptive"}}
    headers = sent.headers
    assert headers["x-api-key"] == "sk-ant-test"
    assert headers["anthropic-version"] == API_VERSION
    assert (headers["anthropic-beta"], headers["x-extra"]) == ("b1", "1")
    assert headers["content-type"] == "application/json"
    assert "authorization" not in headers


async def test_an_error_status_and_an_error_event_raise_with_the_body(
    server: ReplayServer,
) -> None:
    body = {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}
    server.add(
        json_reply(429, body, {"retry-after": "3"}),
        stream(anthropic_sse([{"type": "message_start", "message": {}}, body])),
    )
    client = _client(server)
    try:
        with pytest.raises(StatusError) as first:
            _ = [event async for event in client.stream({"model": "m"})]
        assert (first.value.status_code, first.value.body) == (429, body)
        assert first.value.headers["retry-after"] == "3"
        with pytest.raises(StatusError) as second:
            _ = [event async for event in client.stream({"model": "m"})]
        assert (second.value.status_code, second.value.body) == (200, body)
    finally:
        await client.close()
