"""OpenAI automatic prefix caching: 1,024-token minimum, 128-token steps, idle lifetime."""

from __future__ import annotations

from benchmarks.economy.cache_openai import OpenAICache
from benchmarks.economy.pricing import OPENAI_PRICES


def test_short_prompts_are_never_cached() -> None:
    cache = OpenAICache()
    cache.account(list(range(1000)), now=0, request=0)
    got = cache.account(list(range(1000)), now=1, request=1)
    assert (got.input, got.cache_read, got.uncached) == (1000, 0, 1000)


def test_the_shared_prefix_is_read_in_128_token_steps() -> None:
    cache = OpenAICache()
    first = list(range(3000))
    assert cache.account(first, now=0, request=0).cache_read == 0
    second = first[:2000] + [9_999_999] * 500
    got = cache.account(second, now=1, request=1)
    # longest shared prefix is 2000 tokens: 1024 + 7*128 = 1920 is the last full step
    assert got.cache_read == 1920
    assert got.uncached == 2500 - 1920
    assert got.cache_write == 0
    assert got.hit_from == 0


def test_a_difference_in_the_first_1024_tokens_misses() -> None:
    cache = OpenAICache()
    cache.account(list(range(3000)), now=0, request=0)
    changed = [7, *range(1, 3000)]
    assert cache.account(changed, now=1, request=1).cache_read == 0


def test_hit_from_names_the_latest_request_that_sent_the_prefix() -> None:
    cache = OpenAICache()
    cache.account(list(range(2048)), now=0, request=0)
    cache.account(list(range(2048)), now=1, request=1)
    assert cache.account(list(range(2048)), now=2, request=2).hit_from == 1


def test_unused_prefixes_expire_after_five_minutes() -> None:
    cache = OpenAICache()
    cache.account(list(range(2048)), now=0, request=0)
    assert cache.account(list(range(2048)), now=301, request=1).cache_read == 0


def test_cached_input_is_billed_at_the_published_discount() -> None:
    p = OPENAI_PRICES
    assert p.cache_read == p.input / 4
    assert p.cost(uncached=0, cache_read=1_000_000, cache_write=0, output=0) == 0.5
