"""Anthropic prompt caching as documented (Messages API, ``cache_control: ephemeral``).

A request is a sequence of blocks in the order the API caches them: tools, then system
blocks, then the content blocks of every message. Each block has a key (its exact JSON
without ``cache_control``) and a token count. The cache key of a position is the chained hash
of every block up to it, so any change earlier in the request changes every later key.

* Only positions marked with ``cache_control`` (breakpoints, at most 4) are written, and only
  when the prefix up to them holds at least :attr:`AnthropicCache.min_tokens` tokens (1,024
  for Sonnet); shorter prefixes are silently not cached.
* Reading: for each breakpoint the API checks that position and up to 19 blocks before it (the
  20-block lookback) for an entry written earlier; the longest hit over all breakpoints is
  read (``cache_read_input_tokens``).
* Writing: everything from the hit (or the start) up to the last cacheable breakpoint is
  written (``cache_creation_input_tokens``); the rest is plain input.
* Lifetime: 5 minutes on the simulated clock, refreshed each time an entry is read or written.
* A change of the thinking configuration invalidates the cached messages (not tools or
  system): the caller passes it as a zero-token block in front of the first message.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["AnthropicCache", "Block", "CacheResult"]

LOOKBACK_BLOCKS = 20
DEFAULT_MIN_TOKENS = 1024
DEFAULT_TTL_SECONDS = 300.0


@dataclass(frozen=True, slots=True)
class Block:
    key: bytes
    tokens: int
    breakpoint: bool = False


@dataclass(frozen=True, slots=True)
class CacheResult:
    input: int
    cache_read: int
    cache_write: int
    uncached: int
    hit_from: int | None


@dataclass(slots=True)
class _Entry:
    expires: float
    request: int


class AnthropicCache:
    """The cache of one account (one contender's run)."""

    def __init__(
        self, *, min_tokens: int = DEFAULT_MIN_TOKENS, ttl: float = DEFAULT_TTL_SECONDS
    ) -> None:
        self.min_tokens = min_tokens
        self.ttl = ttl
        self._entries: dict[bytes, _Entry] = {}

    def account(self, blocks: Sequence[Block], *, now: float, request: int) -> CacheResult:
        """Bill one request at simulated time ``now``; records its writes under ``request``."""
        keys: list[bytes] = []
        cumulative: list[int] = []
        digest = b""
        total = 0
        for block in blocks:
            digest = hashlib.blake2b(digest + block.key, digest_size=16).digest()
            total += block.tokens
            keys.append(digest)
            cumulative.append(total)
        breakpoints = [i for i, block in enumerate(blocks) if block.breakpoint]
        hit: int | None = None
        for b in breakpoints:
            for j in range(b, max(-1, b - LOOKBACK_BLOCKS), -1):
                entry = self._entries.get(keys[j])
                if entry is not None and entry.expires > now:
                    if hit is None or j > hit:
                        hit = j
                    break
        read = cumulative[hit] if hit is not None else 0
        hit_from: int | None = None
        if hit is not None:
            entry = self._entries[keys[hit]]
            hit_from = entry.request
            entry.expires = now + self.ttl
        cacheable = [b for b in breakpoints if cumulative[b] >= self.min_tokens]
        write = max(0, cumulative[cacheable[-1]] - read) if cacheable else 0
        for b in cacheable:
            if b == hit:
                continue
            self._entries[keys[b]] = _Entry(now + self.ttl, request)
        return CacheResult(
            input=total,
            cache_read=read,
            cache_write=write,
            uncached=total - read - write,
            hit_from=hit_from,
        )
