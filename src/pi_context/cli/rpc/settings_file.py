"""Writing pi's global ``settings.json`` (RPC's mode and switch commands persist there)."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pi_context.errors import ResourceError

__all__ = ["set_global_setting"]


def set_global_setting(agent_dir: Path, key: Sequence[str], value: Any) -> None:
    """Set ``key`` (a path of nested keys) in ``<agent_dir>/settings.json``, keeping every
    other key; the file is replaced atomically. A file that is not a JSON object is left
    alone and reported."""
    path = agent_dir / "settings.json"
    data: dict[str, Any] = {}
    if path.is_file():
        try:
            loaded = json.loads(path.read_text(encoding="utf-8") or "{}")
        except (OSError, ValueError) as exc:
            raise ResourceError(f"{path}: cannot update settings: {exc}") from exc
        if not isinstance(loaded, dict):
            raise ResourceError(f"{path}: cannot update settings: not a JSON object")
        data = loaded
    node = data
    for part in key[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            child = {}
            node[part] = child
        node = child
    node[key[-1]] = value
    agent_dir.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".settings-", suffix=".json", dir=agent_dir)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(data, out, indent=2, ensure_ascii=False)
            out.write("\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
