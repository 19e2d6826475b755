"""Our wording of the summarization prompts (the structure follows pi; the sentences are ours).

Every standalone request is one user message built from the serialized transcript plus
instructions, sent with :data:`SUMMARY_SYSTEM_PROMPT`; a shared request (``compaction.shareCache``)
is the conversation's own request with :data:`SHARED_INSTRUCTIONS` as its last user message. The shapes (tags, headings, separators) are pi's, because
summaries are stored in session files pi also reads and later prompts embed earlier summaries.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "BRANCH_INSTRUCTIONS",
    "BRANCH_PREAMBLE",
    "INITIAL_INSTRUCTIONS",
    "NO_PRIOR_HISTORY",
    "SHARED_INSTRUCTIONS",
    "SHARED_SUMMARY_HEADING",
    "SPLIT_TURN_SEPARATOR",
    "SUMMARY_SYSTEM_PROMPT",
    "TURN_PREFIX_INSTRUCTIONS",
    "UPDATE_INSTRUCTIONS",
    "branch_prompt",
    "history_prompt",
    "shared_summary_prompt",
    "turn_prefix_prompt",
    "with_focus",
]

SUMMARY_SYSTEM_PROMPT: Final = (
    "You write checkpoint summaries of a user's working session with an AI coding agent. "
    "Read the transcript you are given and reply with a summary in exactly the structure the "
    "instructions ask for.\n\n"
    "Do not carry on the conversation and do not answer anything asked in it. Your whole "
    "reply is the summary."
)

_SECTIONS: Final = """## Goal
[What the user wants to achieve. List each task if there are several.]

## Constraints & Preferences
- [Requirements, conventions or preferences the user stated, or "(none)"]

## Progress
### Done
- [x] [Work that is finished]

### In Progress
- [ ] [Work that is under way]

### Blocked
- [What is stuck and why, if anything]

## Key Decisions
- **[Decision]**: [Why it was made]

## Next Steps
1. [What should happen next, in order]
"""

_CRITICAL: Final = """
## Critical Context
- [Data, examples or references the next model needs to continue, or "(none)"]
"""

_CLOSING: Final = (
    "Keep every section short. Copy file paths, function names and error messages exactly as "
    "they appear."
)

INITIAL_INSTRUCTIONS: Final = (
    "The transcript above is a working session that is about to be shortened. Write a "
    "checkpoint summary another model can use to carry on the work without the transcript.\n\n"
    "Use this structure exactly:\n\n" + _SECTIONS + _CRITICAL + "\n" + _CLOSING
)

UPDATE_INSTRUCTIONS: Final = (
    "The transcript above holds only what happened after the summary in <previous-summary> "
    "was written. Fold it into that summary and reply with the complete updated summary.\n\n"
    "- Keep everything from the existing summary that still matters.\n"
    "- Add the new progress, decisions and context.\n"
    "- Tick off work that is now finished by moving it from In Progress to Done.\n"
    "- Rewrite Next Steps for where the work stands now.\n"
    "- Leave out items that no longer matter.\n\n"
    "Use this structure exactly (keep earlier goals, constraints and decisions, and add new "
    "ones):\n\n" + _SECTIONS + _CRITICAL + "\n" + _CLOSING
)

TURN_PREFIX_INSTRUCTIONS: Final = (
    "The messages above are the beginning of a turn that is still going on; the rest of the "
    "turn is kept word for word and does not need to be reconstructed. Write a short "
    "checkpoint of what the user asked for and what these messages already did, to be placed "
    "before the rest of the turn.\n\n"
    "Use this structure:\n\n"
    "## Original Request\n[What the user asked for in this turn]\n\n"
    "## Progress So Far\n- [Decisions made and work done in these messages]\n\n"
    "## Context Needed to Continue\n- [What a reader needs to follow the rest of the turn]\n\n"
    "Only summarize what the messages show. Do not guess at what came later."
)

SHARED_SUMMARY_HEADING: Final = "## Checkpoint summary request"
"""The first line of a summary request sent as a continuation of the conversation."""

SHARED_INSTRUCTIONS: Final = (
    SHARED_SUMMARY_HEADING + "\n\n"
    "Pause the work here. Do not call any tool and do not answer or continue anything above: "
    "the conversation above is about to be shortened, and your whole reply is a checkpoint "
    "summary of it that another model can use to carry on the work without the "
    "conversation. If the conversation opens with an earlier checkpoint summary, fold it in: "
    "keep what still matters, move finished work to Done, add the new progress and decisions, "
    "and rewrite Next Steps for where the work stands now.\n\n"
    "Use this structure exactly:\n\n" + _SECTIONS + _CRITICAL + "\n" + _CLOSING
)

BRANCH_INSTRUCTIONS: Final = (
    "The transcript above is a branch of the conversation the user is leaving for now. Write "
    "a summary to keep as context in case the user comes back to this work.\n\n"
    "Use this structure exactly:\n\n" + _SECTIONS + "\n" + _CLOSING
)

BRANCH_PREAMBLE: Final = (
    "Before coming back here, the user explored another branch of this conversation.\n"
    "Here is what happened on that branch:\n\n"
)

NO_PRIOR_HISTORY: Final = "No prior history."
SPLIT_TURN_SEPARATOR: Final = "\n\n---\n\n**Turn Context (split turn):**\n\n"


def with_focus(instructions: str, custom_instructions: str | None) -> str:
    """Add the user's focus to a set of instructions (``Additional focus:`` as pi)."""
    if custom_instructions:
        return f"{instructions}\n\nAdditional focus: {custom_instructions}"
    return instructions


def history_prompt(
    serialized: str, previous_summary: str | None, custom_instructions: str | None = None
) -> str:
    """The initial or (with a previous summary) update request over ``serialized``."""
    text = f"<conversation>\n{serialized}\n</conversation>\n\n"
    if previous_summary is not None:
        text += f"<previous-summary>\n{previous_summary}\n</previous-summary>\n\n"
        return text + with_focus(UPDATE_INSTRUCTIONS, custom_instructions)
    return text + with_focus(INITIAL_INSTRUCTIONS, custom_instructions)


def shared_summary_prompt(custom_instructions: str | None = None) -> str:
    """The final user message of a summary request that continues the conversation."""
    return with_focus(SHARED_INSTRUCTIONS, custom_instructions)


def turn_prefix_prompt(serialized: str, custom_instructions: str | None = None) -> str:
    """The request for the first part of a split turn (``# Conversation``/``# Instructions``)."""
    return f"# Conversation\n{serialized}\n\n# Instructions\n" + with_focus(
        TURN_PREFIX_INSTRUCTIONS, custom_instructions
    )


def branch_prompt(
    serialized: str,
    custom_instructions: str | None = None,
    replace_instructions: bool = False,
) -> str:
    """The branch-summary request; ``replace_instructions`` uses the custom text alone."""
    if replace_instructions and custom_instructions:
        instructions = custom_instructions
    else:
        instructions = with_focus(BRANCH_INSTRUCTIONS, custom_instructions)
    return f"<conversation>\n{serialized}\n</conversation>\n\n{instructions}"
