"""Saving choices made in the pickers to the global ``<agentDir>/settings.json``.

Only the keys a picker owns are changed (``defaultProvider``/``defaultModel``,
``enabledModels``, ``defaultThinkingLevel``); every other key, known or not, is kept as it
was, in its order. The file is replaced atomically (a temporary file renamed over it), so an
interrupted save never leaves half a file. A settings file that is not a JSON object is not
overwritten: :class:`~pi_context.errors.SettingsError` names it and nothing is lost.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pi_context._json import loads
from pi_context.errors import SettingsError

__all__ = ["SETTINGS_FILE_NAME", "save_default_model", "update_global_settings"]

SETTINGS_FILE_NAME = "settings.json"


def save_default_model(agent_dir: Path, provider: str, model_id: str) -> dict[str, Any]:
    """``defaultProvider`` / ``defaultModel``; the model is also appended to a non-empty
    ``enabledModels`` that does not name it yet (as pi does), so it stays in the scope."""
    data = _load(agent_dir / SETTINGS_FILE_NAME)
    changes: dict[str, Any] = {"defaultProvider": provider, "defaultModel": model_id}
    enabled = data.get("enabledModels")
    key = f"{provider}/{model_id}"
    if isinstance(enabled, list) and enabled and key not in enabled:
        changes["enabledModels"] = [*enabled, key]
    return update_global_settings(agent_dir, changes)


def update_global_settings(agent_dir: Path, changes: Mapping[str, Any]) -> dict[str, Any]:
    """Set ``changes`` in ``<agent_dir>/settings.json`` (a ``None`` value removes the key);
    returns the settings as saved."""
    import tempfile  # only when a setting changes

    path = agent_dir / SETTINGS_FILE_NAME
    data = _load(path)
    for key, value in changes.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    agent_dir.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".settings-", dir=agent_dir)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return data


def _load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = {}
    if path.exists():
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise SettingsError(f"{path}: cannot read the settings to update them: {exc}") from exc
        if text.strip():
            try:
                value = loads(text)
            except ValueError as exc:
                raise SettingsError(
                    f"{path}: not valid JSON, so it was left unchanged: {exc}"
                ) from exc
            if not isinstance(value, dict):
                raise SettingsError(f"{path}: not a JSON object, so it was left unchanged")
            data = value
    return data
