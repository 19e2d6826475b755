"""The ``!glob``, ``+path``, ``-path`` and glob entries of the ``skills`` and ``prompts``
settings, as pi 1.6.0 applies them."""

from __future__ import annotations

import json
from pathlib import Path

from pi_context.resources.loader import ResourceLoader
from pi_context.resources.prompt_templates import load_prompt_templates
from pi_context.resources.resource_patterns import apply_patterns, enabled_by_overrides
from tests.resources.test_skills import skill

BASE = "/agent"
FILES = ["/agent/p/a.md", "/agent/p/b.md", "/agent/p/deep/c.md", "/agent/p/x.txt"]


def test_apply_patterns_in_pi_order() -> None:
    assert apply_patterns(FILES, [], BASE) == set(FILES)
    assert apply_patterns(FILES, ["!b.md"], BASE) == set(FILES) - {"/agent/p/b.md"}
    # a glob entry keeps its matches only; * stays in one segment, ** crosses them
    assert apply_patterns(FILES, ["p/*.md"], BASE) == {"/agent/p/a.md", "/agent/p/b.md"}
    assert apply_patterns(FILES, ["p/**/*.md"], BASE) == {
        "/agent/p/a.md",
        "/agent/p/b.md",
        "/agent/p/deep/c.md",
    }
    # + adds back what ! removed; - removes whatever else says
    assert apply_patterns(FILES, ["!*.md", "+p/a.md"], BASE) == {"/agent/p/a.md", "/agent/p/x.txt"}
    assert apply_patterns(FILES, ["+./p/a.md", "-p/a.md"], BASE) == set(FILES) - {"/agent/p/a.md"}
    assert apply_patterns(FILES, ["-/agent/p/x.txt"], BASE) == set(FILES) - {"/agent/p/x.txt"}


def test_a_skill_matches_by_its_directory() -> None:
    path = "/agent/skills/greet/SKILL.md"
    assert not enabled_by_overrides(path, ["!greet"], BASE)
    assert not enabled_by_overrides(path, ["-skills/greet"], BASE)
    assert enabled_by_overrides(path, ["!gr*", "+skills/greet"], BASE)
    assert enabled_by_overrides(path, ["skills", "!other"], BASE)  # plain entries do not apply


def _skills(agent: Path, proj: Path, home: Path) -> list[str]:
    loaded = ResourceLoader(proj, agent_dir=agent, home=home, trusted=True).load()
    return sorted(s.name for s in loaded.skills)


def test_skill_settings_patterns(tmp_path: Path) -> None:
    agent, proj, home = (tmp_path / n for n in ("agent", "proj", "home"))
    for name in ("alpha", "beta", "gamma"):
        skill(agent, f"skills/{name}/SKILL.md", f"name: {name}\ndescription: {name} skill")
        skill(agent, f"extra/{name}-x/SKILL.md", f"name: {name}-x\ndescription: extra")
    proj.mkdir()
    settings = agent / "settings.json"
    settings.write_text(json.dumps({"skills": ["extra"]}))
    assert _skills(agent, proj, home) == [
        "alpha",
        "alpha-x",
        "beta",
        "beta-x",
        "gamma",
        "gamma-x",
    ]
    settings.write_text(
        json.dumps({"skills": ["extra", "!beta*", "+extra/beta-x", "-skills/gamma"]})
    )
    assert _skills(agent, proj, home) == ["alpha", "alpha-x", "beta-x", "gamma-x"]


def test_the_project_entries_apply_to_the_project_skills_only(tmp_path: Path) -> None:
    agent, proj, home = (tmp_path / n for n in ("agent", "proj", "home"))
    skill(agent, "skills/mine/SKILL.md", "name: mine\ndescription: user")
    skill(proj, ".pi/skills/team/SKILL.md", "name: team\ndescription: project")
    (proj / ".pi" / "settings.json").write_text(json.dumps({"skills": ["!team", "!mine"]}))
    assert _skills(agent, proj, home) == ["mine"]


def test_prompt_settings_patterns(tmp_path: Path) -> None:
    agent, proj = tmp_path / "agent", tmp_path / "proj"
    for rel in ("prompts/keep.md", "prompts/drop.md", "more/one.md", "more/two.md"):
        (agent / rel).parent.mkdir(parents=True, exist_ok=True)
        (agent / rel).write_text("Text.\n")
    proj.mkdir()
    user = {"prompts": ["more", "!drop.md", "!more/*", "+more/two.md"]}
    templates, _ = load_prompt_templates(
        cwd=str(proj), agent_dir=str(agent), trusted=True, settings={"user": user}
    )
    assert sorted(t.name for t in templates) == ["keep", "two"]
