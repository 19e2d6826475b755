"""The ``recall`` tool over an adapter's session: what compaction replaced, back verbatim.

Each adapter offers it as its framework's own tool type around :func:`recall_function` (the
function the frameworks read the tool's parameters from); all of them run :func:`recall`,
which is pi-context's :class:`~pi_context.tools.RecallTool`: a ranked search of the entries a
compaction (or a context edit, or a branch left behind) took out of the context, returned word
for word with their entry ids and bounded like ``read``'s output.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import Any

from pi_context.errors import ToolError
from pi_context.integrations.engine import ContextEngine
from pi_context.tools import RecallTool, ToolContext

__all__ = ["RECALL_DESCRIPTION", "RECALL_NAME", "recall", "recall_function"]

RECALL_NAME = RecallTool.name
RECALL_DESCRIPTION = RecallTool.description


async def recall(
    engine: ContextEngine,
    query: str,
    limit: int | None = None,
    *,
    cache_dir: str | os.PathLike[str] | None = None,
) -> str:
    """The recall tool's answer for ``query`` over ``engine``'s session (a failure is text
    the model can act on, never an exception into the framework's tool loop)."""
    tool = RecallTool(
        lambda: engine.session,
        cache_dir=str(cache_dir) if cache_dir is not None else None,
    )
    arguments: dict[str, object] = {"query": query}
    if limit is not None:
        arguments["limit"] = limit
    cwd = Path(engine.session.cwd or os.getcwd())
    try:
        outcome = await tool.run(arguments, ToolContext(call_id="recall", cwd=cwd))
    except ToolError as exc:
        return f"recall failed: {exc}"
    return outcome.text


RecallFunction = Callable[[str, int], Coroutine[Any, Any, str]]


def recall_function(
    engine: ContextEngine | Callable[[], Awaitable[ContextEngine]],
    *,
    cache_dir: str | os.PathLike[str] | None = None,
) -> RecallFunction:
    """The tool's function, ``run(query, limit=5)``, as every framework wraps it (its
    signature is the tool's parameters). ``engine`` may be a coroutine function giving the
    engine of the conversation the call belongs to (a stored conversation, opened on use)."""

    async def run(query: str, limit: int = 5) -> str:
        found = engine if isinstance(engine, ContextEngine) else await engine()
        return await recall(found, query, limit, cache_dir=cache_dir)

    return run
