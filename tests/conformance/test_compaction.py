"""pi 1.6.0 goldens for compaction: units, per-target accounting/cut points/preparation, and
branch summaries."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conformance import compaction_checks as checks
from tests.conformance import registry

UNIT_CASES = list(registry.goldens(kind="units"))
SESSION_CASES = list(registry.goldens(kind="session"))

_loaded: dict[str, tuple[dict[str, Any], checks.LoadedSession | None]] = {}


def _session(case: str, path: Any) -> tuple[dict[str, Any], checks.LoadedSession | None]:
    """The golden and its session (``None`` when the golden has nothing for compaction)."""
    if case not in _loaded:
        golden = registry.load_golden(path)
        session = None
        if golden.get("targets") or golden.get("branchSummaries"):
            session = checks.LoadedSession(golden, registry.conformance_dir())
        _loaded[case] = (golden, session)
    return _loaded[case]


@pytest.mark.parametrize(("case", "path"), UNIT_CASES, ids=[c for c, _ in UNIT_CASES])
def test_unit_golden(case: str, path: Any) -> None:
    golden = registry.load_golden(path)
    assert checks.check_unit(case, golden) == []


@pytest.mark.parametrize(("case", "path"), SESSION_CASES, ids=[c for c, _ in SESSION_CASES])
def test_session_targets(case: str, path: Any) -> None:
    golden, session = _session(case, path)
    problems = []
    assert session is not None or not golden.get("targets")
    for target in golden.get("targets", []):
        assert session is not None
        for problem in checks.check_target(golden, session, target):
            problems.append(f"{target['leaf']} ({target['why']}): {problem}")
    assert problems == []


@pytest.mark.parametrize(("case", "path"), SESSION_CASES, ids=[c for c, _ in SESSION_CASES])
def test_branch_summaries(case: str, path: Any) -> None:
    golden, session = _session(case, path)
    problems = []
    for item in golden.get("branchSummaries", []):
        assert session is not None
        for problem in checks.check_branch_summary(session, item):
            problems.append(f"{item['from']} -> {item['to']}: {problem}")
    assert problems == []


def test_expected_differences_are_documented() -> None:
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "compatibility.md").read_text("utf-8")
    assert "## Compaction" in doc
    for key in checks.EXPECTED_DIFFERENCES:
        assert key in doc, key
