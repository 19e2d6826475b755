"""Rules for the whole suite: no connection leaves the machine, and no credential, endpoint or
agent directory of the person running the tests reaches a test (tests that need one set it).
Under pytest-xdist (``scripts/check`` runs ``-n auto --dist loadgroup``), the tests that drive a
real terminal run one after another on one worker, and so do those that fork or kill processes.
"""

from __future__ import annotations

import ipaddress
import os
import re
import socket
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from tests.providers.replay_server import ReplayServer

# the PostgreSQL server of the store's tests (pg_server, pg_url), started on first use
pytest_plugins = ["tests.store.pg_fixtures"]

SCRUBBED = re.compile(
    r"(?:[A-Z0-9_]+_(?:API_KEY|TOKEN|BASE_URL)|(?:ANTHROPIC|OPENAI|GEMINI|GOOGLE)_[A-Z0-9_]+"
    r"|PI_CODING_AGENT_(?:DIR|SESSION_DIR)|PICTX_[A-Z0-9_]+)"
)
"""Provider keys, tokens and endpoints, pi's agent and session directories, pictx's switches."""


_FORKING = frozenset({"test_column_build.py", "test_column_index.py", "test_crash.py"})
"""Modules (of tests/session) whose tests fork helpers or kill writer processes."""


@cache
def _group_of(path: Path) -> str | None:
    """The xdist group of a test module: ``terminal``, ``fork`` or none (any worker)."""
    if path.name in _FORKING and path.parent.name == "session":
        return "fork"
    source = path.read_text(encoding="utf-8")
    # pexpect directly or through the pseudo-terminal helper module, or tmux
    if any(mark in source for mark in ("pexpect", "pty_terminal", "tmux_screen", '"tmux"')):
        return "terminal"
    return None


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Put the tests of a terminal or forking module in one xdist group (one worker, in turn).

    A terminal test waits for a screen under a deadline, and a forking test counts processes:
    two of them side by side on a two-core machine only make each other slow or wrong.
    """
    for item in items:
        group = _group_of(item.path)
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))


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


@pytest.fixture(autouse=True)
def scrubbed_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Remove the :data:`SCRUBBED` variables (subprocesses inherit the scrubbed environment)."""
    for name in [n for n in os.environ if SCRUBBED.fullmatch(n)]:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def server() -> Iterator[ReplayServer]:
    """A provider API on 127.0.0.1 that replays scripted responses and records the bodies."""
    with ReplayServer() as srv:
        yield srv
