from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from pi_context.cli.commands.prompt import (
    distrust_command,
    prompt_command,
    skills_command,
    trust_command,
)
from pi_context.resources import TrustStore


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    agent = tmp_path / "agent"
    proj = tmp_path / "proj"
    (agent / "skills" / "lint").mkdir(parents=True)
    (agent / "skills" / "lint" / "SKILL.md").write_text(
        "---\nname: lint\ndescription: Lint.\n---\n"
    )
    (agent / "skills" / "bad").mkdir()
    (agent / "skills" / "bad" / "SKILL.md").write_text("---\nname: [x\n---\n")
    proj.mkdir()
    (proj / "AGENTS.md").write_text("Use uv.\n")
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return agent, proj


def test_prompt_text_and_json(env: tuple[Path, Path]) -> None:
    _, proj = env
    runner = CliRunner()
    text = runner.invoke(prompt_command, ["--cwd", str(proj)])
    assert text.exit_code == 0, text.output
    data = json.loads(runner.invoke(prompt_command, ["--cwd", str(proj), "--json"]).output)
    assert list(data) == ["sections", "text", "contextFiles", "skills", "diagnostics", "trusted"]
    assert next(iter(data["sections"])) == "preamble"
    assert data["sections"]["cwd"] == f"<cwd>\n{proj}\n</cwd>"
    assert data["text"] == "\n\n".join(data["sections"].values())
    assert text.output.endswith(data["text"])
    assert {"path": str(proj / "AGENTS.md"), "content": "Use uv.\n"} in data["contextFiles"]
    assert data["skills"][0] == {
        "name": "lint",
        "description": "Lint.",
        "filePath": str(env[0] / "skills/lint/SKILL.md"),
        "disableModelInvocation": False,
    }
    assert any(d["path"].endswith("bad/SKILL.md") for d in data["diagnostics"])


def test_prompt_reports_broken_settings(env: tuple[Path, Path]) -> None:
    agent, proj = env
    (agent / "settings.json").write_text("{oops")
    result = CliRunner().invoke(prompt_command, ["--cwd", str(proj)])
    assert result.exit_code == 1
    assert str(agent / "settings.json") in result.output


def test_skills_listing(env: tuple[Path, Path]) -> None:
    _, proj = env
    result = CliRunner().invoke(skills_command, ["--cwd", str(proj)])
    assert result.exit_code == 0
    assert "lint" in result.output
    assert "bad/SKILL.md" in result.output
    data = json.loads(CliRunner().invoke(skills_command, ["--cwd", str(proj), "--json"]).output)
    assert [s["name"] for s in data["skills"]] == ["lint"]


def test_trust_and_distrust(env: tuple[Path, Path]) -> None:
    agent, proj = env
    runner = CliRunner()
    assert runner.invoke(trust_command, [str(proj)]).exit_code == 0
    assert TrustStore(agent / "trust.json").get(proj) is True
    assert runner.invoke(distrust_command, [str(proj)]).exit_code == 0
    assert TrustStore(agent / "trust.json").get(proj) is False
    assert runner.invoke(trust_command, [str(proj), "--forget"]).exit_code == 0
    assert TrustStore(agent / "trust.json").get(proj) is None


def test_untrusted_project_prompt_skips_project_system(env: tuple[Path, Path]) -> None:
    _, proj = env
    (proj / ".pi").mkdir()
    (proj / ".pi" / "SYSTEM.md").write_text("PROJECT PROMPT")
    runner = CliRunner()
    data = json.loads(runner.invoke(prompt_command, ["--cwd", str(proj), "--json"]).output)
    assert data["trusted"] is False
    assert "PROJECT PROMPT" not in data["text"]
    data = json.loads(
        runner.invoke(prompt_command, ["--cwd", str(proj), "--json", "--approve"]).output
    )
    assert data["sections"]["preamble"] == "PROJECT PROMPT"


def test_default_tools_setting_selects_the_tools_of_the_prompt(env: tuple[Path, Path]) -> None:
    agent, proj = env
    runner = CliRunner()
    before = runner.invoke(prompt_command, ["--cwd", str(proj)])
    assert "Run shell commands (bash)" in before.output
    (agent / "settings.json").write_text('{"defaultTools": ["-bash"]}')
    after = runner.invoke(prompt_command, ["--cwd", str(proj)])
    assert after.exit_code == 0, after.output
    assert "Run shell commands (bash)" not in after.output
    assert "Create a file or replace its whole content" in after.output


def test_a_missing_cwd_is_an_error_not_the_current_directory(env: tuple[Path, Path]) -> None:
    _, proj = env
    for command in (prompt_command, skills_command):
        result = CliRunner().invoke(command, ["--cwd", str(proj / "missing")])
        assert result.exit_code == 2
        assert "does not exist" in result.output


def test_skills_of_an_untrusted_project_says_what_was_left_out(env: tuple[Path, Path]) -> None:
    _, proj = env
    for name in ("deploy", "release"):
        (proj / ".pi" / "skills" / name).mkdir(parents=True)
        (proj / ".pi" / "skills" / name / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: {name}.\n---\n"
        )
    result = CliRunner().invoke(skills_command, ["--cwd", str(proj), "--no-approve"])
    assert result.exit_code == 0
    assert "2 project skills left out: this project is not trusted (`pictx trust`" in result.output
    assert "deploy" not in result.output
    trusted = CliRunner().invoke(skills_command, ["--cwd", str(proj), "--approve"])
    assert "deploy" in trusted.output
    assert "left out" not in trusted.output
    prompt = CliRunner().invoke(prompt_command, ["--cwd", str(proj), "--no-approve"])
    assert "2 project skills left out" in prompt.output


def test_the_short_trust_flags_work_as_in_the_agent_command(env: tuple[Path, Path]) -> None:
    """``-a`` / ``-na`` are ``--approve`` / ``--no-approve`` here too (pi's short forms, which
    ``pictx`` itself takes)."""
    _, proj = env
    (proj / ".pi" / "skills" / "deploy").mkdir(parents=True)
    (proj / ".pi" / "skills" / "deploy" / "SKILL.md").write_text(
        "---\nname: deploy\ndescription: deploy.\n---\n"
    )
    for command in (skills_command, prompt_command):
        trusted = CliRunner().invoke(command, ["--cwd", str(proj), "-a"])
        untrusted = CliRunner().invoke(command, ["--cwd", str(proj), "-na"])
        assert trusted.exit_code == untrusted.exit_code == 0, trusted.output + untrusted.output
        assert "deploy" in trusted.output
        assert "1 project skill left out" in untrusted.output
