"""Server-sent events as servers write them, and clients that load TLS only when needed."""

from __future__ import annotations

import ssl
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from pi_context.errors import ProviderError
from pi_context.providers.http_stream import HttpClient, server_sent_events


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
    HttpClient("http://127.0.0.1:9", 5.0).get()  # no TLS: nothing loaded
    with pytest.raises(AssertionError, match="certificate store"):
        HttpClient("https://api.example.com", 5.0).get()
    monkeypatch.setenv("HTTP_PROXY", "https://proxy.example:3128")
    with pytest.raises(AssertionError, match="certificate store"):
        HttpClient("http://127.0.0.1:9", 5.0).get()  # the proxy may speak TLS


def test_the_certificate_store_loads_in_the_background_before_the_first_request(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The store is loaded by another thread, started when the client object is made; the
    first request gets that context (not one loaded on the spot)."""
    loaded: list[tuple[str, ssl.SSLContext]] = []
    original = httpx2.create_ssl_context

    def record(*args: Any, **kwargs: Any) -> ssl.SSLContext:
        context = original(*args, **kwargs)
        loaded.append((threading.current_thread().name, context))
        return context

    monkeypatch.setattr(httpx2, "create_ssl_context", record)
    client = HttpClient("https://api.example.com", 5.0)
    made = client.get()
    assert client.get() is made  # one client, made once
    assert [name for name, _ in loaded] == ["pictx-tls-store"]
    transport = made._transport  # the context the pool was given
    assert transport._pool._ssl_context is loaded[0][1]  # type: ignore[attr-defined]


def test_a_certificate_store_that_cannot_load_fails_the_first_request(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "missing.pem"))
    client = HttpClient("https://api.example.com", 5.0)  # no error yet: loading in the background
    with pytest.raises(
        ProviderError, match=r"certificate store \(SSL_CERT_FILE=\S*missing\.pem"
    ) as got:
        client.get()
    assert got.value.kind == "other"  # a configuration error: never retried
