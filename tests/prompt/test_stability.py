"""The prompt's bytes stay put unless an input they depend on changes (prompt-cache stability)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pi_context.prompt import (
    SystemPromptOptions,
    build_sections,
    replay_system_state,
    system_message_for_update,
)
from pi_context.prompt.assemble import options_from_resources
from pi_context.prompt.replay import diff_sections
from pi_context.resources import ContextFile, ResourceLoader, Skill

text = st.text(st.characters(blacklist_categories=["Cs"]), min_size=1, max_size=30)
names = st.from_regex(r"[a-z][a-z0-9-]{0,10}", fullmatch=True)
SNIPPETS = {"read": "Read", "bash": "Shell", "edit": "Edit", "write": "Write", "grep": "Grep"}


@st.composite
def option_sets(draw: st.DrawFn) -> SystemPromptOptions:
    files = draw(st.lists(st.tuples(text, text), max_size=3, unique_by=lambda t: t[0]))
    skills = draw(
        st.lists(st.tuples(names, text), min_size=1, max_size=3, unique_by=lambda t: t[0])
    )
    return SystemPromptOptions(
        cwd="/" + draw(names),
        selected_tools=tuple(draw(st.sampled_from([("read", "bash"), ("read", "edit", "write")]))),
        tool_snippets=SNIPPETS,
        tool_guidelines={"edit": [draw(text)]},
        append_system_prompt=draw(st.sampled_from(["", "extra"])),
        context_files=tuple(ContextFile("/" + p, c) for p, c in files),
        skills=tuple(Skill(n, d, f"/sk/{n}/SKILL.md", f"/sk/{n}") for n, d in skills),
    )


def _patch_keys(before: SystemPromptOptions, after: SystemPromptOptions) -> set[str]:
    return set(diff_sections(build_sections(before), build_sections(after)) or {})


@settings(max_examples=60, deadline=None)
@given(option_sets())
def test_same_inputs_same_bytes(options: SystemPromptOptions) -> None:
    again = SystemPromptOptions.from_json(options.to_json())
    assert build_sections(options) == build_sections(again)
    assert list(build_sections(options)) == list(build_sections(again))


@settings(max_examples=60, deadline=None)
@given(option_sets(), text)
def test_one_context_file_changes_only_project_context(
    options: SystemPromptOptions, new: str
) -> None:
    files = (*options.context_files, ContextFile("/zz-new", new))
    assert _patch_keys(options, options.evolve(context_files=files)) == {"project_context"}


@settings(max_examples=60, deadline=None)
@given(option_sets(), text)
def test_one_skill_changes_only_skills(options: SystemPromptOptions, desc: str) -> None:
    first = options.skills[0]
    changed = Skill(first.name, first.description + desc, first.file_path, first.base_dir)
    after = options.evolve(skills=(changed, *options.skills[1:]))
    assert _patch_keys(options, after) == {"skills"}


@settings(max_examples=60, deadline=None)
@given(option_sets(), names)
def test_cwd_changes_only_cwd(options: SystemPromptOptions, name: str) -> None:
    after = options.evolve(cwd=options.cwd + "/" + name)
    assert _patch_keys(options, after) == {"cwd"}


@settings(max_examples=60, deadline=None)
@given(option_sets())
def test_tool_set_changes_only_tool_dependent_sections(options: SystemPromptOptions) -> None:
    after = options.evolve(selected_tools=(*options.tools, "grep"))
    keys = _patch_keys(options, after)
    assert "tools" in keys
    assert keys <= {"tools", "rules", "skills"}
    # and the patch, replayed onto the old state, reproduces the new sections
    state = replay_system_state(
        [{"role": "system", "content": "", "sections": build_sections(options), "timestamp": 1}]
    )
    patch = diff_sections(state.sections, build_sections(after)) or {}
    replayed = replay_system_state(
        [
            {"role": "system", "content": "", "sections": build_sections(options), "timestamp": 1},
            {"role": "system", "content": "", "sections": patch, "timestamp": 2},
        ]
    )
    assert replayed.sections == build_sections(after)


def _project(root: Path) -> tuple[Path, Path]:
    agent = root / "agent"
    proj = root / "proj"
    (proj / ".git").mkdir(parents=True)
    (proj / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (proj / "AGENTS.md").write_text("Use uv.\n")
    skill = agent / "skills" / "lint"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: lint\ndescription: Lint code.\n---\nRun ruff.\n")
    return agent, proj


def test_reload_with_nothing_changed_writes_no_system_message(tmp_path: Path) -> None:
    agent, proj = _project(tmp_path)
    tools = [{"name": "read", "description": "read", "parameters": {"type": "object"}}]

    def sections() -> dict[str, str]:
        res = ResourceLoader(proj, agent_dir=agent, home=tmp_path / "home").load()
        return build_sections(options_from_resources(res, tool_snippets={"read": "Read"}))

    transcript: list[Mapping[str, Any]] = []
    first = system_message_for_update(transcript, sections(), tools, timestamp=1)
    assert first is not None
    assert "project_context" in first.get("sections", {})
    transcript += [first, {"role": "user", "content": "hi", "timestamp": 2}]
    # /reload: everything re-read from disk, nothing changed -> nothing to write
    assert system_message_for_update(transcript, sections(), tools) is None
    # one context file edited -> the patch carries exactly that section
    (proj / "AGENTS.md").write_text("Use uv and ruff.\n")
    patch = system_message_for_update(transcript, sections(), tools, timestamp=3)
    assert patch is not None
    assert list(patch["sections"]) == ["project_context"]
    assert "toolsAdded" not in patch


section_maps = st.dictionaries(names, text, max_size=6)


@settings(max_examples=100, deadline=None)
@given(section_maps, section_maps)
def test_patch_replayed_onto_previous_gives_current(
    previous: dict[str, str], current: dict[str, str]
) -> None:
    patch = diff_sections(previous, current)
    messages = [{"role": "system", "content": "", "sections": previous, "timestamp": 1}]
    if patch is not None:
        assert set(patch) == {k for k in previous | current if previous.get(k) != current.get(k)}
        messages.append({"role": "system", "content": "", "sections": patch, "timestamp": 2})
    replayed = replay_system_state(messages).sections
    assert replayed == current
    assert diff_sections(replayed, current) is None
