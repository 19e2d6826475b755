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
    known = {f"units/{n}" for n in checks.UNIT_NAMES} | {
        "units/estimate_tokens",
        "units/timestamps",
    }
    assert case in known, f"no checker interprets {case}"
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


def test_row_digests_are_checked_like_full_rows() -> None:
    """Larger sessions store message rows as ``{sha256, n}`` digests; ours must hash equal."""
    import hashlib
    import json

    case = "sessions/compaction_single"
    path = registry.find_golden(case)
    if path is None:
        pytest.skip(f"needs the {case} golden")
    golden, session = _session(case, path)
    assert session is not None
    target = golden["targets"][0]
    result = target["prepareCompaction"][0]["result"]
    rows = result["messagesToSummarize"]
    text = json.dumps(rows, separators=(",", ":"), ensure_ascii=False)
    digest = {"sha256": hashlib.sha256(text.encode()).hexdigest(), "n": len(rows)}
    leaf = session.get(target["leaf"])
    assert leaf is not None
    path_entries = session.tree.path(leaf)
    keep = target["prepareCompaction"][0]["keepRecentTokens"]
    digested = {**result, "messagesToSummarize": digest}
    assert checks._check_prepare(golden, session, path_entries, keep, digested) == []
    broken = {**digest, "n": len(rows) + 1}
    bad = {**result, "messagesToSummarize": broken}
    assert checks._check_prepare(golden, session, path_entries, keep, bad) != []
