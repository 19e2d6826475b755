"""Settings files: ``<agentDir>/settings.json`` merged with ``<cwd>/.pi/settings.json``.

The project file is read only for trusted projects. Objects merge recursively, anything else
(arrays, ``null``) in the project file replaces the global value; ``defaultTools`` made only of
``+name``/``-name`` entries extends the global list. Unlike pi, which falls back to ``{}`` and
carries on, a settings file that is not valid JSON (or not an object) raises
:class:`~pi_context.errors.SettingsError` naming the file: a silent default would quietly change
compaction or trust behaviour.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pi_context._json import js_stringify, loads
from pi_context.errors import SettingsError
from pi_context.resources.paths import agent_dir as default_agent_dir
from pi_context.resources.paths import project_config_dir

__all__ = [
    "DEFAULT_KEEP_RECENT_TOKENS",
    "DEFAULT_RESERVE_TOKENS",
    "CompactionConfig",
    "RetryConfig",
    "Settings",
    "compaction_settings_for",
    "deep_merge_settings",
    "load_settings",
    "load_settings_file",
    "migrate_settings",
    "read_config_text",
    "retry_settings_for",
]

DEFAULT_RESERVE_TOKENS = 16384
DEFAULT_KEEP_RECENT_TOKENS = 20000
_MAX_SAFE_INTEGER = 2**53 - 1

ProjectTrustDefault = Literal["ask", "always", "never"]


def _js_str(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        return "[object Object]"
    if isinstance(value, list):
        return ",".join("" if v is None else _js_str(v) for v in value)
    return js_stringify(value)


def migrate_settings(data: dict[str, Any]) -> dict[str, Any]:
    """pi's on-load migrations of old keys (applied to a copy)."""
    data = copy.deepcopy(data)
    if "queueMode" in data:
        mode = data.pop("queueMode")
        data.setdefault("steeringMode", mode)
    if isinstance(data.get("websockets"), bool) and "transport" not in data:
        data["transport"] = "websocket" if data.pop("websockets") else "sse"
    skills = data.get("skills")
    if isinstance(skills, Mapping):
        if "enableSkillCommands" in skills and "enableSkillCommands" not in data:
            data["enableSkillCommands"] = skills["enableSkillCommands"]
        custom = skills.get("customDirectories")
        if isinstance(custom, list) and custom:
            data["skills"] = list(custom)
        else:
            data.pop("skills")
    retry = data.get("retry")
    if isinstance(retry, dict) and "maxDelayMs" in retry:
        value = retry.pop("maxDelayMs")
        provider = retry.setdefault("provider", {})
        if isinstance(provider, dict):
            provider.setdefault("maxRetryDelayMs", value)
    return data


def read_config_text(path: str | Path) -> str | None:
    """A JSON config file's text without BOM; ``None`` when the file is missing or blank.

    Other read failures raise ``OSError``.
    """
    try:
        raw = Path(path).read_bytes()
    except FileNotFoundError:
        return None
    text = raw.decode("utf-8", errors="replace").lstrip("\ufeff")
    return text if text.strip() else None


def load_settings_file(path: str | Path) -> dict[str, Any]:
    """One settings file: missing or empty is ``{}``; anything but a JSON object is an error."""
    try:
        text = read_config_text(path)
    except OSError as exc:
        raise SettingsError(f"cannot read settings: {exc.strerror or exc}", path=path) from exc
    if text is None:
        return {}
    try:
        data = loads(text)
    except ValueError as exc:
        raise SettingsError(f"not valid JSON: {exc}", path=path) from exc
    if not isinstance(data, dict):
        raise SettingsError("settings must be a JSON object", path=path)
    return migrate_settings(data)


def deep_merge_settings(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """pi's ``deepMergeSettings``: objects merge recursively, the override wins otherwise."""
    out = dict(base)
    for key, value in override.items():
        current = out.get(key)
        if isinstance(value, Mapping) and isinstance(current, Mapping):
            out[key] = deep_merge_settings(current, value)
        elif (
            key == "defaultTools"
            and isinstance(value, list)
            and isinstance(current, list)
            and value
            and all(isinstance(v, str) and v.startswith(("+", "-")) for v in value)
        ):
            out[key] = [*current, *value]
        else:
            out[key] = value
    return out


@dataclass(frozen=True, slots=True)
class CompactionConfig:
    """pi's compaction settings for one model."""

    enabled: bool = True
    reserve_tokens: int = DEFAULT_RESERVE_TOKENS
    keep_recent_tokens: int = DEFAULT_KEEP_RECENT_TOKENS

    def to_json(self) -> dict[str, Any]:
        return {
            "enabled": self.enabled,
            "reserveTokens": self.reserve_tokens,
            "keepRecentTokens": self.keep_recent_tokens,
        }


@dataclass(frozen=True, slots=True)
class RetryConfig:
    """pi's ``retry`` settings."""

    enabled: bool = True
    max_retries: int = 3
    base_delay_ms: int = 2000
    max_agent_delay_ms: int = 60000


@dataclass(frozen=True, slots=True)
class Settings:
    """Global and project settings and their merged view (``data``)."""

    data: dict[str, Any] = field(default_factory=dict)
    global_data: dict[str, Any] = field(default_factory=dict)
    project_data: dict[str, Any] = field(default_factory=dict)
    global_path: str | None = None
    project_path: str | None = None

    def get(self, key: str, default: Any = None) -> Any:
        """A top-level merged value, ``default`` when absent or ``null``."""
        value = self.data.get(key)
        return default if value is None else value

    def compaction(
        self, provider: str | None = None, model_id: str | None = None
    ) -> CompactionConfig:
        return compaction_settings_for(self, provider, model_id)

    @property
    def retry(self) -> RetryConfig:
        return retry_settings_for(self)

    @property
    def default_project_trust(self) -> ProjectTrustDefault:
        """``defaultProjectTrust`` from the **global** file only (other values mean ``ask``)."""
        value = self.global_data.get("defaultProjectTrust")
        return value if value in ("always", "never") else "ask"

    @property
    def enable_skill_commands(self) -> bool:
        return self.data.get("enableSkillCommands") is not False

    @property
    def session_fsync(self) -> bool:
        """``sessionFsync`` (default ``true``): flush the session file to the disk at the end of
        each turn and at each compaction (``Session.fsync``); ``false`` leaves it to the OS."""
        return self.data.get("sessionFsync") is not False


def load_settings(
    agent_dir: str | os.PathLike[str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    *,
    trusted: bool = True,
) -> Settings:
    """Load and merge the settings files (the project file only when ``trusted``)."""
    agent = Path(agent_dir) if agent_dir is not None else default_agent_dir()
    global_path = agent / "settings.json"
    global_data = load_settings_file(global_path)
    project_data: dict[str, Any] = {}
    project_path = None
    if cwd is not None:
        project_path = project_config_dir(cwd) / "settings.json"
        if trusted:
            project_data = load_settings_file(project_path)
    return Settings(
        data=deep_merge_settings(global_data, project_data),
        global_data=global_data,
        project_data=project_data,
        global_path=str(global_path),
        project_path=str(project_path) if project_path is not None else None,
    )


def _data(settings: Settings | Mapping[str, Any] | None) -> Mapping[str, Any]:
    if settings is None:
        return {}
    return settings.data if isinstance(settings, Settings) else settings


def _safe_int(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return isinstance(value, int) and 0 <= value <= _MAX_SAFE_INTEGER


def _checked(value: Any, name: str) -> int | None:
    if value is None:
        return None
    if not _safe_int(value):
        raise SettingsError(
            f"Invalid {name} setting: {_js_str(value)}. Expected a non-negative safe integer."
        )
    return int(value)


def compaction_settings_for(
    settings: Settings | Mapping[str, Any] | None,
    provider: str | None = None,
    model_id: str | None = None,
) -> CompactionConfig:
    """pi's ``getCompactionSettings(model)``.

    ``reserveTokens`` and ``keepRecentTokens`` each resolve as ``modelOverrides["provider/id"]
    [field] ?? compaction[field] ?? default``; ``enabled`` is never per model. Invalid values
    raise :class:`SettingsError` with pi's message, even when an override would win.
    """
    section = _data(settings).get("compaction")
    if not isinstance(section, Mapping):
        section = {}
    key = f"{provider}/{model_id}" if provider is not None and model_id is not None else None
    entry: Mapping[str, Any] | None = None
    overrides = section.get("modelOverrides")
    if key is not None and isinstance(overrides, Mapping):
        raw = overrides.get(key)
        if raw is not None and not isinstance(raw, Mapping):
            raise SettingsError(
                f'Invalid compaction.modelOverrides["{key}"] setting: {_js_str(raw)}.'
                " Expected an object."
            )
        entry = raw
    values: dict[str, int] = {}
    for name, default in (
        ("reserveTokens", DEFAULT_RESERVE_TOKENS),
        ("keepRecentTokens", DEFAULT_KEEP_RECENT_TOKENS),
    ):
        ordinary = _checked(section.get(name), f"compaction.{name}")
        override = None
        if entry is not None:
            override = _checked(entry.get(name), f'compaction.modelOverrides["{key}"].{name}')
        values[name] = (
            override if override is not None else ordinary if ordinary is not None else default
        )
    enabled = section.get("enabled")
    return CompactionConfig(
        enabled=enabled is not False,
        reserve_tokens=values["reserveTokens"],
        keep_recent_tokens=values["keepRecentTokens"],
    )


def retry_settings_for(settings: Settings | Mapping[str, Any] | None) -> RetryConfig:
    """pi's ``retry.{enabled, maxRetries, baseDelayMs, maxAgentDelayMs}`` with defaults."""
    section = _data(settings).get("retry")
    if not isinstance(section, Mapping):
        section = {}
    max_retries = _checked(section.get("maxRetries"), "retry.maxRetries")
    base = _checked(section.get("baseDelayMs"), "retry.baseDelayMs")
    cap = _checked(section.get("maxAgentDelayMs"), "retry.maxAgentDelayMs")
    return RetryConfig(
        enabled=section.get("enabled") is not False,
        max_retries=3 if max_retries is None else max_retries,
        base_delay_ms=2000 if base is None else base,
        max_agent_delay_ms=60000 if cap is None else cap,
    )
