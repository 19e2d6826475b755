"""Running the async engine from a framework's synchronous hook."""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["run_sync"]

T = TypeVar("T")


def run_sync(coroutine: Coroutine[Any, Any, T]) -> T:
    """``coroutine``'s result, from synchronous code.

    A synchronous hook usually runs with no event loop (``asyncio.run`` then does); inside a
    running loop (a sync hook called from async code) it runs on a worker thread's own loop, so
    the caller's loop is never re-entered.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()
