"""What a session reports about itself: its totals, and its prompt-cache accounting.

**Session totals** (:func:`session_stats`, pi's ``/session``): tokens, cost, cache reads and
writes, hit ratio, current context size.

**Prompt-cache accounting**, beyond pi: per request, per session, and why a request missed.
Each request is reduced to a *fingerprint*: the ordered list of its parts as a provider sees
them (tool declarations, each system-prompt section, each message), each with a short digest.
Prompt caches are prefix caches, so the first part that differs from the previous request's
fingerprint is what invalidated the cached prefix. When a request reads less from the cache
than the previous request had cached (``cacheRead < previous cacheRead + cacheWrite``), the
tracker names that part (``section:skills``, ``tools``, ``message:12:user``), or reports
``unchanged prefix`` when nothing changed (the provider's cache expired or was evicted).

Providers that cannot take system messages mid-conversation receive one collapsed leading
prompt; pass ``collapse=True`` so section changes are located in that head.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

from msgspec import Struct, field

from pi_context import _json
from pi_context.compaction.accounting import TokenCache, estimate_projected_context_tokens
from pi_context.messages import AgentMessage, Message, ToolDeclaration, Usage
from pi_context.model import Model
from pi_context.prompt import get_current_system_message
from pi_context.session import Session

from ._state import BranchPositions
from ._transform import PrefixFlatMap

__all__ = [
    "CacheRecord",
    "CacheTracker",
    "Fingerprint",
    "SessionStats",
    "context_tokens",
    "fingerprint_request",
    "first_divergence",
    "session_stats",
]


# -- prompt-cache accounting -----------------------------------------------------------------------


UNCHANGED_PREFIX = "unchanged prefix"


def _digest(value: Any) -> str:
    data = value.encode() if isinstance(value, str) else _json.dumps(value)
    return hashlib.blake2b(data, digest_size=8).hexdigest()


class Fingerprint(Struct, frozen=True):
    """Ordered ``(label, digest)`` parts of one request."""

    parts: tuple[tuple[str, str], ...]

    def labels(self) -> list[str]:
        return [label for label, _ in self.parts]


def _system_parts(message: Mapping[str, Any], out: list[tuple[str, str]]) -> None:
    content = message.get("content")
    if content:
        out.append(("system:content", _digest(content)))
    for name, value in (message.get("sections") or {}).items():
        out.append((f"section:{name}", _digest(value if value is not None else "\0deleted")))
    if message.get("toolsAdded"):
        out.append(("tools", _digest(message["toolsAdded"])))
    if message.get("toolsRemoved"):
        out.append(("tools", _digest(message["toolsRemoved"])))


def _message_parts(
    message: Message | AgentMessage, index: int, collapse: bool
) -> tuple[tuple[str, str], ...]:
    role = message.get("role")
    if role == "system":
        if collapse:
            return ()
        out: list[tuple[str, str]] = []
        _system_parts(message, out)
        return tuple(out)
    return ((f"message:{index}:{role}", _digest(message)),)


def _system_only(
    _index: int, message: Message | AgentMessage
) -> tuple[Message | AgentMessage, ...]:
    return (message,) if message.get("role") == "system" else ()


class _Reuse:
    """Per-message parts (and, collapsed, the system messages) of the previous request, kept
    for the messages that are the very same objects at the same positions this time."""

    __slots__ = ("collapse", "parts", "systems")

    def __init__(self, collapse: bool) -> None:
        self.collapse = collapse
        self.parts: PrefixFlatMap[Message | AgentMessage, tuple[str, str]] = PrefixFlatMap(
            lambda index, message: _message_parts(message, index, collapse)
        )
        self.systems: PrefixFlatMap[Message | AgentMessage, Message | AgentMessage] = PrefixFlatMap(
            _system_only
        )


def fingerprint_request(
    messages: Sequence[Message | AgentMessage],
    tools: Sequence[ToolDeclaration] = (),
    *,
    collapse: bool = False,
    reuse: _Reuse | None = None,
) -> Fingerprint:
    """Fingerprint a request in wire order: tools, system prompt sections, messages.

    With ``reuse`` (kept by :class:`CacheTracker`), the messages that the previous request
    also started with (the same objects) are not hashed or scanned again: a turn only hashes
    what is new.
    """
    if reuse is None or reuse.collapse != collapse:
        reuse = _Reuse(collapse)
    parts: list[tuple[str, str]] = []
    if tools:
        parts.append(("tools", _digest(list(tools))))
    if collapse:
        head = get_current_system_message(reuse.systems(messages))
        if head is not None:
            _system_parts(head, parts)
    parts.extend(reuse.parts(messages))
    return Fingerprint(tuple(parts))


def first_divergence(previous: Fingerprint, current: Fingerprint) -> str | None:
    """The label of the first part of ``previous`` that ``current`` does not repeat, if any."""
    now = {label for label, _ in current.parts}
    for index, (label, digest) in enumerate(previous.parts):
        if index >= len(current.parts):
            return label
        cur_label, cur_digest = current.parts[index]
        if cur_label == label:
            if cur_digest == digest:
                continue
            return label  # changed in place
        # A part that is gone was removed; otherwise a part was inserted or moved here.
        return label if label not in now else cur_label
    return None


class CacheRecord(Struct, frozen=True):
    """Cache numbers of one request and, for a miss, what caused it."""

    index: int
    input: int
    cache_read: int
    cache_write: int
    miss: bool
    miss_cause: str | None


class CacheTracker(Struct):
    """Accumulates :class:`CacheRecord` values over a session's requests."""

    records: list[CacheRecord] = field(default_factory=list)
    _previous: Fingerprint | None = None
    _previous_cached: int = 0
    _reuse: _Reuse | None = None

    def record(
        self,
        messages: Sequence[Message | AgentMessage],
        tools: Sequence[ToolDeclaration],
        usage: Usage,
        *,
        collapse: bool = False,
    ) -> CacheRecord:
        """Account one finished request."""
        if self._reuse is None or self._reuse.collapse != collapse:
            self._reuse = _Reuse(collapse)
        fingerprint = fingerprint_request(messages, tools, collapse=collapse, reuse=self._reuse)
        cache_read = int(usage.get("cacheRead", 0) or 0)
        cache_write = int(usage.get("cacheWrite", 0) or 0)
        miss = False
        cause: str | None = None
        if (
            self._previous is not None
            and self._previous_cached > 0
            and cache_read < self._previous_cached
        ):
            miss = True
            cause = first_divergence(self._previous, fingerprint) or UNCHANGED_PREFIX
        record = CacheRecord(
            index=len(self.records),
            input=int(usage.get("input", 0) or 0),
            cache_read=cache_read,
            cache_write=cache_write,
            miss=miss,
            miss_cause=cause,
        )
        self.records.append(record)
        self._previous = fingerprint
        self._previous_cached = cache_read + cache_write
        return record

    def reset(self) -> None:
        """Forget the previous request (after a model switch the cache starts cold)."""
        self._previous = None
        self._previous_cached = 0

    @property
    def hit_ratio(self) -> float:
        """Tokens read from cache over all prompt tokens of the tracked requests (0 when none)."""
        return hit_ratio(
            sum(r.input for r in self.records),
            sum(r.cache_read for r in self.records),
            sum(r.cache_write for r in self.records),
        )


def hit_ratio(input_tokens: int, cache_read: int, cache_write: int) -> float:
    total = input_tokens + cache_read + cache_write
    return cache_read / total if total else 0.0


# -- session totals --------------------------------------------------------------------------------


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
