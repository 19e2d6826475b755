"""Skills: discovery, validation, collisions and ``/skill:name`` expansion (pi 1.6.0 rules).

A skill is a markdown file with a frontmatter ``description``: a directory's ``SKILL.md`` (the
directory is then a skill root and is not descended into), or a plain ``*.md`` file at the root
of a ``.pi``-style skills dir / below the root of an ``.agents/skills`` dir. Name and description
limits are warnings only; a skill without a description does not load. The first skill of a name
wins (a collision diagnostic names the loser); the same file reached twice (symlinks) loads once.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Literal

from msgspec import Struct, field

from pi_context._json import utf16_len
from pi_context.resources.context_files import read_error_reason, read_text_file
from pi_context.resources.frontmatter import FrontmatterError, parse_frontmatter, strip_frontmatter
from pi_context.resources.paths import expand_home
from pi_context.resources.types import Diagnostic, Skill, SkillSourceInfo

if TYPE_CHECKING:
    import pathspec

__all__ = [
    "MAX_DESCRIPTION_LENGTH",
    "MAX_NAME_LENGTH",
    "MAX_SKILL_FILE_BYTES",
    "ScanMode",
    "SkillsResult",
    "collect_skill_entries",
    "dedupe_skills",
    "expand_skill_command",
    "load_explicit_skill_path",
    "load_skill_from_file",
    "load_skills",
    "load_skills_from_dir",
    "skill_block",
    "source_info_for",
]

MAX_NAME_LENGTH = 64
MAX_DESCRIPTION_LENGTH = 1024
MAX_SKILL_FILE_BYTES = 1024 * 1024
_NAME_CHARS = re.compile(r"^[a-z0-9-]+$")
_IGNORE_FILES = (".gitignore", ".ignore", ".fdignore")

ScanMode = Literal["pi", "agents", "all"]
"""``pi``: ``SKILL.md`` folders and root ``.md`` files; ``agents``: ``SKILL.md`` folders and
``.md`` files below the root; ``all``: every ``.md`` file (prompt-template folders)."""
SourceInfoFactory = Callable[[str], SkillSourceInfo]


class SkillsResult(Struct):
    skills: list[Skill] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)

    def add_file(self, path: str, source_info: SourceInfoFactory) -> None:
        """Load one skill file into this result; its diagnostics come along."""
        skill, diagnostics = load_skill_from_file(path, source_info)
        self.diagnostics += diagnostics
        if skill is not None:
            self.skills.append(skill)


def _ignore_spec(rules: list[str]) -> pathspec.GitIgnoreSpec | None:
    """The ignore rules as one matcher, or ``None`` without rules (the matcher's library loads
    only when a skills directory has ignore files)."""
    if not rules:
        return None
    import pathspec

    return pathspec.GitIgnoreSpec.from_lines(rules)


def source_info_for(source: str, scope: str, base_dir: str | None = None) -> SourceInfoFactory:
    """A factory giving every skill the same source and scope; ``base_dir`` ``None`` means
    each skill file's own directory."""

    def make(path: str) -> SkillSourceInfo:
        base = base_dir if base_dir is not None else os.path.dirname(path)
        return SkillSourceInfo(path, source, scope, base_dir=base)

    return make


# --------------------------------------------------------------------------- scanning


def _prefix_pattern(pattern: str, prefix: str) -> str | None:
    line = pattern.rstrip("\n").rstrip("\r")
    if not line.strip() or line.lstrip().startswith("#"):
        return None
    negate = line.startswith("!")
    if negate:
        line = line[1:]
    if prefix:
        body = line.rstrip("/")
        if line.startswith("/") or "/" in body:
            line = prefix + line.lstrip("/")
        else:
            line = prefix + "**/" + line
    return ("!" if negate else "") + line


def _is_file(path: str) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


def collect_skill_entries(
    root: str, mode: ScanMode, diagnostics: list[Diagnostic] | None = None
) -> list[str]:
    """Skill file candidates under ``root`` in pi's order (sorted names, depth first).

    Honors ``.gitignore``/``.ignore``/``.fdignore`` (accumulated down the tree), skips dot
    entries and ``node_modules``, follows symlinks and reports a symlink loop once.
    """
    out: list[str] = []

    def walk(directory: str, rules: list[str], stack: frozenset[str]) -> None:
        rel_dir = os.path.relpath(directory, root)
        prefix = "" if rel_dir == "." else rel_dir.replace(os.sep, "/") + "/"
        rules = list(rules)
        for name in _IGNORE_FILES:
            path = os.path.join(directory, name)
            if _is_file(path):
                try:
                    text = read_text_file(path)
                except (OSError, ValueError):
                    continue
                for raw in text.split("\n"):
                    pat = _prefix_pattern(raw, prefix)
                    if pat is not None:
                        rules.append(pat)
        spec = _ignore_spec(rules)

        def ignored(rel: str) -> bool:
            return spec is not None and spec.match_file(rel)

        skill_md = os.path.join(directory, "SKILL.md")
        if mode != "all" and _is_file(skill_md) and not ignored(prefix + "SKILL.md"):
            out.append(skill_md)
            return
        try:
            names = sorted(os.listdir(directory))
        except OSError as exc:
            if diagnostics is not None and directory != root:
                diagnostics.append(
                    Diagnostic("warning", f"cannot list directory: {exc.strerror}", directory)
                )
            return
        for name in names:
            if name.startswith(".") or name == "node_modules":
                continue
            path = os.path.join(directory, name)
            try:
                st = os.stat(path)
            except OSError as exc:
                if diagnostics is not None and exc.errno == errno.ELOOP:
                    diagnostics.append(Diagnostic("warning", "symlink loop", path))
                continue
            rel = prefix + name
            if stat.S_ISDIR(st.st_mode):
                if ignored(rel + "/"):
                    continue
                real = os.path.realpath(path)
                if real in stack:
                    if diagnostics is not None:
                        diagnostics.append(Diagnostic("warning", "symlink loop", path))
                    continue
                walk(path, rules, stack | {real})
            elif stat.S_ISREG(st.st_mode) and name.endswith(".md"):
                if ignored(rel):
                    continue
                at_root = directory == root
                if (
                    mode == "all"
                    or (mode == "pi" and at_root)
                    or (mode == "agents" and not at_root)
                ):
                    out.append(path)

    if os.path.isdir(root):
        walk(root, [], frozenset({os.path.realpath(root)}))
    return out


# --------------------------------------------------------------------------- one file


def _name_problems(name: str) -> list[str]:
    problems = []
    length = utf16_len(name)
    if length > MAX_NAME_LENGTH:
        problems.append(f"name exceeds {MAX_NAME_LENGTH} characters ({length})")
    if not _NAME_CHARS.match(name):
        problems.append(
            "name contains invalid characters (must be lowercase a-z, 0-9, hyphens only)"
        )
    if name.startswith("-") or name.endswith("-"):
        problems.append("name must not start or end with a hyphen")
    if "--" in name:
        problems.append("name must not contain consecutive hyphens")
    return problems


def load_skill_from_file(
    path: str, source_info: SourceInfoFactory
) -> tuple[Skill | None, list[Diagnostic]]:
    """Load one skill file; warnings never block loading, a missing description does."""
    diagnostics: list[Diagnostic] = []
    declared = os.path.basename(path) == "SKILL.md"
    try:
        text = read_text_file(path, diagnostics, max_bytes=MAX_SKILL_FILE_BYTES, reject_binary=True)
    except (OSError, ValueError) as exc:
        reason = read_error_reason(exc)
        return None, [*diagnostics, Diagnostic("warning", f"cannot read skill: {reason}", path)]
    try:
        front, _body = parse_frontmatter(text)
    except FrontmatterError as exc:
        if declared:
            diagnostics.append(Diagnostic("warning", str(exc), path))
        return None, diagnostics
    description = front.get("description")
    has_description = isinstance(description, str) and description.strip() != ""
    if not declared and not has_description:
        return None, diagnostics
    if not has_description:
        diagnostics.append(Diagnostic("warning", "description is required", path))
    elif isinstance(description, str) and utf16_len(description) > MAX_DESCRIPTION_LENGTH:
        diagnostics.append(
            Diagnostic(
                "warning",
                f"description exceeds {MAX_DESCRIPTION_LENGTH} characters"
                f" ({utf16_len(description)})",
                path,
            )
        )
    raw_name = front.get("name")
    base_dir = os.path.dirname(path)
    name = raw_name if isinstance(raw_name, str) and raw_name else os.path.basename(base_dir)
    diagnostics += [Diagnostic("warning", p, path) for p in _name_problems(name)]
    if not has_description or not isinstance(description, str):
        return None, diagnostics
    skill = Skill(
        name=name,
        description=description,
        file_path=path,
        base_dir=base_dir,
        disable_model_invocation=front.get("disable-model-invocation") is True,
        source_info=source_info(path),
    )
    return skill, diagnostics


def load_skills_from_dir(
    directory: str,
    source: str,
    *,
    mode: ScanMode = "pi",
    source_info: SourceInfoFactory | None = None,
) -> SkillsResult:
    """Every skill file under ``directory`` (no de-duplication; pi's ``loadSkillsFromDir``)."""
    result = SkillsResult()
    if source_info is None:
        local = source in ("user", "project")
        source_info = source_info_for(
            "local" if local else source, source if local else "temporary"
        )
    for path in collect_skill_entries(os.path.abspath(directory), mode, result.diagnostics):
        result.add_file(path, source_info)
    return result


# --------------------------------------------------------------------------- many roots


def _canonical(path: str) -> str:
    try:
        return os.path.realpath(path, strict=True)
    except OSError:
        return os.path.abspath(path)


def dedupe_skills(skills: Iterable[Skill], diagnostics: list[Diagnostic]) -> list[Skill]:
    """First-wins by name with a collision diagnostic; the same real file loads once.

    Collision diagnostics are appended to ``diagnostics`` after everything already there.
    """
    accepted: list[Skill] = []
    by_name: dict[str, Skill] = {}
    real_paths: set[str] = set()
    collisions: list[Diagnostic] = []
    for skill in skills:
        real = _canonical(skill.file_path)
        if real in real_paths:
            continue
        winner = by_name.get(skill.name)
        if winner is not None:
            collisions.append(
                Diagnostic(
                    "collision",
                    f'name "{skill.name}" collision',
                    skill.file_path,
                    {
                        "resourceType": "skill",
                        "name": skill.name,
                        "winnerPath": winner.file_path,
                        "loserPath": skill.file_path,
                    },
                )
            )
            continue
        real_paths.add(real)
        by_name[skill.name] = skill
        accepted.append(skill)
    diagnostics += collisions
    return accepted


def _is_under(path: str, root: str) -> bool:
    root = root.rstrip(os.sep)
    return path == root or path.startswith(root + os.sep)


def load_explicit_skill_path(
    raw: str,
    cwd: str,
    source_info: SourceInfoFactory,
    result: SkillsResult,
) -> None:
    """One ``--skill``-style path (file or directory), resolved against ``cwd``."""
    path = os.path.abspath(os.path.join(cwd, expand_home(raw.strip())))
    if not os.path.exists(path):
        result.diagnostics.append(Diagnostic("warning", "skill path does not exist", path))
        return
    if os.path.isdir(path):
        files = collect_skill_entries(path, "pi", result.diagnostics)
    elif path.endswith(".md"):
        files = [path]
    else:
        result.diagnostics.append(Diagnostic("warning", "skill path is not a markdown file", path))
        return
    for file in files:
        result.add_file(file, source_info)


def load_skills(
    cwd: str | os.PathLike[str],
    agent_dir: str | os.PathLike[str],
    *,
    skill_paths: Sequence[str] = (),
    include_defaults: bool = True,
) -> SkillsResult:
    """pi's ``loadSkills``: user skills, project ``.pi/skills``, then explicit paths; deduped."""
    cwd_s = os.path.abspath(os.fspath(cwd))
    user_dir = os.path.join(os.path.abspath(os.fspath(agent_dir)), "skills")
    project_dir = os.path.join(cwd_s, ".pi", "skills")

    def info(path: str) -> SkillSourceInfo:
        if _is_under(path, user_dir):
            scope = "user"
        elif _is_under(path, project_dir):
            scope = "project"
        else:
            scope = "temporary"
        return SkillSourceInfo(path, "local", scope, base_dir=os.path.dirname(path))

    collected = SkillsResult()
    if include_defaults:
        for directory in (user_dir, project_dir):
            for path in collect_skill_entries(directory, "pi", collected.diagnostics):
                collected.add_file(path, info)
    for raw in skill_paths:
        load_explicit_skill_path(raw, cwd_s, info, collected)
    diagnostics = list(collected.diagnostics)
    skills = dedupe_skills(collected.skills, diagnostics)
    return SkillsResult(skills, diagnostics)


# --------------------------------------------------------------------------- /skill:name


def skill_block(skill: Skill, body: str) -> str:
    """The user-message block for an invoked skill (attribute values are not escaped)."""
    return (
        f'<skill name="{skill.name}" location="{skill.file_path}">\n'
        f"References are relative to {skill.base_dir}.\n\n{body}\n</skill>"
    )


def expand_skill_command(text: str, skills: Sequence[Skill]) -> str:
    """Expand ``/skill:name [args]`` to the skill's block (plus args); other text unchanged.

    Works for skills hidden from the model too. An unknown name, or a skill file that can no
    longer be read, leaves the text as typed.
    """
    if not text.startswith("/skill:"):
        return text
    rest = text[len("/skill:") :]
    name, sep, args = rest.partition(" ")
    args = args.strip() if sep else ""
    skill = next((s for s in skills if s.name == name), None)
    if skill is None:
        return text
    try:
        body = strip_frontmatter(read_text_file(skill.file_path)).strip()
    except (OSError, ValueError):
        return text
    block = skill_block(skill, body)
    return f"{block}\n\n{args}" if args else block
