"""Prompt templates: Markdown files that become ``/name`` commands.

Where they come from, first found wins a name (a later file of the same name is reported as a
``collision`` diagnostic and not loaded):

1. the ``prompts`` entries of the project's then the user's ``settings.json`` (a file, or a
   directory searched recursively for ``.md`` files, skipping dot entries, ``node_modules`` and
   what ``.gitignore``/``.ignore``/``.fdignore`` exclude); entries starting with ``!``, ``+``
   or ``-`` are patterns, not paths, and are not read;
2. ``.pi/prompts/`` of a trusted project, then ``<agentDir>/prompts/`` (direct ``.md``
   children only, dot files skipped);
3. explicit paths (``--prompt-template``): a file, or a directory's direct ``.md`` children;
   a path that does not exist is an ``error`` diagnostic.

``no_defaults`` (``--no-prompt-templates``) leaves out 1 and 2. The file name without ``.md``
is the command name; the frontmatter may give ``description`` (else the first non-empty body
line, cut to 60 characters with ``...``) and ``argument-hint``.

Expansion (:func:`expand_prompt_template`) splits the arguments with :func:`parse_command_args`
and fills the body's placeholders with :func:`substitute_args`; an argument's own ``$1`` is
never expanded again.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from msgspec import Struct

from pi_context.errors import FrontmatterError
from pi_context.resources.context_files import read_text_file
from pi_context.resources.frontmatter import parse_frontmatter
from pi_context.resources.paths import expand_home
from pi_context.resources.resource_patterns import (
    apply_patterns,
    enabled_by_overrides,
    is_pattern,
    settings_entries,
)
from pi_context.resources.skills import collect_skill_entries, expand_skill_command
from pi_context.resources.types import Diagnostic, Skill, SkillSourceInfo

__all__ = [
    "PromptTemplate",
    "expand_commands",
    "expand_prompt_template",
    "load_prompt_templates",
    "parse_command_args",
    "substitute_args",
]

_DESCRIPTION_CUT = 60
_PLACEHOLDER = re.compile(
    r"\$\{(\d+|ARGUMENTS|@):-([^}]*)\}|\$\{@:(\d+)(?::(\d+))?\}|\$(ARGUMENTS|@|\d+)"
)
_COMMAND = re.compile(r"/(\S+)(?:\s+(.*))?", re.DOTALL)


class PromptTemplate(Struct, frozen=True):
    """One loaded template: ``/name`` expands to ``content`` with the arguments filled in."""

    name: str
    description: str
    content: str
    file_path: str
    argument_hint: str | None = None
    source_info: SkillSourceInfo | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "description": self.description}
        if self.argument_hint is not None:
            out["argumentHint"] = self.argument_hint
        out["filePath"] = self.file_path
        if self.source_info is not None:
            out["sourceInfo"] = self.source_info.to_json()
        return out


# --------------------------------------------------------------------------- expansion


def parse_command_args(text: str) -> list[str]:
    """The arguments of ``text``, split as a shell would in the simple cases.

    Whitespace separates arguments. A ``"`` or ``'`` opens quoting only at the start of an
    argument (``doesn't`` stays one word with its apostrophe); inside quotes a backslash before
    the same quote character gives that character, other backslashes stay. ``""`` is an empty
    argument. A quote never closed is taken as a plain character and the rest is split again.
    """
    args: list[str] = []
    current: list[str] = []
    started = False
    quote: str | None = None
    quote_start = 0
    i = 0
    n = len(text)
    while i < n:
        char = text[i]
        if quote is not None:
            if char == "\\" and i + 1 < n and text[i + 1] == quote:
                current.append(quote)
                i += 1
            elif char == quote:
                quote = None
            else:
                current.append(char)
        elif char in "\"'" and not started:
            quote = char
            quote_start = i
            started = True
        elif char.isspace():
            if started:
                args.append("".join(current))
                current = []
                started = False
        else:
            current.append(char)
            started = True
        if quote is not None and i >= n - 1:
            # never closed: the quote is a plain character, and what follows is read again
            quote = None
            current = [text[quote_start]]
            i = quote_start
        i += 1
    if started:
        args.append("".join(current))
    return args


def substitute_args(content: str, args: Sequence[str]) -> str:
    """``content`` with its placeholders filled from ``args`` (one pass, left to right).

    ``$1``…: one argument (empty when missing); ``$@``/``$ARGUMENTS``: all, joined with
    spaces; ``${N:-default}``, ``${@:-default}``, ``${ARGUMENTS:-default}``: the default when
    the value is missing or empty; ``${@:N}``: from argument ``N`` on (0 counts as 1);
    ``${@:N:L}``: ``L`` arguments from ``N``.
    """
    joined = " ".join(args)

    def fill(match: re.Match[str]) -> str:
        target, default, start_text, length_text, simple = match.groups()
        if target is not None:
            value = joined if target in ("@", "ARGUMENTS") else _nth(args, int(target))
            return value if value else default
        if start_text is not None:
            start = max(int(start_text) - 1, 0)
            if length_text is not None:
                return " ".join(args[start : start + int(length_text)])
            return " ".join(args[start:])
        if simple in ("@", "ARGUMENTS"):
            return joined
        return _nth(args, int(simple))

    return _PLACEHOLDER.sub(fill, content)


def _nth(args: Sequence[str], number: int) -> str:
    """Argument ``number`` counted from 1; ``$0`` and a missing one are empty."""
    return args[number - 1] if 1 <= number <= len(args) else ""


def expand_prompt_template(text: str, templates: Iterable[PromptTemplate]) -> str:
    """``/name args`` → the template ``name`` filled with ``args``; other text unchanged."""
    if not text.startswith("/"):
        return text
    match = _COMMAND.fullmatch(text)
    if match is None:
        return text
    name, rest = match.group(1), match.group(2) or ""
    template = next((t for t in templates if t.name == name), None)
    if template is None:
        return text
    return substitute_args(template.content, parse_command_args(rest))


def expand_commands(text: str, skills: Sequence[Skill], templates: Iterable[PromptTemplate]) -> str:
    """A prompt as the session sends it: ``/skill:name`` expanded first, then ``/template``
    (pi's order, so a skill's text starting with ``/`` is never read as a template)."""
    return expand_prompt_template(expand_skill_command(text, skills), templates)


# --------------------------------------------------------------------------- loading


def load_template_file(
    path: str, source_info: SkillSourceInfo | None, diagnostics: list[Diagnostic]
) -> PromptTemplate | None:
    """One template, or ``None`` with a ``warning`` naming the file and the problem."""
    try:
        raw = read_text_file(path)
    except (OSError, ValueError) as exc:
        diagnostics.append(Diagnostic("warning", f"cannot read prompt template: {exc}", path))
        return None
    try:
        frontmatter, body = parse_frontmatter(raw)
    except FrontmatterError as exc:
        diagnostics.append(Diagnostic("warning", str(exc), path))
        return None
    name = os.path.basename(path).removesuffix(".md")
    description = frontmatter.get("description")
    if not isinstance(description, str) or not description:
        first = next((line for line in body.split("\n") if line.strip()), "")
        description = first[:_DESCRIPTION_CUT] + ("..." if len(first) > _DESCRIPTION_CUT else "")
    hint = frontmatter.get("argument-hint")
    return PromptTemplate(
        name=name,
        description=description,
        content=body,
        file_path=path,
        argument_hint=hint if isinstance(hint, str) and hint else None,
        source_info=source_info,
    )


def _is_file(path: str) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


def _direct_children(directory: str, *, skip_dot: bool) -> list[str]:
    """The ``.md`` files directly in ``directory`` (symlinks followed, broken ones skipped)."""
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return []
    return [
        os.path.join(directory, name)
        for name in names
        if name.endswith(".md")
        and not (skip_dot and name.startswith("."))
        and name != "node_modules"
        and _is_file(os.path.join(directory, name))
    ]


def _recursive(directory: str, diagnostics: list[Diagnostic]) -> list[str]:
    """Every ``.md`` file under ``directory`` (ignore files honoured, dot entries and
    ``node_modules`` skipped, symlinks followed)."""
    return collect_skill_entries(directory, "all", diagnostics)


def _info(path: str, source: str, scope: str, base_dir: str) -> SkillSourceInfo:
    return SkillSourceInfo(path, source, scope, base_dir=base_dir)


def load_prompt_templates(
    *,
    cwd: str,
    agent_dir: str,
    trusted: bool,
    settings: Mapping[str, Mapping[str, Any]] | None = None,
    paths: Sequence[str] = (),
    no_defaults: bool = False,
    package_files: Sequence[tuple[str, SkillSourceInfo]] = (),
) -> tuple[list[PromptTemplate], list[Diagnostic]]:
    """Every template in pi's order of precedence, and the problems found (see the module).

    ``settings`` maps ``"project"``/``"user"`` to that ``settings.json``'s data;
    ``package_files`` are the templates installed packages ship, ranked after the settings and
    folder ones and before the explicit paths (left out with ``no_defaults`` too).
    """
    diagnostics: list[Diagnostic] = []
    candidates: list[tuple[str, SkillSourceInfo]] = []
    project_base = os.path.join(cwd, ".pi")
    entries = {
        scope: settings_entries((settings or {}).get(scope, {}), "prompts")
        for scope in ("project", "user")
    }
    if not no_defaults:
        for scope, base in (("project", project_base), ("user", agent_dir)):
            files = []
            for entry in entries[scope]:
                if not entry.strip() or is_pattern(entry):
                    continue
                path = os.path.join(base, expand_home(entry.strip()))
                if os.path.isdir(path):
                    files += _recursive(path, diagnostics)
                elif _is_file(path):
                    files.append(path)
            kept = apply_patterns(files, [e for e in entries[scope] if is_pattern(e)], base)
            candidates += [(f, _info(f, "local", scope, base)) for f in files if f in kept]
        project_dir = os.path.join(project_base, "prompts")
        user_dir = os.path.join(agent_dir, "prompts")
        found = [(f, "project", project_base) for f in _direct_children(project_dir, skip_dot=True)]
        if not trusted:
            found = []
        found += [(f, "user", agent_dir) for f in _direct_children(user_dir, skip_dot=True)]
        candidates += [
            (f, _info(f, "auto", scope, base))
            for f, scope, base in found
            if enabled_by_overrides(f, entries[scope], base)
        ]
        candidates += package_files
    for raw in paths:
        path = os.path.join(cwd, expand_home(raw.strip()))
        if os.path.isdir(path):
            files = _direct_children(path, skip_dot=False)
            candidates += [(f, _info(f, "cli", "temporary", path)) for f in files]
        elif _is_file(path):
            if path.endswith(".md"):
                candidates.append((path, _info(path, "cli", "temporary", os.path.dirname(path))))
        else:
            diagnostics.append(
                Diagnostic("error", "Prompt template path does not exist", os.path.abspath(path))
            )
    seen_files: set[str] = set()
    by_name: dict[str, PromptTemplate] = {}
    for path, info in candidates:
        key = os.path.realpath(path)
        if key in seen_files:
            continue
        seen_files.add(key)
        template = load_template_file(os.path.abspath(path), info, diagnostics)
        if template is None:
            continue
        winner = by_name.get(template.name)
        if winner is not None:
            diagnostics.append(
                Diagnostic(
                    "collision",
                    f'name "/{template.name}" collision',
                    template.file_path,
                    collision={
                        "resourceType": "prompt",
                        "name": template.name,
                        "winnerPath": winner.file_path,
                        "loserPath": template.file_path,
                    },
                )
            )
            continue
        by_name[template.name] = template
    return list(by_name.values()), diagnostics
