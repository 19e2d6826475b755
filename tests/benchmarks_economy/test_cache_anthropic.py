"""Anthropic cache accounting: breakpoints, lookback, minimum length, lifetime, prices."""

from __future__ import annotations

from benchmarks.economy.cache_anthropic import AnthropicCache, Block
from benchmarks.economy.pricing import ANTHROPIC_PRICES


def blocks(*specs: tuple[str, int], breakpoint_at: int | None = -1) -> list[Block]:
    out = [Block(key.encode(), tokens) for key, tokens in specs]
    if breakpoint_at is not None:
        i = breakpoint_at % len(out)
        out[i] = Block(out[i].key, out[i].tokens, True)
    return out


def test_first_request_writes_up_to_the_breakpoint() -> None:
    cache = AnthropicCache()
    got = cache.account(blocks(("sys", 1500), ("u1", 100)), now=0, request=0)
    assert (got.input, got.cache_read, got.cache_write, got.uncached) == (1600, 0, 1600, 0)
    assert got.hit_from is None


def test_tokens_after_the_last_breakpoint_are_uncached() -> None:
    cache = AnthropicCache()
    got = cache.account(
        blocks(("sys", 1500), ("u1", 100), ("u2", 50), breakpoint_at=1), now=0, request=0
    )
    assert (got.cache_write, got.uncached) == (1600, 50)


def test_extending_the_prefix_reads_the_earlier_write() -> None:
    cache = AnthropicCache()
    cache.account(blocks(("sys", 1500), ("u1", 100)), now=0, request=0)
    got = cache.account(
        blocks(("sys", 1500), ("u1", 100), ("a1", 30), ("u2", 20)), now=10, request=1
    )
    assert (got.cache_read, got.cache_write, got.uncached) == (1600, 50, 0)
    assert got.hit_from == 0


def test_a_change_early_in_the_prefix_misses_everything_after_it() -> None:
    cache = AnthropicCache()
    cache.account(blocks(("sys", 1500), ("u1", 100)), now=0, request=0)
    got = cache.account(blocks(("sys v2", 1500), ("u1", 100), ("u2", 20)), now=10, request=1)
    assert (got.cache_read, got.cache_write) == (0, 1620)


def test_lookback_reaches_20_blocks_and_no_further() -> None:
    base = [("sys", 2000)]
    cache = AnthropicCache()
    cache.account(blocks(*base), now=0, request=0)
    # breakpoint 19 blocks after the cached position: found (20 positions checked)
    near = blocks(*base, *[(f"m{i}", 10) for i in range(19)])
    assert cache.account(near, now=1, request=1).cache_read == 2000
    far_cache = AnthropicCache()
    far_cache.account(blocks(*base), now=0, request=0)
    far = blocks(*base, *[(f"m{i}", 10) for i in range(20)])
    got = far_cache.account(far, now=1, request=1)
    assert got.cache_read == 0
    assert got.cache_write == 2200


def test_a_second_breakpoint_extends_the_lookback() -> None:
    cache = AnthropicCache()
    cache.account(blocks(("sys", 2000)), now=0, request=0)
    specs = [("sys", 2000), *[(f"m{i}", 10) for i in range(30)]]
    request = blocks(*specs)
    request[0] = Block(request[0].key, request[0].tokens, True)
    got = cache.account(request, now=1, request=1)
    assert got.cache_read == 2000
    assert got.cache_write == 300


def test_prefixes_below_the_minimum_are_not_cached() -> None:
    cache = AnthropicCache()
    first = cache.account(blocks(("sys", 900), ("u1", 100)), now=0, request=0)
    assert (first.cache_write, first.uncached) == (0, 1000)
    again = cache.account(blocks(("sys", 900), ("u1", 100), ("u2", 30)), now=1, request=1)
    assert again.cache_read == 0
    assert again.cache_write == 1030  # now long enough


def test_entries_expire_after_five_minutes_and_reads_refresh_them() -> None:
    cache = AnthropicCache()
    cache.account(blocks(("sys", 1500)), now=0, request=0)
    assert cache.account(blocks(("sys", 1500)), now=299, request=1).cache_read == 1500
    # the read at 299 s refreshed the entry: alive until 599 s
    assert cache.account(blocks(("sys", 1500)), now=598, request=2).cache_read == 1500
    assert cache.account(blocks(("sys", 1500)), now=898.5, request=3).cache_read == 0


def test_the_thinking_marker_invalidates_messages_only() -> None:
    def request(thinking: str) -> list[Block]:
        return [
            Block(b"sys", 1500, True),
            Block(thinking.encode(), 0),
            Block(b"u1", 500, True),
        ]

    cache = AnthropicCache()
    cache.account(request("think:high"), now=0, request=0)
    got = cache.account(request("think:low"), now=1, request=1)
    assert (got.cache_read, got.cache_write) == (1500, 500)


def test_prices_write_at_1_25x_and_read_at_0_1x_of_input() -> None:
    p = ANTHROPIC_PRICES
    assert p.cache_write == 1.25 * p.input
    assert abs(p.cache_read - 0.1 * p.input) < 1e-12
    cost = p.cost(uncached=1_000_000, cache_read=1_000_000, cache_write=1_000_000, output=0)
    assert abs(cost - (3.0 + 0.3 + 3.75)) < 1e-9
