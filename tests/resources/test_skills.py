from __future__ import annotations

import os
from pathlib import Path

import pytest

from pi_context.resources import ResourceLoader, Skill, expand_skill_command, load_skills
from pi_context.resources.frontmatter import FrontmatterError, parse_frontmatter
from pi_context.resources.skills import load_skills_from_dir


def skill(root: Path, rel: str, front: str, body: str = "Body.\n") -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\n{front}\n---\n{body}")
    return path


def test_frontmatter_yaml_12_semantics() -> None:
    front, body = parse_frontmatter(
        "\ufeff---\r\na: yes\r\nb: true\r\nc: |\r\n  x\r\n---\r\n  text \r\n"
    )
    assert front == {"a": "yes", "b": True, "c": "x\n"}
    assert body == "text"
    assert parse_frontmatter("no front") == ({}, "no front")
    assert parse_frontmatter("---\nname: x\nnever closed") == ({}, "---\nname: x\nnever closed")
    with pytest.raises(FrontmatterError):
        parse_frontmatter("---\nname: [broken\n---\n")


def test_validation_warnings_do_not_block_loading(tmp_path: Path) -> None:
    skill(tmp_path, "Bad_Name/SKILL.md", "name: Bad--Name-\ndescription: ok")
    skill(tmp_path, "nodesc/SKILL.md", "name: nodesc")
    skill(tmp_path, "long/SKILL.md", "description: " + "d" * 1100)
    skill(tmp_path, "broken/SKILL.md", "name: [oops\ndescription: x")
    skill(tmp_path, "hidden/SKILL.md", "description: h\ndisable-model-invocation: true")
    skill(tmp_path, "strflag/SKILL.md", "description: s\ndisable-model-invocation: 'true'")
    res = load_skills_from_dir(str(tmp_path), "user")
    by_name = {s.name: s for s in res.skills}
    assert set(by_name) == {"Bad--Name-", "long", "hidden", "strflag"}
    assert by_name["hidden"].disable_model_invocation is True
    assert by_name["strflag"].disable_model_invocation is False
    msgs = [(Path(d.path or "").parent.name, d.message) for d in res.diagnostics]
    assert (
        "Bad_Name",
        "name contains invalid characters (must be lowercase a-z, 0-9, hyphens only)",
    ) in msgs
    assert ("Bad_Name", "name must not start or end with a hyphen") in msgs
    assert ("Bad_Name", "name must not contain consecutive hyphens") in msgs
    assert ("nodesc", "description is required") in msgs
    assert ("long", "description exceeds 1024 characters (1100)") in msgs
    assert any(p == "broken" for p, _ in msgs)


def test_skill_root_is_not_descended_and_pi_mode_root_md(tmp_path: Path) -> None:
    skill(tmp_path, "outer/SKILL.md", "name: outer\ndescription: o")
    skill(tmp_path, "outer/inner/SKILL.md", "name: inner\ndescription: i")
    skill(tmp_path, "top.md", "name: top\ndescription: t")
    skill(tmp_path, "sub/nested.md", "name: nested\ndescription: n")
    skill(tmp_path, "node_modules/x/SKILL.md", "name: nm\ndescription: n")
    skill(tmp_path, "ign/SKILL.md", "name: ign\ndescription: n")
    (tmp_path / ".gitignore").write_text("ign/\n")
    assert [s.name for s in load_skills_from_dir(str(tmp_path), "user").skills] == ["outer", "top"]
    agents = load_skills_from_dir(str(tmp_path), "user", mode="agents").skills
    assert [s.name for s in agents] == ["outer", "nested"]


def test_symlink_loop_is_reported_not_followed_forever(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    os.symlink("..", tmp_path / "a" / "up")
    skill(tmp_path, "b/SKILL.md", "name: b\ndescription: b")
    res = load_skills_from_dir(str(tmp_path), "user")
    assert [s.name for s in res.skills] == ["b"]
    assert any(d.message == "symlink loop" for d in res.diagnostics)


def test_collisions_first_wins_and_realpath_dedupe(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    skill(agent, "skills/cal/SKILL.md", "name: cal\ndescription: user")
    skill(tmp_path, "proj/.pi/skills/cal/SKILL.md", "name: cal\ndescription: project")
    os.symlink(agent / "skills" / "cal", tmp_path / "alias")
    res = load_skills(tmp_path / "proj", agent, skill_paths=["../alias", "missing", "  "])
    assert [s.description for s in res.skills] == ["user"]
    collisions = [d for d in res.diagnostics if d.type == "collision"]
    assert len(collisions) == 1
    assert collisions[0].collision == {
        "resourceType": "skill",
        "name": "cal",
        "winnerPath": str(agent / "skills" / "cal" / "SKILL.md"),
        "loserPath": str(tmp_path / "proj" / ".pi" / "skills" / "cal" / "SKILL.md"),
    }
    assert res.diagnostics[-1].type == "collision"
    assert any(d.message == "skill path does not exist" for d in res.diagnostics)


def test_skill_command_expansion(tmp_path: Path) -> None:
    path = skill(
        tmp_path,
        "pdf/SKILL.md",
        "name: pdf\ndescription: d\ndisable-model-invocation: true",
        "\n  Use pdftotext.  \n",
    )
    skills = load_skills_from_dir(str(tmp_path), "user").skills
    block = (
        f'<skill name="pdf" location="{path}">\nReferences are relative to {path.parent}.\n\n'
        "Use pdftotext.\n</skill>"
    )
    assert expand_skill_command("/skill:pdf", skills) == block
    assert expand_skill_command("/skill:pdf  file.pdf ", skills) == block + "\n\nfile.pdf"
    assert expand_skill_command("/skill:nope x", skills) == "/skill:nope x"
    assert expand_skill_command("hello /skill:pdf", skills) == "hello /skill:pdf"
    path.unlink()
    assert expand_skill_command("/skill:pdf", skills) == "/skill:pdf"


def test_binary_and_non_utf8_skill_files(tmp_path: Path) -> None:
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "SKILL.md").write_bytes(b"---\x00\x00binary")
    (tmp_path / "latin").mkdir()
    (tmp_path / "latin" / "SKILL.md").write_bytes(b"---\ndescription: caf\xe9\n---\n")
    res = load_skills_from_dir(str(tmp_path), "user")
    assert [s.description for s in res.skills] == ["caf\ufffd"]
    messages = {Path(d.path or "").parent.name: d.message for d in res.diagnostics}
    assert "binary" in messages["bin"]
    assert "UTF-8" in messages["latin"]


def test_source_info_names_where_each_skill_came_from(tmp_path: Path) -> None:
    agent, proj, home, extra = (tmp_path / n for n in ("agent", "proj", "home", "extra"))
    skill(agent, "skills/mine/SKILL.md", "description: user skill")
    skill(proj, ".pi/skills/team/SKILL.md", "description: project skill")
    skill(proj, ".agents/skills/shared/SKILL.md", "description: agents skill")
    skill(proj, ".pi/listed/SKILL.md", "description: listed in settings")
    (proj / ".pi" / "settings.json").write_text('{"skills": ["listed"]}')
    skill(extra, "once/SKILL.md", "description: explicit path")
    loaded = ResourceLoader(
        proj, agent_dir=agent, home=home, trusted=True, skill_paths=[str(extra / "once")]
    ).load()
    info = {s.name: s.source_info.to_json() for s in loaded.skills if s.source_info}
    pi_dir = str(proj / ".pi")
    assert info == {
        "listed": {
            "path": str(proj / ".pi" / "listed" / "SKILL.md"),
            "source": "local",
            "scope": "project",
            "origin": "top-level",
            "baseDir": pi_dir,
        },
        "team": {
            "path": str(proj / ".pi" / "skills" / "team" / "SKILL.md"),
            "source": "auto",
            "scope": "project",
            "origin": "top-level",
            "baseDir": pi_dir,
        },
        "shared": {
            "path": str(proj / ".agents" / "skills" / "shared" / "SKILL.md"),
            "source": "auto",
            "scope": "project",
            "origin": "top-level",
            "baseDir": str(proj / ".agents"),
        },
        "mine": {
            "path": str(agent / "skills" / "mine" / "SKILL.md"),
            "source": "auto",
            "scope": "user",
            "origin": "top-level",
            "baseDir": str(agent),
        },
        "once": {
            "path": str(extra / "once" / "SKILL.md"),
            "source": "local",
            "scope": "temporary",
            "origin": "top-level",
            "baseDir": str(extra / "once"),
        },
    }
    assert list(info) == ["listed", "team", "shared", "mine", "once"]
    as_json = [s.to_json() for s in loaded.skills]
    assert [Skill.from_json(d).to_json() for d in as_json] == as_json


def test_load_skills_from_dir_source_info_by_source(tmp_path: Path) -> None:
    skill(tmp_path, "a/SKILL.md", "description: a")
    for source, expected in (
        ("user", ("local", "user")),
        ("project", ("local", "project")),
        ("cli", ("cli", "temporary")),
    ):
        [loaded] = load_skills_from_dir(str(tmp_path), source).skills
        assert loaded.source_info is not None
        got = loaded.source_info
        assert (got.source, got.scope, got.base_dir) == (*expected, str(tmp_path / "a"))


def test_broken_frontmatter_is_one_line_naming_file_line_and_column(tmp_path: Path) -> None:
    path = skill(tmp_path, "broken/SKILL.md", "name: broken\ndescription: [oops")
    res = load_skills_from_dir(str(tmp_path), "user")
    assert res.skills == []
    [diagnostic] = res.diagnostics
    assert diagnostic.path == str(path)
    assert diagnostic.message == (
        "invalid YAML frontmatter at line 4, column 1: expected ',' or ']', but got '<stream end>'"
    )
    with pytest.raises(FrontmatterError, match=r"at line 3, column 1: found duplicate key"):
        parse_frontmatter("---\nname: a\nname: b\n---\n")


def test_where_a_skill_was_found_does_not_change_its_equality(tmp_path: Path) -> None:
    skill(tmp_path, "a/SKILL.md", "name: a\ndescription: does a")
    [user] = load_skills_from_dir(str(tmp_path), "user").skills
    [cli] = load_skills_from_dir(str(tmp_path), "cli").skills
    assert user.source_info != cli.source_info
    assert user == cli
    assert hash(user) == hash(cli)
    assert len({user, cli}) == 1
    assert user != Skill(user.name, "does b", user.file_path, user.base_dir)
