"""The fixed sentences of the default system prompt.

pi-context writes its own preamble, closing rules, documentation pointers and skills hints
(they describe pi-context, not pi). Everything around them (section names, tags, bullet layout,
order, de-duplication) follows pi 1.6.0 exactly. The wording is a value, not a constant baked
into the builder, so a caller (or the conformance suite, with pi's own sentences) can swap it
while keeping every structural byte.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["DEFAULT_WORDING", "PromptWording", "default_docs_text"]


def _package_root() -> Path | None:
    """The source checkout holding pi-context's README/docs, when there is one."""
    here = Path(__file__).resolve()
    for parent in here.parents:
        if (parent / "pyproject.toml").is_file() and (parent / "docs").is_dir():
            return parent
    return None


def default_docs_text(root: Path | None = None) -> str:
    """The body of the ``docs`` section: where pi-context's own documentation lives.

    Points at the checkout's README and ``docs`` directory when they exist; otherwise it names
    the package so the model can ask instead of guessing.
    """
    root = root if root is not None else _package_root()
    lines = [
        "pi-context documentation (consult it only when the user asks about pi-context itself:"
        " its CLI, sessions, compaction, skills, settings or extensions):"
    ]
    if root is not None:
        lines += [
            f"- Overview: {(root / 'README.md').as_posix()}",
            f"- Design notes and compatibility with pi: {(root / 'docs').as_posix()}",
            "- Paths such as docs/... are relative to that checkout, not to the working directory",
        ]
    else:
        lines.append(
            "- Installed as the Python package pi_context (run `pictx --help` for the CLI)"
        )
    lines.append(
        "- Read the relevant notes completely before changing how pi-context itself behaves."
    )
    return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class PromptWording:
    """Every free-text sentence the default prompt contains (none of them is structural)."""

    preamble: str
    """The default first section when no custom prompt is set (two sentences, no newline)."""
    rule_shell_bash: str
    """File listing/search via the shell, when only ``bash`` is declared."""
    rule_shell_powershell: str
    rule_shell_both: str
    rule_concise: str
    rule_paths: str
    docs: str
    """Body of the ``docs`` section."""
    skills_intro: str
    skills_load_read: str
    skills_load_bash: str
    skills_load_indirect: str
    skills_paths: str


DEFAULT_WORDING = PromptWording(
    preamble=(
        "You are a coding agent working inside pi-context, a harness that gives you tools for a"
        " user's project. Help the user understand the code, run commands and make changes."
    ),
    rule_shell_bash="Use bash to list, search and locate files (for example ls, rg, find)",
    rule_shell_powershell="Use PowerShell to list, search and locate files",
    rule_shell_both="Use bash or PowerShell to list, search and locate files",
    rule_concise="Keep your answers short and to the point",
    rule_paths="Name file paths explicitly whenever you talk about files",
    docs=default_docs_text(),
    skills_intro="Each skill below holds focused instructions for one kind of task.",
    skills_load_read="When a task fits a skill's description, load the skill's file with the read tool.",
    skills_load_bash="When a task fits a skill's description, load the skill's file with bash.",
    skills_load_indirect="When a task fits a skill's description, load the skill's file.",
    skills_paths=(
        "Paths inside a skill are relative to its directory (the folder holding the skill file);"
        " pass absolute paths to tools."
    ),
)
