"""pi 1.6.0 session goldens: loading, parsing, opening, migration, tree and projection."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from tests.conformance import registry
from tests.conformance.digests import rows_digest
from tests.conformance.session_checks import (
    EXERCISED,
    EXPECTED_DIFFERENCES,
    check_lines,
    check_load,
    check_manager,
    check_migrate,
    check_open,
    check_parse,
    check_target,
    load_case,
)

CASES = list(registry.goldens("session"))


def test_there_are_session_goldens() -> None:
    if registry.conformance_dir() != registry.REPO_COPY and not CASES:
        pytest.skip("this conformance folder holds no session goldens")
    assert CASES, f"no session goldens under {registry.conformance_dir()}"


@pytest.mark.parametrize(("case", "path"), CASES, ids=[c for c, _ in CASES])
def test_session_golden(case: str, path: Path) -> None:
    loaded, before = load_case(path)
    golden = loaded.golden
    detail = golden.get("detail", "full")
    assert detail in ("full", "rows", "digest"), f"{case}: unknown detail level {detail!r}"
    problems: list[str] = []
    problems += [f"lines: {p}" for p in check_lines(loaded)]
    problems += [f"load: {p}" for p in check_load(loaded)]
    problems += [f"parse: {p}" for p in check_parse(loaded)]
    problems += [f"open: {p}" for p in check_open(loaded, before)]
    problems += [f"migrate: {p}" for p in check_migrate(loaded)]
    problems += [f"manager: {p}" for p in check_manager(loaded)]
    for target in golden.get("targets", []) if loaded.session is not None else []:
        problems += [
            f"target {target['why']} {target['leaf']}: {p}" for p in check_target(loaded, target)
        ]
    if loaded.session is None and (golden.get("targets") or golden.get("manager")):
        problems.append(f"pi loads this session but we refused it: {loaded.error}")
    assert not problems, "\n".join(problems)


def test_expected_differences_are_documented() -> None:
    """Every expected difference is explained in docs/compatibility.md."""
    doc = (Path(__file__).resolve().parents[2] / "docs" / "compatibility.md").read_text("utf-8")
    for key in EXPECTED_DIFFERENCES:
        assert f"`{key}`" in doc, f"expected difference {key} missing from docs/compatibility.md"


def _digest_form(golden: dict[str, Any]) -> dict[str, Any]:
    """The golden as a larger session's ``digest`` detail level would give it."""
    out = copy.deepcopy(golden)
    out["detail"] = "digest"
    out.pop("store", None)
    manager = out.get("manager", {})
    manager.pop("treeRoots", None)
    for key in ("leaves", "treePreorder"):
        if isinstance(manager.get(key), list):
            manager[key] = rows_digest(manager[key], head=2)
    for target in out.get("targets", []):
        for key in ("contextEntries", "messages"):
            if isinstance(target.get(key), list):
                target[key] = rows_digest(target[key], tail=2)
    return out


@pytest.mark.parametrize(("case", "path"), CASES, ids=[c for c, _ in CASES])
def test_session_golden_in_digest_form(case: str, path: Path) -> None:
    """The runner interprets digested rows: the same goldens, digested, still pass."""
    loaded, _ = load_case(path)
    if loaded.session is None:
        assert not loaded.golden.get("targets")
        assert not loaded.golden.get("manager")
        pytest.skip("pi refuses this file too: it has no rows to digest")
    loaded.golden = _digest_form(loaded.golden)
    problems = check_manager(loaded) if "manager" in loaded.golden else []
    for target in loaded.golden.get("targets", []):
        problems += check_target(loaded, target)
    assert not problems, "\n".join(problems)


def test_digest_form_detects_a_difference() -> None:
    path = registry.find_golden("sessions/branched")
    if path is None:
        pytest.skip("needs the sessions/branched golden")
    case = "sessions/branched"
    loaded, _ = load_case(path)
    golden = _digest_form(loaded.golden)
    golden["targets"][0]["messages"]["sha256"] = "0" * 64
    loaded.golden = golden
    assert check_target(loaded, golden["targets"][0]) == ["message rows digest differs"], case


def test_expected_differences_are_exercised() -> None:
    """Each listed difference is met by some golden (the list cannot go stale)."""
    if registry.conformance_dir() != registry.REPO_COPY:
        pytest.skip("checked on the repository's own goldens")
    for _case, path in CASES:
        loaded, before = load_case(path)
        check_open(loaded, before)
        if loaded.session is not None:
            for target in loaded.golden.get("targets", []):
                check_target(loaded, target)
    assert set(EXPECTED_DIFFERENCES) <= EXERCISED
