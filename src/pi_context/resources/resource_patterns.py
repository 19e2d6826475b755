"""The pattern entries of the ``skills`` and ``prompts`` settings, as pi 1.6.0 applies them.

A settings array holds plain paths (resolved from the agent directory for the global file, from
the project's ``.pi`` for the project file) and patterns:

- ``!pattern``: a glob; the resources it matches are left out;
- ``+path``: an exact path; the resource is loaded even when a ``!pattern`` left it out;
- ``-path``: an exact path; the resource is left out, whatever else says;
- a plain entry holding ``*`` or ``?``: a glob that keeps only the matching files of the plain
  paths (it discovers nothing by itself).

A glob matches a file's path relative to the settings file's base directory, its name, or its
absolute path (for a skill's ``SKILL.md``, its directory's too); ``*`` and ``?`` stay within
one path segment, ``**`` crosses segments. An exact path matches the relative or the absolute
path (``./`` ignored). The override entries (``!``, ``+``, ``-``) also apply to the resources
found in the scope's conventional folders (``skills/``, ``prompts/``, ``.agents/skills``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any

from pi_context.resources.paths import expand_home

__all__ = [
    "apply_patterns",
    "enabled_by_overrides",
    "is_override",
    "is_pattern",
    "matches_exact",
    "matches_glob",
    "settings_entries",
]


def settings_entries(data: Mapping[str, Any], key: str) -> list[str]:
    """The string entries of a settings file's ``key`` array (``[]`` when it has none)."""
    value = data.get(key)
    return [e for e in value if isinstance(e, str)] if isinstance(value, list) else []


def is_override(entry: str) -> bool:
    """``!pattern``, ``+path`` or ``-path``."""
    return entry[:1] in ("!", "+", "-")


def is_pattern(entry: str) -> bool:
    """An override, or a plain entry holding a glob character."""
    return is_override(entry) or "*" in entry or "?" in entry


@lru_cache(maxsize=256)
def _glob(pattern: str) -> re.Pattern[str]:
    out: list[str] = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if pattern.startswith("**", i):
            i += 2
            if pattern.startswith("/", i):  # "**/" also matches no directory at all
                out.append("(?:.*/)?")
                i += 1
            else:
                out.append(".*")
            continue
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            end = pattern.find("]", i + 1)
            if end == -1:
                out.append(re.escape(char))
            else:
                body = pattern[i + 1 : end]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"[{body}]")
                i = end
        else:
            out.append(re.escape(char))
        i += 1
    return re.compile("".join(out) + r"\Z")


def _posix(path: str) -> str:
    return path.replace(os.sep, "/")


def _candidates(path: str, base_dir: str, *, names: bool) -> list[str]:
    """The forms a pattern is compared with (see the module docstring)."""
    forms = [_posix(os.path.relpath(path, base_dir)), _posix(path)]
    if names:
        forms.append(os.path.basename(path))
    if os.path.basename(path) == "SKILL.md":
        parent = os.path.dirname(path)
        forms += [_posix(os.path.relpath(parent, base_dir)), _posix(parent)]
        if names:
            forms.append(os.path.basename(parent))
    return forms


def matches_glob(path: str, patterns: Sequence[str], base_dir: str) -> bool:
    """Whether a glob of ``patterns`` matches ``path`` (its relative or absolute form, its name;
    a ``SKILL.md`` also by its folder)."""
    forms = _candidates(path, base_dir, names=True)
    return any(
        _glob(_posix(expand_home(p))).match(form) is not None for p in patterns for form in forms
    )


def matches_exact(path: str, patterns: Sequence[str], base_dir: str) -> bool:
    """Whether one of ``patterns`` names ``path`` exactly (relative or absolute)."""
    forms = _candidates(path, base_dir, names=False)
    for pattern in patterns:
        text = pattern[2:] if pattern.startswith(("./", ".\\")) else pattern
        if _posix(os.path.normpath(expand_home(text))) in forms:
            return True
    return False


def _split(patterns: Iterable[str]) -> tuple[list[str], list[str], list[str], list[str]]:
    includes: list[str] = []
    excludes: list[str] = []
    force_in: list[str] = []
    force_out: list[str] = []
    for entry in patterns:
        if entry.startswith("+"):
            force_in.append(entry[1:])
        elif entry.startswith("-"):
            force_out.append(entry[1:])
        elif entry.startswith("!"):
            excludes.append(entry[1:])
        else:
            includes.append(entry)
    return includes, excludes, force_in, force_out


def apply_patterns(paths: Sequence[str], patterns: Sequence[str], base_dir: str) -> set[str]:
    """Which of ``paths`` (the files of a settings array's plain paths) stay loaded:
    the glob entries keep their matches (all when there is none), ``!`` removes, ``+`` adds
    back, ``-`` removes last."""
    includes, excludes, force_in, force_out = _split(patterns)
    kept = [p for p in paths if not includes or matches_glob(p, includes, base_dir)]
    kept = [p for p in kept if not (excludes and matches_glob(p, excludes, base_dir))]
    chosen = set(kept)
    chosen.update(p for p in paths if force_in and matches_exact(p, force_in, base_dir))
    return {p for p in chosen if not (force_out and matches_exact(p, force_out, base_dir))}


def enabled_by_overrides(path: str, entries: Sequence[str], base_dir: str) -> bool:
    """Whether a resource found in a conventional folder stays loaded under a settings array's
    ``!``, ``+`` and ``-`` entries (other entries do not apply to it)."""
    _, excludes, force_in, force_out = _split(e for e in entries if is_override(e))
    enabled = not (excludes and matches_glob(path, excludes, base_dir))
    if force_in and matches_exact(path, force_in, base_dir):
        enabled = True
    if force_out and matches_exact(path, force_out, base_dir):
        enabled = False
    return enabled
