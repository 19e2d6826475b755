"""Fixtures for provider tests: the replay server, and adapters closed after each test (the
suite's network guard is in ``tests/conftest.py``)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.providers.adapters import OPEN


@pytest.fixture(autouse=True)
async def _close_adapters() -> AsyncIterator[None]:
    """Close every adapter a test registered with :func:`tests.providers.adapters.track`."""
    yield
    while OPEN:
        await OPEN.pop().aclose()
