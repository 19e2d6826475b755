"""Session totals: tokens, cost, cache reads and writes, hit ratio, current context size."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from msgspec import Struct

from pi_context.compaction.accounting import TokenCache, estimate_projected_context_tokens
from pi_context.model import Model
from pi_context.session import Session

from .branch_positions import BranchPositions
from .stats import hit_ratio

__all__ = ["SessionStats", "context_tokens", "session_stats"]


class SessionStats(Struct, frozen=True):
    """Totals over every entry of the session file (pi's ``/session`` numbers) plus the context.

    ``tokens`` and ``cost`` sum assistant, summary and usage entries; ``hit_ratio`` is cache
    reads over all prompt tokens of assistant responses; ``context_tokens`` is ``None`` right
    after a compaction until the next response reports usage.
    """

    tokens: int
    cost: float
    cache_read: int
    cache_write: int
    hit_ratio: float
    context_tokens: int | None
    context_window: int | None
    input: int = 0
    output: int = 0
    requests: int = 0


def _usage_numbers(usage: Any) -> tuple[int, int, int, int, int, float]:
    if not isinstance(usage, Mapping):
        return 0, 0, 0, 0, 0, 0.0

    def num(key: str) -> int:
        value = usage.get(key)
        return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0

    inp, out, cr, cw = num("input"), num("output"), num("cacheRead"), num("cacheWrite")
    total = num("totalTokens") or inp + out + cr + cw
    cost = usage.get("cost")
    dollars = cost.get("total", 0) if isinstance(cost, Mapping) else 0
    return inp, out, cr, cw, total, float(dollars or 0)


def session_stats(
    session: Session,
    model: Model | None,
    cache: TokenCache | None = None,
    facts: BranchPositions | None = None,
) -> SessionStats:
    """Token, cost and cache totals of the whole file, and the current context size
    (``cache``, ``facts``: kept across calls, see :func:`context_tokens`)."""
    inp = out = cr = cw = total = requests = 0
    cost = 0.0
    a_inp = a_cr = a_cw = 0
    for entry in session.entries:
        usage: Any = None
        if entry.type == "message" and entry.role in ("assistant", "toolResult"):
            msg = entry.message
            usage = msg.get("usage") if msg is not None else None
            if entry.role == "assistant" and usage is not None:
                requests += 1
                i, _, r, w, _, _ = _usage_numbers(usage)
                a_inp, a_cr, a_cw = a_inp + i, a_cr + r, a_cw + w
        elif entry.type in ("compaction", "branch_summary", "usage"):
            usage = entry.get("usage")
        i, o, r, w, t, c = _usage_numbers(usage)
        inp, out, cr, cw, total, cost = inp + i, out + o, cr + r, cw + w, total + t, cost + c
    window = model.info.context_window if model is not None else None
    return SessionStats(
        tokens=total,
        cost=cost,
        cache_read=cr,
        cache_write=cw,
        hit_ratio=hit_ratio(a_inp, a_cr, a_cw),
        context_tokens=context_tokens(session, cache, facts),
        context_window=window if window and window > 0 else None,
        input=inp,
        output=out,
        requests=requests,
    )


def context_tokens(
    session: Session, cache: TokenCache | None = None, facts: BranchPositions | None = None
) -> int | None:
    """pi's context estimate; ``None`` after a compaction until a response reports usage.

    ``cache`` (token estimates) and ``facts`` (branch positions) spare re-measuring and
    re-scanning what did not change since the previous call."""
    branch = session.branch_view()
    projection = session.stored_projection()
    last_compaction = (facts or BranchPositions()).last_compaction(branch)
    if last_compaction >= 0:
        after = {e.id for e in branch[last_compaction + 1 :]}
        fresh = any(
            p.entry.id in after
            and any(
                m.get("role") == "assistant" and m.get("stopReason") not in ("error", "aborted")
                for m in p.messages
            )
            for p in projection.entries
        )
        if not fresh:
            return None
    return int(estimate_projected_context_tokens(projection, branch, cache).tokens)
