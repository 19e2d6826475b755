"""Packages pi installed: their skills and prompt templates load as pi loads them, with pi's
``sourceInfo``; what pictx cannot do (install, run extensions) is said once per package."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pi_context.resources.loader import LoadedResources, ResourceLoader
from pi_context.resources.packages import parse_package_source, resolve_packages


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _template(description: str, body: str = "Do it.") -> str:
    return f"---\ndescription: {description}\n---\n{body}\n"


def _skill(name: str) -> str:
    return f"---\nname: {name}\ndescription: The {name} skill\n---\nBody of {name}.\n"


def _package(root: Path, manifest: dict[str, Any] | None = None) -> Path:
    data: dict[str, Any] = {"name": root.name, "version": "1.0.0"}
    if manifest is not None:
        data["pi"] = manifest
    _write(root / "package.json", json.dumps(data))
    return root


def _settings(directory: Path, packages: list[Any], **more: Any) -> None:
    _write(directory / "settings.json", json.dumps({"packages": packages, **more}))


def _load(tmp_path: Path, *, trusted: bool | None = None) -> LoadedResources:
    project = tmp_path / "proj"
    project.mkdir(exist_ok=True)
    return ResourceLoader(
        project, agent_dir=tmp_path / "agent", home=tmp_path, trusted=trusted
    ).load()


def _tools(agent: Path) -> Path:
    root = _package(agent / "npm" / "node_modules" / "@x" / "tools")
    _write(root / "prompts" / "review.md", _template("Review a file", "Review $1"))
    _write(root / "skills" / "hello" / "SKILL.md", _skill("hello"))
    return root


def test_an_npm_package_ships_templates_and_skills_with_pis_source_info(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    root = _tools(agent)
    _settings(agent, ["npm:@x/tools@1.0.0"])
    res = _load(tmp_path)
    (template,) = res.prompt_templates
    (skill,) = res.skills
    # the records pi 1.6.0's get_commands gives for this tree (PI_OFFLINE=1, --mode rpc)
    assert template.source_info is not None
    assert skill.source_info is not None
    assert template.source_info.to_json() == {
        "path": str(root / "prompts" / "review.md"),
        "source": "npm:@x/tools@1.0.0",
        "scope": "user",
        "origin": "package",
        "baseDir": str(root),
    }
    assert skill.source_info.to_json() == {
        "path": str(root / "skills" / "hello" / "SKILL.md"),
        "source": "npm:@x/tools@1.0.0",
        "scope": "user",
        "origin": "package",
        "baseDir": str(root),
    }
    assert res.packages.diagnostics == []


def test_a_package_not_installed_is_reported_once_with_the_pi_command(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    _settings(agent, ["npm:left-out@2", "git:github.com/someone/kit@v1", "npm:left-out"])
    _settings(tmp_path / "proj" / ".pi", ["npm:proj-only"])
    res = _load(tmp_path, trusted=True)
    messages = [d.message for d in res.packages.diagnostics]
    assert len(messages) == 3, messages
    assert messages[0].startswith('package "npm:proj-only" is not installed')
    assert messages[0].endswith('run "pi install -l npm:proj-only"')
    assert 'run "pi install npm:left-out@2"' in messages[1]  # the same package once
    assert 'run "pi install git:github.com/someone/kit@v1"' in messages[2]
    assert str(agent / "git" / "github.com" / "someone" / "kit") in messages[2]
    assert all(d in res.diagnostics for d in res.packages.diagnostics)


def test_extensions_of_a_package_are_reported_not_loaded(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    root = _tools(agent)
    _write(root / "extensions" / "guard.ts", "export default function () {}\n")
    _settings(agent, ["npm:@x/tools"])
    res = _load(tmp_path)
    (problem,) = res.packages.diagnostics
    assert 'package "npm:@x/tools"' in problem.message
    assert "guard.ts" in problem.message
    assert "cannot load" in problem.message
    assert [t.name for t in res.prompt_templates] == ["review"]


def test_project_packages_only_after_trust_and_the_project_entry_wins(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    _tools(agent)
    project_pi = tmp_path / "proj" / ".pi"
    _tools(project_pi)  # pi installs a project's npm packages under .pi/npm
    local = _package(tmp_path / "kit")
    _write(local / "prompts" / "ship.md", _template("Ship it"))
    _settings(project_pi, ["../../kit", {"source": "npm:@x/tools", "prompts": []}])
    _settings(agent, ["npm:@x/tools"])
    untrusted = _load(tmp_path, trusted=False)
    assert [t.name for t in untrusted.prompt_templates] == ["review"]
    trusted = _load(tmp_path, trusted=True)
    # the project's entry for @x/tools loads no prompts, and replaces the user's entry
    assert [t.name for t in trusted.prompt_templates] == ["ship"]
    (ship,) = trusted.prompt_templates
    assert ship.source_info is not None
    assert (ship.source_info.source, ship.source_info.scope) == ("../../kit", "project")
    (hello,) = trusted.skills
    assert hello.file_path.startswith(str(project_pi / "npm"))


def test_manifest_globs_exclusions_and_settings_filters(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    root = _package(
        tmp_path / "kit",
        {"prompts": ["./res/prompts/*.md", "!**/draft.md"], "skills": ["./res/skills"]},
    )
    for name in ("a", "b", "draft"):
        _write(root / "res" / "prompts" / f"{name}.md", _template(name))
    _write(root / "prompts" / "ignored.md", _template("not in the manifest"))
    _write(root / "res" / "skills" / "one" / "SKILL.md", _skill("one"))
    _write(root / "res" / "skills" / "two" / "SKILL.md", _skill("two"))
    _settings(agent, [{"source": "../kit", "prompts": ["!**/b.md"], "skills": ["-res/skills/two"]}])
    res = _load(tmp_path)
    assert [t.name for t in res.prompt_templates] == ["a"]
    assert [s.name for s in res.skills] == ["one"]


def test_autoload_false_switches_single_resources_of_the_users_package(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    root = _tools(agent)
    _write(root / "prompts" / "extra.md", _template("Extra"))
    _settings(agent, ["npm:@x/tools"])
    _settings(
        tmp_path / "proj" / ".pi",
        [{"source": "npm:@x/tools", "autoload": False, "prompts": ["-prompts/extra.md"]}],
    )
    res = _load(tmp_path, trusted=True)
    assert [t.name for t in res.prompt_templates] == ["review"]


def test_a_package_loses_a_name_collision_to_the_users_own_files(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    root = _tools(agent)
    own = _write(agent / "prompts" / "review.md", _template("Mine"))
    _write(agent / "skills" / "hello" / "SKILL.md", _skill("hello"))
    _settings(agent, ["npm:@x/tools"])
    res = _load(tmp_path)
    (template,) = res.prompt_templates
    assert template.file_path == str(own)
    (skill,) = res.skills
    assert skill.file_path == str(agent / "skills" / "hello" / "SKILL.md")
    losers = [d.collision["loserPath"] for d in res.diagnostics if d.collision]
    assert str(root / "prompts" / "review.md") in losers
    assert str(root / "skills" / "hello" / "SKILL.md") in losers


def test_no_prompt_templates_and_no_skills_leave_packages_out(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    _tools(agent)
    _settings(agent, ["npm:@x/tools"])
    (tmp_path / "proj").mkdir()
    res = ResourceLoader(
        tmp_path / "proj",
        agent_dir=agent,
        home=tmp_path,
        no_skills=True,
        no_prompt_templates=True,
    ).load()
    assert (res.prompt_templates, res.skills) == ([], [])


def test_a_changelog_is_named_in_the_source_info(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    root = _tools(agent)
    _write(root / "CHANGELOG.md", "## [1.0.0]\n")
    _settings(agent, ["npm:@x/tools"])
    (template,) = _load(tmp_path).prompt_templates
    assert template.source_info is not None
    assert template.source_info.to_json()["changelogPath"] == str(root / "CHANGELOG.md")


@pytest.mark.parametrize(
    ("source", "kind", "identity"),
    [
        ("npm:@scope/pkg@^1.2", "npm", "npm:@scope/pkg"),
        ("npm:plain", "npm", "npm:plain"),
        ("git:github.com/a/b@v1", "git", "git:github.com/a/b"),
        ("git:git@github.com:a/b.git", "git", "git:github.com/a/b"),
        ("https://gitlab.com/a/b@main", "git", "git:gitlab.com/a/b"),
        ("ssh://git@example.org/team/repo", "git", "git:example.org/team/repo"),
    ],
)
def test_sources_parse_as_pi_reads_them(source: str, kind: str, identity: str) -> None:
    parsed = parse_package_source(source)
    assert parsed.kind == kind
    assert parsed.identity("/base") == identity


def test_a_local_source_resolves_from_its_settings_folder(tmp_path: Path) -> None:
    parsed = parse_package_source("./kit")
    assert parsed.kind == "local"
    assert parsed.install_dir("user", str(tmp_path), str(tmp_path / "agent")) == str(
        tmp_path / "agent" / "kit"
    )
    found = resolve_packages(
        cwd=str(tmp_path),
        agent_dir=str(tmp_path / "agent"),
        global_settings={"packages": ["./kit"]},
        project_settings={},
        trusted=False,
    )
    (problem,) = found.diagnostics
    assert "does not exist" in problem.message
    assert str(tmp_path / "agent" / "kit") in problem.message


def test_a_local_folder_without_resources_is_one_extension(tmp_path: Path) -> None:
    folder = tmp_path / "agent" / "guard"
    _write(folder / "index.ts", "export default function () {}\n")
    found = resolve_packages(
        cwd=str(tmp_path),
        agent_dir=str(tmp_path / "agent"),
        global_settings={"packages": ["./guard"]},
        project_settings={},
        trusted=False,
    )
    (problem,) = found.diagnostics
    assert problem.message.startswith('package "./guard": its extensions (index.ts)')
