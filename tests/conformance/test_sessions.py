"""pi 1.6.0 session goldens: loading, parsing, opening, migration, tree and projection."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conformance import registry
from tests.conformance.session_checks import (
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
    assert CASES, f"no session goldens under {registry.conformance_dir()}"


@pytest.mark.parametrize(("case", "path"), CASES, ids=[c for c, _ in CASES])
def test_session_golden(case: str, path: Path) -> None:
    loaded, before = load_case(path)
    golden = loaded.golden
    assert golden["detail"] in ("full", "rows", "digest"), f"unknown detail {golden['detail']}"
    problems: list[str] = []
    problems += [f"lines: {p}" for p in check_lines(loaded)]
    problems += [f"load: {p}" for p in check_load(loaded)]
    problems += [f"parse: {p}" for p in check_parse(loaded)]
    problems += [f"open: {p}" for p in check_open(loaded, before)]
    if loaded.session is not None and "migrate" in golden:
        problems += [f"migrate: {p}" for p in check_migrate(loaded)]
    if loaded.session is not None and "manager" in golden:
        problems += [f"manager: {p}" for p in check_manager(loaded)]
    for target in golden.get("targets", []):
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
