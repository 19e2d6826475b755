"""Building the system prompt as ordered, named sections (pi 1.6.0 layout).

The prompt is an ordered map ``name -> text``: a bare ``preamble``, then ``<tools>``, ``<rules>``,
``<docs>`` (all three absent under a custom prompt), ``<addendum>``, ``<project_context>``,
``<skills>``, ``<cwd>``, then custom sections. Each non-preamble section is wrapped as
``<name>\\n…\\n</name>``; the final text joins the non-empty sections with a blank line.
Keeping the prompt as sections is what lets later changes be sent as small patches while the
unchanged bytes, and so the provider's prompt cache, stay put.

The structure is protected from the text put inside it (pi 1.6.0 inserts it raw): in every
section body, each opening or closing tag of a section name or of the prompt's own inner
blocks (``project_instructions``, ``available_skills``), in any letter case, has its ``<``
written as ``&lt;`` (:func:`neutralize_tags`), and a context file's ``path`` attribute is
XML-escaped. A context file, ``SYSTEM.md``, an append file, a directory name or an extension's
section therefore cannot close its section or forge another; text without such tags keeps pi's
bytes exactly.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from pi_context._json import js_trim
from pi_context.errors import PromptError
from pi_context.prompt.wording import DEFAULT_WORDING, PromptWording
from pi_context.resources.types import ContextFile, Skill

__all__ = [
    "BUILTIN_SECTIONS",
    "DEFAULT_SELECTED_TOOLS",
    "SkillReader",
    "SystemPromptOptions",
    "build_rules",
    "build_sections",
    "build_system_prompt",
    "build_system_prompt_state",
    "escape_xml",
    "format_skills_for_prompt",
    "neutralize_tags",
    "render_project_context",
    "render_prompt",
    "skills_reader",
    "validate_section_name",
]

DEFAULT_SELECTED_TOOLS: tuple[str, ...] = ("read", "bash", "edit", "write")
BUILTIN_SECTIONS: tuple[str, ...] = (
    "preamble",
    "tools",
    "rules",
    "docs",
    "addendum",
    "project_context",
    "skills",
    "cwd",
)
INNER_TAGS: tuple[str, ...] = ("project_instructions", "available_skills")
"""Tags of the blocks the prompt nests inside its sections."""
_SECTION_NAME = re.compile(r"^[a-z][a-z0-9_-]*$")
_MORE_TOOLS = "Additional tools may be available."
_PROJECT_CONTEXT_HEAD = "Project-specific instructions and guidelines:"

SkillReader = Literal["read", "bash", "indirect"]


@dataclass(frozen=True, slots=True)
class SystemPromptOptions:
    """Everything that decides the system prompt (pi's ``BuildSystemPromptOptions``).

    ``selected_tools`` ``None`` means pi's default loadout ``read, bash, edit, write``.
    ``custom_prompt`` replaces the preamble and drops tools/rules/docs when non-empty;
    ``force_system_prompt`` replaces the whole text at request time only (never stored).
    """

    cwd: str
    custom_prompt: str | None = None
    force_system_prompt: str | None = None
    selected_tools: tuple[str, ...] | None = None
    hidden_tools: tuple[str, ...] = ()
    tool_snippets: Mapping[str, str] = field(default_factory=dict)
    tool_guidelines: Mapping[str, Sequence[str]] = field(default_factory=dict)
    prompt_guidelines: tuple[str, ...] = ()
    append_system_prompt: str = ""
    sections: Mapping[str, str] = field(default_factory=dict)
    context_files: tuple[ContextFile, ...] = ()
    skills: tuple[Skill, ...] = ()
    wording: PromptWording = field(default=DEFAULT_WORDING, compare=False)

    @property
    def tools(self) -> tuple[str, ...]:
        """The selected tools with pi's default applied."""
        return DEFAULT_SELECTED_TOOLS if self.selected_tools is None else self.selected_tools

    @property
    def declared_tools(self) -> tuple[str, ...]:
        """Selected tools whose declarations requests carry (hidden ones removed)."""
        hidden = set(self.hidden_tools)
        return tuple(name for name in self.tools if name not in hidden)

    def evolve(self, **changes: Any) -> SystemPromptOptions:
        """A copy with some fields replaced."""
        return replace(self, **changes)

    @classmethod
    def from_json(
        cls, data: Mapping[str, Any], *, wording: PromptWording = DEFAULT_WORDING
    ) -> SystemPromptOptions:
        """Options from pi's camelCase JSON form (as extensions and the goldens write them)."""
        selected = data.get("selectedTools")
        return cls(
            cwd=str(data.get("cwd", "")),
            custom_prompt=data.get("customPrompt"),
            force_system_prompt=data.get("forceSystemPrompt"),
            selected_tools=None if selected is None else tuple(selected),
            hidden_tools=tuple(data.get("hiddenTools") or ()),
            tool_snippets=dict(data.get("toolSnippets") or {}),
            tool_guidelines={k: list(v) for k, v in (data.get("toolGuidelines") or {}).items()},
            prompt_guidelines=tuple(data.get("promptGuidelines") or ()),
            append_system_prompt=str(data.get("appendSystemPrompt") or ""),
            sections=dict(data.get("sections") or {}),
            context_files=tuple(ContextFile.from_json(f) for f in data.get("contextFiles") or ()),
            skills=tuple(Skill.from_json(s) for s in data.get("skills") or ()),
            wording=wording,
        )

    def to_json(self) -> dict[str, Any]:
        """The normalized options in pi's JSON form (``normalizeBuildSystemPromptOptions``)."""
        out: dict[str, Any] = {}
        if self.custom_prompt is not None:
            out["customPrompt"] = self.custom_prompt
        if self.force_system_prompt is not None:
            out["forceSystemPrompt"] = self.force_system_prompt
        out.update(
            {
                "selectedTools": list(self.tools),
                "hiddenTools": list(self.hidden_tools),
                "toolSnippets": dict(self.tool_snippets),
                "toolGuidelines": {k: list(v) for k, v in self.tool_guidelines.items()},
                "promptGuidelines": list(self.prompt_guidelines),
                "appendSystemPrompt": self.append_system_prompt,
                "sections": dict(self.sections),
                "cwd": self.cwd,
                "contextFiles": [f.to_json() for f in self.context_files],
                "skills": [s.to_json() for s in self.skills],
            }
        )
        return out


def validate_section_name(name: str) -> None:
    """Raise :class:`PromptError` unless ``name`` is a valid custom section name."""
    if name == "preamble" or not _SECTION_NAME.match(name):
        raise PromptError(f"Invalid system prompt section name: {name}")


def escape_xml(text: str) -> str:
    """pi's five-character XML escaping (``&`` first)."""
    return (
        text.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("'", "&apos;")
    )


def _escape_attribute(text: str) -> str:
    """A double-quoted XML attribute value (``'`` needs no escape there; pi's bytes otherwise)."""
    return (
        text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
    )


def _tag_pattern(names: Iterable[str]) -> re.Pattern[str]:
    alternatives = "|".join(re.escape(n) for n in sorted(set(names), key=len, reverse=True))
    return re.compile(rf"<(?=\s*/?\s*(?:{alternatives})(?![a-z0-9_-]))", re.IGNORECASE)


_BUILTIN_TAGS = _tag_pattern([*BUILTIN_SECTIONS[1:], *INNER_TAGS])


def neutralize_tags(text: str, extra_names: Iterable[str] = ()) -> str:
    """``text`` with every structural tag made inert: the ``<`` of an opening or closing tag
    named after a built-in section, an inner block or one of ``extra_names`` (any case,
    whitespace or attributes allowed) becomes ``&lt;``. Other text is returned unchanged."""
    if "<" not in text:
        return text
    extra = [n for n in extra_names if n not in BUILTIN_SECTIONS]
    pattern = _tag_pattern([*BUILTIN_SECTIONS[1:], *INNER_TAGS, *extra]) if extra else _BUILTIN_TAGS
    return pattern.sub("&lt;", text)


def build_rules(
    tools: Sequence[str],
    tool_guidelines: Mapping[str, Sequence[str]],
    prompt_guidelines: Iterable[str],
    wording: PromptWording = DEFAULT_WORDING,
) -> str:
    """The ``rules`` body: shell rule, tool guidelines, extra guidelines, two closing rules.

    Rules are trimmed and de-duplicated by text, first occurrence wins (so a guideline equal to
    a closing rule moves that rule earlier, as in pi).
    """
    rules: list[str] = []
    seen: set[str] = set()

    def add(rule: str) -> None:
        text = js_trim(rule)
        if text and text not in seen:
            seen.add(text)
            rules.append(text)

    has_bash = "bash" in tools
    has_ps = "powershell" in tools
    if (has_bash or has_ps) and not any(t in tools for t in ("grep", "find", "ls")):
        if has_bash and has_ps:
            add(wording.rule_shell_both)
        elif has_ps:
            add(wording.rule_shell_powershell)
        else:
            add(wording.rule_shell_bash)
    for name in tools:
        for guideline in tool_guidelines.get(name, ()):
            add(guideline)
    for guideline in prompt_guidelines:
        add(guideline)
    add(wording.rule_concise)
    add(wording.rule_paths)
    return "\n".join(f"- {rule}" for rule in rules)


def render_project_context(files: Sequence[ContextFile], tags: Iterable[str] = ()) -> str:
    """The ``project_context`` body: a heading, then one tagged block per file.

    The file's text is kept except for structural tags (:func:`neutralize_tags`, with ``tags``
    naming the prompt's custom sections); the path is an escaped attribute value.
    """
    names = tuple(tags)
    parts = [_PROJECT_CONTEXT_HEAD]
    for f in files:
        path = _escape_attribute(f.path)
        content = neutralize_tags(f.content, names)
        parts.append(f'<project_instructions path="{path}">\n{content}\n</project_instructions>')
    return "\n\n".join(parts)


def format_skills_for_prompt(
    skills: Sequence[Skill],
    reader: SkillReader | None = "read",
    wording: PromptWording = DEFAULT_WORDING,
) -> str:
    """The skills block (before trimming): ``""`` when no skill is visible to the model."""
    visible = [s for s in skills if not s.disable_model_invocation]
    if not visible:
        return ""
    if reader == "bash":
        hint = wording.skills_load_bash
    elif reader == "indirect":
        hint = wording.skills_load_indirect
    else:
        hint = wording.skills_load_read
    lines = ["\n\n" + wording.skills_intro, hint, wording.skills_paths, "", "<available_skills>"]
    for skill in visible:
        lines += [
            "  <skill>",
            f"    <name>{escape_xml(skill.name)}</name>",
            f"    <description>{escape_xml(skill.description)}</description>",
            f"    <location>{escape_xml(skill.file_path)}</location>",
            "  </skill>",
        ]
    lines.append("</available_skills>")
    return "\n".join(lines)


def skills_reader(selected: Sequence[str], declared: Sequence[str]) -> SkillReader | None:
    """Which tool the skills block tells the model to load skills with (``None``: no block)."""
    if "read" in declared:
        return "read"
    if "bash" in declared:
        return "bash"
    if "read" in selected or "bash" in selected:
        return "indirect"
    return None


def build_sections(options: SystemPromptOptions) -> dict[str, str]:
    """The ordered, wrapped sections for ``options`` (pi's ``buildSystemPromptSections``).

    Raises :class:`PromptError` for an invalid custom section name before building anything.
    """
    for name in options.sections:
        validate_section_name(name)
    custom_names = tuple(options.sections)
    wording = options.wording
    selected = options.tools
    declared = options.declared_tools
    raw: dict[str, str] = {}
    if options.custom_prompt:
        raw["preamble"] = options.custom_prompt
    else:
        raw["preamble"] = wording.preamble
        visible = [name for name in declared if options.tool_snippets.get(name)]
        listing = (
            "\n".join(f"- {name}: {options.tool_snippets[name]}" for name in visible)
            if visible
            else "(none)"
        )
        raw["tools"] = f"{listing}\n\n{_MORE_TOOLS}"
        raw["rules"] = build_rules(
            declared, options.tool_guidelines, options.prompt_guidelines, wording
        )
        raw["docs"] = wording.docs
    if options.append_system_prompt:
        raw["addendum"] = options.append_system_prompt
    if options.context_files:
        raw["project_context"] = render_project_context(options.context_files, custom_names)
    reader = skills_reader(selected, declared)
    if reader is not None and options.skills:
        text = js_trim(format_skills_for_prompt(options.skills, reader, wording))
        if text:
            raw["skills"] = text
    raw["cwd"] = options.cwd.replace("\\", "/")
    # bodies built here with their own inner tags (their parts were made inert as they were put in)
    prepared = {"project_context", "skills"} & set(raw)
    for name, content in options.sections.items():
        if content:
            raw[name] = content
            prepared.discard(name)
    out: dict[str, str] = {}
    for name, content in raw.items():
        body = content if name in prepared else neutralize_tags(content, custom_names)
        out[name] = body if name == "preamble" else f"<{name}>\n{body}\n</{name}>"
    return out


def render_prompt(sections: Mapping[str, str | None], content: str = "") -> str:
    """The final text: ``content`` then every non-null section, empty parts dropped, joined by a
    blank line (pi's ``getSystemMessageText`` for a structured prompt)."""
    parts = [content, *(v for v in sections.values() if v is not None)]
    return "\n\n".join(p for p in parts if p)


def build_system_prompt_state(options: SystemPromptOptions) -> dict[str, Any]:
    """``{content, sections?}``: the forced text alone, or ``""`` plus the built sections."""
    if options.force_system_prompt is not None:
        return {"content": options.force_system_prompt}
    return {"content": "", "sections": build_sections(options)}


def build_system_prompt(options: SystemPromptOptions) -> str:
    """The text the model sees for ``options`` (forced prompt included)."""
    state = build_system_prompt_state(options)
    return render_prompt(state.get("sections") or {}, state["content"])
