"""pi 1.6.0 unit goldens for token estimates and synthesized message timestamps."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conformance import registry
from tests.conformance.tokens_checks import check_estimate_tokens, check_timestamps


def _golden(case: str) -> dict[str, Any]:
    path = registry.find_golden(case)
    if path is None:
        pytest.skip(f"{registry.conformance_dir()} holds no {case} golden")
    return registry.load_golden(path)


def test_estimate_tokens_golden() -> None:
    problems = check_estimate_tokens(_golden("units/estimate_tokens"))
    assert not problems, "\n".join(problems)


def test_timestamps_golden() -> None:
    problems = check_timestamps(_golden("units/timestamps"))
    assert not problems, "\n".join(problems)
