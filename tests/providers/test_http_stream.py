"""Server-sent events as servers write them, and clients that load TLS only when needed."""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator

import pytest

from pi_context.providers.http_stream import http_client, server_sent_events


async def _lines(*lines: str) -> AsyncIterator[str]:
    for line in lines:
        yield line


async def test_events_with_several_data_lines_comments_and_no_final_blank() -> None:
    got = [
        event
        async for event in server_sent_events(
            _lines(": keep-alive", "event: a", "data: 1", "data:2", "", "event: b", "data: {}")
        )
    ]
    assert got == [("a", "1\n2"), ("b", "{}")]


def test_a_plain_http_endpoint_loads_no_certificate_store(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_: object, **__: object) -> None:
        raise AssertionError("certificate store loaded")

    for name in ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(ssl.SSLContext, "load_verify_locations", refuse)
    http_client("http://127.0.0.1:9", 5.0)  # no TLS: nothing loaded
    with pytest.raises(AssertionError, match="certificate store"):
        http_client("https://api.example.com", 5.0)
    monkeypatch.setenv("HTTP_PROXY", "https://proxy.example:3128")
    with pytest.raises(AssertionError, match="certificate store"):
        http_client("http://127.0.0.1:9", 5.0)  # the proxy may speak TLS
