"""OpenAI automatic prompt caching as documented (Chat Completions).

The prompt is the request's token sequence (tools, then messages in order). Prompts of 1,024
tokens or more are cached automatically; a later request reads the longest prefix it shares
with an earlier one, counted in steps of 128 tokens from 1,024 on (``cached_tokens``), billed
at the cached-input price. There is no write charge. An unused prefix is evicted after 5
minutes of inactivity on the simulated clock (OpenAI: "5-10 minutes", at most an hour).
"""

from __future__ import annotations

import hashlib
from array import array
from collections.abc import Sequence
from dataclasses import dataclass

from benchmarks.economy.cache_anthropic import CacheResult

__all__ = ["OpenAICache"]

MIN_PREFIX = 1024
STEP = 128
DEFAULT_TTL_SECONDS = 300.0


@dataclass(slots=True)
class _Entry:
    expires: float
    request: int


class OpenAICache:
    """The prefix cache of one account (one contender's run)."""

    def __init__(self, *, ttl: float = DEFAULT_TTL_SECONDS) -> None:
        self.ttl = ttl
        self._entries: dict[bytes, _Entry] = {}

    def account(self, tokens: Sequence[int], *, now: float, request: int) -> CacheResult:
        """Bill one prompt at simulated time ``now`` and remember its prefixes."""
        total = len(tokens)
        if total < MIN_PREFIX:
            return CacheResult(total, 0, 0, total, None)
        raw = array("I", tokens).tobytes()
        width = array("I").itemsize
        keys: list[tuple[int, bytes]] = []
        digest = hashlib.blake2b(raw[: MIN_PREFIX * width], digest_size=16).digest()
        keys.append((MIN_PREFIX, digest))
        length = MIN_PREFIX
        while length + STEP <= total:
            chunk = raw[length * width : (length + STEP) * width]
            digest = hashlib.blake2b(digest + chunk, digest_size=16).digest()
            length += STEP
            keys.append((length, digest))
        read = 0
        hit_from: int | None = None
        for length, key in reversed(keys):
            entry = self._entries.get(key)
            if entry is not None and entry.expires > now:
                read, hit_from = length, entry.request
                break
        for _length, key in keys:
            self._entries[key] = _Entry(now + self.ttl, request)
        return CacheResult(total, read, 0, total - read, hit_from)
