"""Fixtures for provider tests: the replay server and a guard against leaving the machine."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from tests.providers.adapters import OPEN
from tests.providers.replay_server import ReplayServer


def _is_local(address: Any) -> bool:
    if isinstance(address, str | bytes):  # AF_UNIX path
        return True
    host = address[0]
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@pytest.fixture(autouse=True)
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail any connection to an address other than the loopback interface."""
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex

    def guarded_connect(self: socket.socket, address: Any) -> None:
        if not _is_local(address):
            raise AssertionError(f"test tried to connect outside 127.0.0.1: {address!r}")
        real_connect(self, address)

    def guarded_connect_ex(self: socket.socket, address: Any) -> int:
        if not _is_local(address):
            raise AssertionError(f"test tried to connect outside 127.0.0.1: {address!r}")
        return real_connect_ex(self, address)

    monkeypatch.setattr(socket.socket, "connect", guarded_connect)
    monkeypatch.setattr(socket.socket, "connect_ex", guarded_connect_ex)
    for var in (
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "ANTHROPIC_OAUTH_TOKEN",
        "ANTHROPIC_BASE_URL",
        "PI_CODING_AGENT_DIR",
    ):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def server() -> Iterator[ReplayServer]:
    with ReplayServer() as srv:
        yield srv


@pytest.fixture(autouse=True)
async def _close_adapters() -> AsyncIterator[None]:
    """Close every adapter a test registered with :func:`tests.providers.adapters.track`."""
    yield
    while OPEN:
        await OPEN.pop().aclose()
