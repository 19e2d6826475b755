"""pi 1.6.0's system-prompt and resources goldens through our implementation."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conformance import prompt_checks, registry

SYSTEM_PROMPT = dict(registry.goldens(kind="system_prompt"))
RESOURCES = dict(registry.goldens(kind="resources"))
SESSIONS = dict(registry.goldens(kind="session"))


def _golden(group: dict[str, Path], case: str) -> dict[str, Any]:
    """Golden ``case``; the test skips when the folder under test does not hold it."""
    if case not in group:
        pytest.skip(f"{registry.conformance_dir()} holds no {case} golden")
    return registry.load_golden(group[case])


def _grid() -> dict[str, Any]:
    return _golden(SYSTEM_PROMPT, "system_prompt/grid")


def _report(problems: list[str]) -> None:
    assert not problems, "\n".join(p[:400] for p in problems[:20])


@pytest.mark.parametrize(
    "name",
    sorted(registry.load_golden(SYSTEM_PROMPT["system_prompt/grid"])["cases"])
    if "system_prompt/grid" in SYSTEM_PROMPT
    else [],
)
def test_grid_case(name: str) -> None:
    _report(prompt_checks.check_grid_case(_grid(), name))


def test_docs_paths_are_pis_docs_pointers() -> None:
    grid = _grid()
    docs = grid["cases"]["minimal"]["sections"]["docs"]
    for path in grid["docsPaths"].values():
        assert path in docs


def test_every_system_prompt_golden_is_interpreted() -> None:
    known = {
        "system_prompt/grid",
        "system_prompt/format_skills",
        "system_prompt/diff",
        "system_prompt/replay",
    }
    assert set(SYSTEM_PROMPT) <= known, set(SYSTEM_PROMPT) - known
    resources = {"resources/context_files", "resources/skills", "resources/resource_loader"}
    assert set(RESOURCES) <= resources, set(RESOURCES) - resources


def test_format_skills() -> None:
    golden = _golden(SYSTEM_PROMPT, "system_prompt/format_skills")
    _report(prompt_checks.check_format_skills(golden, _grid()))


def test_diff() -> None:
    golden = _golden(SYSTEM_PROMPT, "system_prompt/diff")
    _report(prompt_checks.check_diff(golden, _grid()))


def test_replay() -> None:
    golden = _golden(SYSTEM_PROMPT, "system_prompt/replay")
    _report(prompt_checks.check_replay(golden))


def test_context_files(tmp_path: Path) -> None:
    golden = _golden(RESOURCES, "resources/context_files")
    _report(prompt_checks.check_context_files(golden, tmp_path))


def test_skills(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    golden = _golden(RESOURCES, "resources/skills")
    home = tmp_path / golden["tree"]["root"].removeprefix("<TREE>/") / golden["tree"]["home"]
    monkeypatch.setenv("HOME", str(home.resolve().parent / home.name))
    _report(prompt_checks.check_skills(golden, tmp_path))


def test_resource_loader(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    golden = _golden(RESOURCES, "resources/resource_loader")
    monkeypatch.delenv("PI_CODING_AGENT_DIR", raising=False)
    _report(prompt_checks.check_resource_loader(golden, tmp_path))


@pytest.mark.parametrize("case", sorted(SESSIONS))
def test_session_current_system(case: str) -> None:
    golden = registry.load_golden(SESSIONS[case])
    problems: list[str] = []
    for target in golden.get("targets", []):
        problems += prompt_checks.check_current_system(golden, target)
    _report(problems)


@pytest.mark.parametrize("case", sorted(SESSIONS))
def test_current_system_through_session_engine(case: str) -> None:
    """The path used for digest-level goldens (no inline rows) agrees with the golden too."""
    golden = registry.load_golden(SESSIONS[case])
    problems: list[str] = []
    for target in golden.get("targets", []):
        if "currentSystem" not in target:
            continue
        inline = dict(target, messages=None)  # force the engine path
        problems += prompt_checks.check_current_system(golden, inline)
    _report(problems)
