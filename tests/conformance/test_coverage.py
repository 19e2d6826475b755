"""Every part of every golden must be claimed by a checker module, or this test fails.

Checker modules are the ``*_checks.py`` files beside this one; importing them registers their
claims (see ``registry.claim``). A golden with a key nobody interprets therefore fails here
instead of being skipped silently.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from tests.conformance import registry

for _module in sorted(Path(__file__).parent.glob("*_checks.py")):
    importlib.import_module(f"tests.conformance.{_module.stem}")

ALL = [(case["case"], case["kind"], case["file"]) for case in registry.golden_index()]


def test_index_is_not_empty() -> None:
    assert ALL, f"no goldens in {registry.conformance_dir()}"


@pytest.mark.parametrize(("case", "kind", "file"), ALL, ids=[c for c, _, _ in ALL])
def test_every_key_is_claimed(case: str, kind: str, file: str) -> None:
    golden = registry.load_golden(registry.conformance_dir() / "goldens" / file)
    claimed = registry.CLAIMS.get(kind, set()) | registry.DESCRIPTIVE_KEYS
    unclaimed = sorted(set(golden) - claimed)
    assert not unclaimed, f"{case}: no checker interprets top-level keys {unclaimed}"
    if kind == "session":
        target_claims = registry.CLAIMS.get("session.target", set())
        for target in golden.get("targets", []):
            missing = sorted(set(target) - target_claims)
            assert not missing, f"{case} target {target.get('why')}: unclaimed keys {missing}"
