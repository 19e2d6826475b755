"""Where extensions are found, without loading any.

:func:`~pi_context.extensions.loader.load_extensions` imports what it finds; this module only
looks, so that an agent can tell cheaply whether there is anything to load. With nothing to
load the agent runs without an extension runner, and the hook API, its payload classes and
the runner are never imported (what that saves: benchmarks/README.md, "Start-up").
"""

from __future__ import annotations

import importlib.machinery
import os
import sys
from pathlib import Path
from typing import Final

__all__ = ["ENTRY_POINT_GROUP", "discover_extension_paths", "has_extensions_to_load"]

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


def has_extensions_to_load(
    cwd: str | Path, agent_dir: str | Path | None, *, trusted: bool, entry_points: bool
) -> bool:
    """Whether discovery (as :func:`~pi_context.extensions.loader.load_extensions` does it with
    ``include_discovered=True``) would find any extension: in ``<agent_dir>/extensions``, in
    the project's ``.pi/extensions`` when ``trusted``, or among the installed entry points."""
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
