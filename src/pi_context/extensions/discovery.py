"""Where extensions are found, without loading any.

:func:`~pi_context.extensions.loader.load_extensions` imports what it finds; this module only
looks, so that an agent can tell cheaply whether there is anything to load. With nothing to
load the agent runs without an extension runner, and the hook API, its payload classes and
the runner are never imported (a tenth of ``pictx -p``'s start-up).
"""

from __future__ import annotations

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
    if entry_points:
        import importlib.metadata

        return bool(importlib.metadata.entry_points(group=ENTRY_POINT_GROUP))
    return False
