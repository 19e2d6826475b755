"""Prompt templates: argument splitting and substitution (expected values are what pi 1.6.0's
own functions return for the same input), discovery, precedence and collisions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pi_context.resources import ResourceLoader
from pi_context.resources.prompt_templates import (
    PromptTemplate,
    expand_commands,
    expand_prompt_template,
    load_prompt_templates,
    parse_command_args,
    substitute_args,
)
from pi_context.resources.types import Skill


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a b  c", ["a", "b", "c"]),
        ('"API compatibility" x', ["API compatibility", "x"]),
        ("doesn't work", ["doesn't", "work"]),
        ('"the \\"fast\\" path"', ['the "fast" path']),
        ("'it\\'s' b", ["it's", "b"]),
        ('"" x', ["", "x"]),
        ('"unclosed a b', ['"unclosed', "a", "b"]),
        ('a\\b "c\\d"', ["a\\b", "c\\d"]),
        ('x"y z"', ['x"y', 'z"']),
        ("'a \"b\" c'", ['a "b" c']),
        ("  lead\ttab\nnl ", ["lead", "tab", "nl"]),
        ("", []),
    ],
)
def test_arguments_split_as_pi_splits_them(text: str, expected: list[str]) -> None:
    assert parse_command_args(text) == expected


TEMPLATE = (
    "1=$1 2=$2 all=$@ A=$ARGUMENTS d=${1:-def} D=${@:-none} s=${@:2} sl=${@:2:1} z=${@:0} "
    "$0 $10 ${ARGUMENTS:-x} $$1"
)


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ([], "1= 2= all= A= d=def D=none s= sl= z=   x $"),
        (["a"], "1=a 2= all=a A=a d=a D=a s= sl= z=a   a $a"),
        (["a", "b", "c"], "1=a 2=b all=a b c A=a b c d=a D=a b c s=b c sl=b z=a b c   a b c $a"),
        (["", "b"], "1= 2=b all= b A= b d=def D= b s=b sl=b z= b    b $"),
        # an argument's own placeholders are never expanded again
        (["$2", "x"], "1=$2 2=x all=$2 x A=$2 x d=$2 D=$2 x s=x sl=x z=$2 x   $2 x $$2"),
    ],
)
def test_every_placeholder_form_fills_as_in_pi(args: list[str], expected: str) -> None:
    assert substitute_args(TEMPLATE, args) == expected


REVIEW = PromptTemplate("review", "", "Review $1 then ${@:2}", "/x/review.md")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("/review", "Review  then "),
        ("/review x y z", "Review x then y z"),
        ("/review\tx", "Review x then "),
        ("/reviewx a", "/reviewx a"),
        ("review a", "review a"),
        ('/review\n"a b" c', "Review a b then c"),
        ("/", "/"),
    ],
)
def test_expansion_only_for_a_known_name(text: str, expected: str) -> None:
    assert expand_prompt_template(text, [REVIEW]) == expected


def test_a_skill_expands_first_and_its_text_is_not_read_as_a_template(tmp_path: Path) -> None:
    skill_file = tmp_path / "s" / "SKILL.md"
    skill_file.parent.mkdir()
    skill_file.write_text("---\nname: s\ndescription: d\n---\n/review this\n")
    skill = Skill("s", "d", str(skill_file), str(skill_file.parent))
    out = expand_commands("/skill:s", [skill], [REVIEW])
    assert "/review this" in out
    assert "Review" not in out
    assert expand_commands("/review a", [skill], [REVIEW]) == "Review a then "


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_description_hint_and_first_line(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    _write(
        agent / "prompts" / "review.md",
        '---\ndescription: Review staged changes\nargument-hint: "[focus]"\n---\nFocus on $1.\n',
    )
    long_line = "x" * 70
    _write(agent / "prompts" / "plain.md", f"\n\n{long_line}\nmore\n")
    _write(agent / "prompts" / "notes.txt", "not a template")
    _write(agent / "prompts" / ".hidden.md", "hidden")
    templates, diagnostics = load_prompt_templates(
        cwd=str(tmp_path), agent_dir=str(agent), trusted=False
    )
    by_name = {t.name: t for t in templates}
    assert sorted(by_name) == ["plain", "review"]
    assert by_name["review"].description == "Review staged changes"
    assert by_name["review"].argument_hint == "[focus]"
    assert by_name["review"].content == "Focus on $1."
    assert by_name["plain"].description == "x" * 60 + "..."
    assert by_name["plain"].argument_hint is None
    assert diagnostics == []


def test_project_templates_only_when_trusted_and_they_win(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    project = tmp_path / "project"
    user_file = _write(agent / "prompts" / "fix.md", "user fix")
    project_file = _write(project / ".pi" / "prompts" / "fix.md", "project fix")
    untrusted, _ = load_prompt_templates(cwd=str(project), agent_dir=str(agent), trusted=False)
    assert [(t.name, t.content) for t in untrusted] == [("fix", "user fix")]
    trusted, diagnostics = load_prompt_templates(
        cwd=str(project), agent_dir=str(agent), trusted=True
    )
    assert [(t.name, t.content) for t in trusted] == [("fix", "project fix")]
    assert trusted[0].source_info is not None
    assert trusted[0].source_info.scope == "project"
    (collision,) = diagnostics
    assert collision.type == "collision"
    assert collision.message == 'name "/fix" collision'
    assert collision.collision == {
        "resourceType": "prompt",
        "name": "fix",
        "winnerPath": str(project_file),
        "loserPath": str(user_file),
    }


def test_settings_paths_recurse_and_explicit_paths_come_last(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    _write(agent / "shared" / "deep" / "nested.md", "nested")
    _write(agent / "shared" / "top.md", "top")
    _write(agent / "shared" / "skip" / "ignored.md", "ignored")
    _write(agent / "shared" / ".gitignore", "skip/\n")
    _write(agent / "prompts" / "top.md", "auto top")
    extra = _write(tmp_path / "extra" / "top.md", "explicit top")
    _write(tmp_path / "extra" / "solo.md", "solo")
    settings = {"user": {"prompts": ["shared", "!pattern"]}}
    templates, diagnostics = load_prompt_templates(
        cwd=str(tmp_path),
        agent_dir=str(agent),
        trusted=True,
        settings=settings,
        paths=["extra", "missing-dir"],
    )
    assert {t.name: t.content for t in templates} == {
        "top": "top",
        "nested": "nested",
        "solo": "solo",
    }
    kinds = sorted((d.type, d.message) for d in diagnostics)
    assert kinds == [
        ("collision", 'name "/top" collision'),
        ("collision", 'name "/top" collision'),
        ("error", "Prompt template path does not exist"),
    ]
    assert any(d.path == str(extra) for d in diagnostics)


def test_no_defaults_keeps_only_explicit_paths(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    _write(agent / "prompts" / "auto.md", "auto")
    explicit = _write(tmp_path / "one.md", "one")
    templates, _ = load_prompt_templates(
        cwd=str(tmp_path),
        agent_dir=str(agent),
        trusted=True,
        paths=[str(explicit)],
        no_defaults=True,
    )
    assert [t.name for t in templates] == ["one"]


def test_a_bad_frontmatter_is_a_warning_naming_the_file(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    bad = _write(agent / "prompts" / "bad.md", "---\ndescription: [unclosed\n---\nbody\n")
    _write(agent / "prompts" / "good.md", "good")
    templates, diagnostics = load_prompt_templates(
        cwd=str(tmp_path), agent_dir=str(agent), trusted=False
    )
    assert [t.name for t in templates] == ["good"]
    (warning,) = diagnostics
    assert warning.type == "warning"
    assert warning.path == str(bad)
    assert "line" in warning.message


def test_resource_loader_loads_and_reloads_templates(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    project = tmp_path / "project"
    project.mkdir()
    _write(agent / "settings.json", json.dumps({}))
    loader = ResourceLoader(project, agent_dir=agent, home=tmp_path)
    assert loader.load().prompt_templates == []
    _write(agent / "prompts" / "hello.md", "Hello $1")
    assert [t.name for t in loader.reload().prompt_templates] == ["hello"]
    off = ResourceLoader(project, agent_dir=agent, home=tmp_path, no_prompt_templates=True)
    assert off.load().prompt_templates == []


def test_a_settings_folder_gives_every_markdown_file_even_beside_a_skill(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    _write(agent / "shared" / "kit" / "SKILL.md", "a skill file is a template here too")
    _write(agent / "shared" / "kit" / "helper.md", "helper")
    _write(agent / "shared" / "node_modules" / "dep.md", "never")
    templates, _ = load_prompt_templates(
        cwd=str(tmp_path),
        agent_dir=str(agent),
        trusted=False,
        settings={"user": {"prompts": ["shared"]}},
    )
    assert sorted(t.name for t in templates) == ["SKILL", "helper"]
