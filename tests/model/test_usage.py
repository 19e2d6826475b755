"""Usage records as pi-ai writes them, whatever the adapter (the local model's included)."""

from __future__ import annotations

from pi_context.model import ModelCost
from pi_context.model.usage import make_usage, price_usage
from tests.providers.adapters import PI_USAGE, assert_pi_usage_keys


def test_a_usage_without_reported_reasoning_still_writes_it_as_zero() -> None:
    usage = make_usage(input=10, output=5)
    assert_pi_usage_keys(usage)
    assert usage["reasoning"] == 0
    assert list(usage) == list(PI_USAGE)  # pi-ai's key order
    assert list(usage["cost"]) == list(PI_USAGE["cost"])


def test_a_priced_usage_says_its_cost_was_computed() -> None:
    usage = price_usage(make_usage(input=1_000_000, reasoning=7), ModelCost(input=2.0))
    assert_pi_usage_keys(usage)
    assert (usage["reasoning"], usage["cost"]["input"]) == (7, 2.0)
    assert usage["cost"]["totalFromProvider"] is False
