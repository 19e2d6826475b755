"""The summarization prompts: pi's structure (tags, headings, focus line) in our own words."""

from __future__ import annotations

import re

from pi_context.compaction.prompts import (
    BRANCH_PREAMBLE,
    SUMMARY_SYSTEM_PROMPT,
    branch_prompt,
    history_prompt,
    turn_prefix_prompt,
)

SECTIONS = [
    "## Goal",
    "## Constraints & Preferences",
    "## Progress",
    "### Done",
    "### In Progress",
    "### Blocked",
    "## Key Decisions",
    "## Next Steps",
]


def headings(prompt: str) -> list[str]:
    return re.findall(r"^#{1,3} .+$", prompt, re.MULTILINE)


def test_initial_and_update_prompts_ask_for_every_section_in_order() -> None:
    initial = history_prompt("[User]: hi", None)
    assert initial.startswith("<conversation>\n[User]: hi\n</conversation>\n\n")
    assert "<previous-summary>" not in initial
    assert headings(initial) == [*SECTIONS, "## Critical Context"]
    update = history_prompt("[User]: more", "## Goal\nold")
    assert "\n\n<previous-summary>\n## Goal\nold\n</previous-summary>\n\n" in update
    assert headings(update)[1:] == [*SECTIONS, "## Critical Context"]  # first: the old summary
    assert "- [x] " in initial
    assert "- [ ] " in initial
    assert "- **[Decision]**: " in initial


def test_turn_prefix_prompt_shape() -> None:
    prompt = turn_prefix_prompt("[User]: start", "the parser")
    assert prompt.startswith("# Conversation\n[User]: start\n\n# Instructions\n")
    assert headings(prompt)[2:] == [
        "## Original Request",
        "## Progress So Far",
        "## Context Needed to Continue",
    ]
    assert prompt.endswith("\n\nAdditional focus: the parser")


def test_branch_prompt_has_no_critical_context_and_can_be_replaced() -> None:
    prompt = branch_prompt("[User]: x", "tests")
    assert headings(prompt) == SECTIONS
    assert prompt.endswith("\n\nAdditional focus: tests")
    assert branch_prompt("[User]: x", "Only list files.", replace_instructions=True) == (
        "<conversation>\n[User]: x\n</conversation>\n\nOnly list files."
    )
    # replacing needs custom text; without it the standard instructions stay
    assert headings(branch_prompt("[User]: x", None, replace_instructions=True)) == SECTIONS
    assert BRANCH_PREAMBLE.endswith("\n\n")
    assert BRANCH_PREAMBLE.count("\n") == 3  # two lines, then a blank line


def test_system_prompt_forbids_continuing_the_conversation() -> None:
    assert "summar" in SUMMARY_SYSTEM_PROMPT
    assert "Do not carry on the conversation" in SUMMARY_SYSTEM_PROMPT
