"""Where extensions are found, without loading any.

:func:`~pi_context.extensions.loader.load_extensions` imports what it finds; this module only
looks, so that an agent can tell cheaply whether there is anything to load. With nothing to
load the agent runs without an extension runner, and the hook API, its payload classes and
the runner are never imported (what that saves: benchmarks/README.md, "Start-up").
"""

from __future__ import annotations

import fnmatch
import importlib.machinery
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

__all__ = [
    "ENTRY_POINT_GROUP",
    "discover_extension_paths",
    "has_extensions_to_load",
    "settings_extension_paths",
]

ENTRY_POINT_GROUP: Final = "pi_context.extensions"


def discover_extension_paths(directory: Path) -> list[Path]:
    """Extension files and packages directly inside ``directory`` (sorted by name)."""
    if not directory.is_dir():
        return []
    found: list[Path] = []
    for child in sorted(directory.iterdir(), key=lambda p: p.name):
        if child.name.startswith(("_", ".")):
            continue
        if (child.is_file() and child.suffix == ".py") or (
            child.is_dir() and (child / "__init__.py").is_file()
        ):
            found.append(child)
    return found


def settings_extension_paths(
    files: Sequence[tuple[Mapping[str, Any], str | Path | None]],
) -> tuple[list[Path], list[str]]:
    """The extensions the settings' ``extensions`` lists name, and the problems found.

    ``files`` is ``(settings data, settings file)`` for the user file then the (trusted)
    project file. An entry is a file or a directory (a package, or a folder whose extensions
    are discovered as in ``<agentDir>/extensions``); relative entries resolve from the folder
    of the file that lists them, ``~`` is the home folder. ``-path`` drops one path listed
    before, ``!pattern`` drops the paths that match the glob, ``+path`` is a path.
    ``builtin:<name>`` entries (pi's bundled TypeScript extensions) name nothing here and are
    skipped. A listed path that does not exist is a problem naming the file."""
    found: list[Path] = []
    problems: list[str] = []
    for data, file in files:
        entries = data.get("extensions")
        if entries is None:
            continue
        where = str(file) if file is not None else "settings"
        if not isinstance(entries, list) or not all(isinstance(e, str) for e in entries):
            problems.append(f'{where}: "extensions" must be a list of paths')
            continue
        base = Path(file).parent if file is not None else Path.cwd()
        for entry in entries:
            bare = entry.lstrip("+-")
            if bare.startswith("builtin:") or not entry.strip():
                continue
            if entry.startswith("!"):
                pattern = entry[1:]
                found = [p for p in found if not _matches(p, pattern, base)]
                continue
            path = _resolve(bare, base)
            if entry.startswith("-"):
                found = [p for p in found if p != path]
                continue
            if path.is_dir() and not (path / "__init__.py").is_file():
                found.extend(discover_extension_paths(path))
            elif path.exists():
                found.append(path)
            else:
                problems.append(f"{where}: extension {entry!r} not found ({path})")
    return found, problems


def _resolve(entry: str, base: Path) -> Path:
    path = Path(os.path.expanduser(entry))
    return path if path.is_absolute() else base / path


def _matches(path: Path, pattern: str, base: Path) -> bool:
    full = str(_resolve(pattern, base))
    return fnmatch.fnmatch(str(path), full) or fnmatch.fnmatch(path.name, pattern)


def has_extensions_to_load(
    cwd: str | Path,
    agent_dir: str | Path | None,
    *,
    trusted: bool,
    entry_points: bool,
    settings_paths: Sequence[Path] = (),
) -> bool:
    """Whether discovery (as :func:`~pi_context.extensions.loader.load_extensions` does it with
    ``include_discovered=True``) would find any extension: in ``<agent_dir>/extensions``, in
    the project's ``.pi/extensions`` when ``trusted``, listed in the settings, or among the
    installed entry points."""
    if settings_paths:
        return True
    if agent_dir is not None and discover_extension_paths(Path(agent_dir) / "extensions"):
        return True
    if trusted and discover_extension_paths(Path(cwd) / ".pi" / "extensions"):
        return True
    if entry_points and _may_declare_entry_points(ENTRY_POINT_GROUP):
        import importlib.metadata

        return bool(importlib.metadata.entry_points(group=ENTRY_POINT_GROUP))
    return False


def _may_declare_entry_points(group: str) -> bool:
    """``False`` only when no installed distribution can declare entry points in ``group``.

    ``importlib.metadata.entry_points`` builds every distribution on ``sys.path`` and parses
    its metadata, on every agent start (benchmarks/README.md, "Start-up"). This looks at the raw
    ``entry_points.txt`` of each ``*.dist-info`` / ``*.egg-info`` directory for the group's
    header instead; a hit, or anything it cannot read that way (a zip or an ``.egg`` on the
    path, a finder of its own on ``sys.meta_path`` that lists distributions), is left to
    ``importlib.metadata`` to decide.
    """
    if any(
        hasattr(finder, "find_distributions") and finder is not importlib.machinery.PathFinder
        for finder in sys.meta_path
    ):
        return True
    header = f"[{group}]".encode()
    for entry in sys.path:
        folder = entry or "."
        if folder.lower().endswith(".egg") or not os.path.isdir(folder):
            if os.path.exists(folder):
                return True  # an egg, a zip archive or another importable file
            continue
        try:
            listing = os.scandir(folder)
        except OSError:
            continue
        with listing:
            for child in listing:
                name = child.name.lower()
                if name.endswith(".egg"):
                    return True
                if not name.endswith((".dist-info", ".egg-info")):
                    continue
                try:
                    with open(os.path.join(child.path, "entry_points.txt"), "rb") as file:
                        if header in file.read():
                            return True
                except OSError:
                    continue
    return False
