from __future__ import annotations

import pytest

from pi_context.errors import PromptError
from pi_context.prompt import (
    DEFAULT_WORDING,
    SystemPromptOptions,
    build_sections,
    build_system_prompt,
    format_skills_for_prompt,
)
from pi_context.prompt.sections import (
    build_rules,
    build_system_prompt_state,
    escape_xml,
    render_prompt,
)
from pi_context.resources import ContextFile, Skill

SNIPPETS = {"read": "Read files", "bash": "Run commands", "edit": "Edit files", "grep": "Search"}
SKILL = Skill("pdf", "Work with <PDF> & 'docs'", "/s/pdf/SKILL.md", "/s/pdf")
HIDDEN_SKILL = Skill("manual", "Only by hand", "/s/manual/SKILL.md", "/s/manual", True)


def opts(**kw: object) -> SystemPromptOptions:
    base: dict[str, object] = {"cwd": "/home/u/proj", "tool_snippets": SNIPPETS}
    base.update(kw)
    return SystemPromptOptions(**base)  # type: ignore[arg-type]


def test_default_order_and_wrapping() -> None:
    s = build_sections(
        opts(
            append_system_prompt="EXTRA",
            context_files=(ContextFile("/p/AGENTS.md", "Use pnpm.\n"),),
            skills=(SKILL,),
            sections={"team": "Notes"},
        )
    )
    assert list(s) == [
        "preamble",
        "tools",
        "rules",
        "docs",
        "addendum",
        "project_context",
        "skills",
        "cwd",
        "team",
    ]
    assert s["preamble"] == DEFAULT_WORDING.preamble
    assert "pi-context" in s["preamble"]
    assert s["tools"] == (
        "<tools>\n- read: Read files\n- bash: Run commands\n- edit: Edit files\n\n"
        "Additional tools may be available.\n</tools>"
    )
    assert s["addendum"] == "<addendum>\nEXTRA\n</addendum>"
    assert s["project_context"] == (
        "<project_context>\nProject-specific instructions and guidelines:\n\n"
        '<project_instructions path="/p/AGENTS.md">\nUse pnpm.\n\n</project_instructions>\n'
        "</project_context>"
    )
    assert s["cwd"] == "<cwd>\n/home/u/proj\n</cwd>"
    assert s["team"] == "<team>\nNotes\n</team>"


def test_custom_prompt_drops_tools_rules_docs() -> None:
    s = build_sections(opts(custom_prompt="You are X."))
    assert list(s) == ["preamble", "cwd"]
    assert s["preamble"] == "You are X."
    # an empty custom prompt is not a custom prompt
    assert "tools" in build_sections(opts(custom_prompt=""))


def test_custom_section_reusing_builtin_name_keeps_position() -> None:
    s = build_sections(opts(sections={"cwd": "elsewhere", "rules": "mine", "empty": ""}))
    assert list(s) == ["preamble", "tools", "rules", "docs", "cwd"]
    assert s["rules"] == "<rules>\nmine\n</rules>"
    # built-in name absent in this build is appended like any custom section
    s = build_sections(opts(custom_prompt="P", sections={"tools": "t"}))
    assert list(s) == ["preamble", "cwd", "tools"]


@pytest.mark.parametrize("name", ["preamble", "Bad", "1x", "a b", ""])
def test_invalid_section_names(name: str) -> None:
    with pytest.raises(PromptError, match="Invalid system prompt section name"):
        build_sections(opts(sections={name: "x"}))


def test_hidden_tools_leave_prompt_and_rules() -> None:
    s = build_sections(opts(hidden_tools=("bash",), tool_guidelines={"bash": ["Bash rule"]}))
    assert "- bash:" not in s["tools"]
    assert "Bash rule" not in s["rules"]
    assert DEFAULT_WORDING.rule_shell_bash not in s["rules"]


def test_skills_reader_choice() -> None:
    read = build_sections(opts(skills=(SKILL,)))["skills"]
    assert DEFAULT_WORDING.skills_load_read in read
    bash = build_sections(opts(selected_tools=("bash",), skills=(SKILL,)))["skills"]
    assert DEFAULT_WORDING.skills_load_bash in bash
    indirect = build_sections(
        opts(selected_tools=("read", "x"), hidden_tools=("read",), skills=(SKILL,))
    )["skills"]
    assert DEFAULT_WORDING.skills_load_indirect in indirect
    none = build_sections(opts(selected_tools=("edit",), skills=(SKILL,)))
    assert "skills" not in none
    only_hidden = build_sections(opts(skills=(HIDDEN_SKILL,)))
    assert "skills" not in only_hidden


def test_skills_block_layout_and_escaping() -> None:
    text = format_skills_for_prompt([SKILL, HIDDEN_SKILL], "read")
    assert text.startswith("\n\n" + DEFAULT_WORDING.skills_intro + "\n")
    assert text.endswith(
        "<available_skills>\n  <skill>\n    <name>pdf</name>\n"
        "    <description>Work with &lt;PDF&gt; &amp; &apos;docs&apos;</description>\n"
        "    <location>/s/pdf/SKILL.md</location>\n  </skill>\n</available_skills>"
    )
    assert "manual" not in text
    assert escape_xml("&<>\"'") == "&amp;&lt;&gt;&quot;&apos;"


def test_rules_dedupe_and_shell_rule() -> None:
    w = DEFAULT_WORDING
    rules = build_rules(
        ["bash", "edit"], {"edit": [f"  {w.rule_concise}  ", "Batch edits"], "bash": [""]}, ["X"]
    )
    assert rules.split("\n") == [
        f"- {w.rule_shell_bash}",
        f"- {w.rule_concise}",
        "- Batch edits",
        "- X",
        f"- {w.rule_paths}",
    ]
    assert w.rule_shell_bash not in build_rules(["bash", "grep"], {}, [])
    assert w.rule_shell_both in build_rules(["bash", "powershell"], {}, [])
    assert w.rule_shell_powershell in build_rules(["powershell"], {}, [])


def test_none_listed_when_no_snippets_and_windows_cwd() -> None:
    s = build_sections(SystemPromptOptions(cwd="C:\\Users\\me"))
    assert s["tools"].startswith("<tools>\n(none)\n\n")
    assert s["cwd"] == "<cwd>\nC:/Users/me\n</cwd>"


def test_forced_prompt_state_and_text() -> None:
    o = opts(force_system_prompt="FORCED")
    assert build_system_prompt_state(o) == {"content": "FORCED"}
    assert build_system_prompt(o) == "FORCED"
    assert build_system_prompt(opts(force_system_prompt="")) == ""
    plain = opts()
    assert build_system_prompt(plain) == "\n\n".join(build_sections(plain).values())


def test_render_prompt_skips_null_and_empty() -> None:
    assert render_prompt({"a": "A", "b": None, "c": ""}, content="C") == "C\n\nA"


def test_json_round_trip_of_options() -> None:
    o = opts(context_files=(ContextFile("/a", "b"),), skills=(SKILL,), hidden_tools=("bash",))
    back = SystemPromptOptions.from_json(o.to_json())
    assert build_sections(back) == build_sections(o)
    assert o.to_json()["selectedTools"] == ["read", "bash", "edit", "write"]
