"""``mcp.json``: the MCP servers a session connects to, validated and merged as pi does.

Two files: the global ``<agentDir>/mcp.json`` and the project's ``<cwd>/.pi/mcp.json`` (only
the session's cwd, no ancestor walk), the latter read only when the project is trusted. The
global file is processed completely first. A project entry with a global entry's name
replaces it in place; a project entry without ``command``, ``url`` or ``type`` is an
*override* of the global entry (only ``enabled``, ``exposure`` and ``toolExposure``) and keeps
the global scope. Every problem is reported as ``<file>: <message>`` and rejects only its own
entry (a file that is not JSON, or not an object with an ``mcpServers`` object, is skipped as a
whole), so a broken entry never stops the agent or the other servers.

Unknown keys of an entry are kept unchecked; values of ``env``, ``headers`` and
``oauth.clientSecret`` are resolved at every connection attempt (:mod:`.values`), never here.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final, Literal

import orjson
from msgspec import Struct, field

from .entries import (
    EXPOSURE_ALIASES,
    EXPOSURES,
    NAME,
    normalized,
    positive_number,
    validate_entry,
)

__all__ = [
    "EXPOSURES",
    "McpConfig",
    "ServerConfig",
    "global_config_path",
    "load_mcp_config",
    "project_config_path",
    "validate_entry",
]

Exposure = Literal["codemode", "deferred", "direct", "hidden"]
_OVERRIDE_KEYS: Final = frozenset(("enabled", "exposure", "toolExposure"))
DEFAULT_TIMEOUT_SECONDS: Final = 60.0


def global_config_path(agent_dir: str | os.PathLike[str]) -> Path:
    return Path(agent_dir) / "mcp.json"


def project_config_path(cwd: str | os.PathLike[str]) -> Path:
    return Path(cwd) / ".pi" / "mcp.json"


class ServerConfig(Struct, frozen=True):
    """One server after validation and merging.

    ``raw`` is the entry as written (unknown keys kept); ``source`` the file it came from
    (for an override, the global file) and ``override`` the project file that overrode it.
    """

    name: str
    raw: Mapping[str, Any]
    scope: Literal["global", "project"]
    source: str
    override: str | None = None

    @property
    def transport(self) -> Literal["stdio", "http"]:
        url = self.raw.get("url")
        if isinstance(url, str) and self.raw.get("type") in (None, "http", "streamable-http"):
            return "http"
        return "stdio"

    @property
    def namespace(self) -> str:
        """``mcp__<name>`` with ``-`` made ``_``: the prefix of the server's tool names."""
        return "mcp__" + self.name.replace("-", "_")

    @property
    def enabled(self) -> bool:
        return self.raw.get("enabled", True) is not False

    @property
    def timeout(self) -> float:
        value: Any = self.raw.get("timeout")
        return float(value) if positive_number(value) else DEFAULT_TIMEOUT_SECONDS

    @property
    def description(self) -> str | None:
        value = self.raw.get("description")
        return value.strip() or None if isinstance(value, str) else None

    @property
    def exposure(self) -> str:
        """The server's exposure (``codemode`` when unset; the alias resolved)."""
        value = self.raw.get("exposure")
        if not isinstance(value, str):
            return "codemode"
        return EXPOSURE_ALIASES.get(value, value)

    @property
    def tool_exposure(self) -> dict[str, str]:
        value = self.raw.get("toolExposure")
        if not isinstance(value, Mapping):
            return {}
        return {str(k): EXPOSURE_ALIASES.get(str(v), str(v)) for k, v in value.items()}

    def exposure_for(self, tool: str) -> str:
        """A tool's exposure: its exact ``toolExposure`` key, else the first ``*`` pattern
        matching the whole (unsanitized) name in the object's order, else the server's."""
        table = self.tool_exposure
        if tool in table:
            return table[tool]
        for key, value in table.items():
            if "*" in key and _glob(key).fullmatch(tool):
                return value
        return self.exposure

    @property
    def configured_exposures(self) -> frozenset[str]:
        """The server's exposure and every ``toolExposure`` value."""
        return frozenset((self.exposure, *self.tool_exposure.values()))


class McpConfig(Struct):
    """The merged server list (file order, global first), ``autoEnableCodemode`` and the
    problems found (each ``<file>: <message>``)."""

    servers: list[ServerConfig] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    auto_enable_codemode: bool = True
    ignored_project_file: str | None = None
    """The project file left unread because the project is not trusted."""

    def server(self, name: str) -> ServerConfig | None:
        return next((s for s in self.servers if s.name == name), None)


def _glob(pattern: str) -> re.Pattern[str]:
    return re.compile(".*".join(re.escape(part) for part in pattern.split("*")), re.DOTALL)


def read_config_file(path: Path) -> tuple[dict[str, Any] | None, str | None]:
    """The file's top-level object (``None`` when missing) or the reason it is unusable."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        return None, f"{path}: {exc.strerror or exc}"
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        return None, f"{path}: {exc}"
    if not isinstance(value, dict) or (
        "mcpServers" in value and not isinstance(value["mcpServers"], dict)
    ):
        return None, f'{path}: expected an object with an "mcpServers" object'
    return value, None


def _merge_file(
    config: McpConfig, path: Path, data: Mapping[str, Any], *, project: bool
) -> bool | None:
    """Add one file's entries to ``config``; returns its ``autoEnableCodemode`` (if valid)."""
    auto: bool | None = None
    if "autoEnableCodemode" in data:
        if isinstance(data["autoEnableCodemode"], bool):
            auto = data["autoEnableCodemode"]
        else:
            config.errors.append(f"{path}: autoEnableCodemode must be a boolean")
    servers: Mapping[str, Any] = data.get("mcpServers") or {}
    file = str(path)
    for name, entry in servers.items():
        is_override = (
            project
            and isinstance(entry, Mapping)
            and NAME.match(name) is not None
            and not any(k in entry for k in ("command", "url", "type"))
        )
        if is_override:
            problem = _apply_override(config, file, name, entry)
            if problem is not None:
                config.errors.append(f"{file}: {problem}")
            continue
        problem = validate_entry(name, entry, project=project)
        if problem is None:
            key = name.replace("-", "_")
            clash = next(
                (
                    s
                    for s in config.servers
                    if s.name.replace("-", "_") == key
                    and not (project and s.name == name and s.scope == "global")
                ),
                None,
            )
            if clash is not None:
                problem = f'server "{name}" conflicts with "{clash.name}"'
        if problem is not None:
            config.errors.append(f"{file}: {problem}")
            continue
        server = ServerConfig(name, normalized(entry), "project" if project else "global", file)
        index = next((i for i, s in enumerate(config.servers) if s.name == name), None)
        if index is None:
            config.servers.append(server)
        else:
            config.servers[index] = server
    return auto


def _apply_override(
    config: McpConfig, file: str, name: str, entry: Mapping[str, Any]
) -> str | None:
    index = next(
        (i for i, s in enumerate(config.servers) if s.name == name and s.scope == "global"),
        None,
    )
    if index is None:
        return f'server "{name}" needs "command" or "url", or a global server to override'
    if any(k not in _OVERRIDE_KEYS for k in entry):
        return f'server "{name}": an override can only set enabled, exposure, toolExposure'
    base = config.servers[index]
    merged = {**base.raw, **entry}
    problem = validate_entry(name, merged, project=False)
    if problem is not None:
        return problem
    config.servers[index] = ServerConfig(name, merged, "global", base.source, override=file)
    return None


def load_mcp_config(
    agent_dir: str | os.PathLike[str], cwd: str | os.PathLike[str], *, trusted: bool
) -> McpConfig:
    """Both files merged (the project file only when ``trusted``)."""
    config = McpConfig()
    auto = True
    global_path = global_config_path(agent_dir)
    data, problem = read_config_file(global_path)
    if problem is not None:
        config.errors.append(problem)
    if data is not None:
        value = _merge_file(config, global_path, data, project=False)
        auto = value if value is not None else auto
    project_path = project_config_path(cwd)
    if not trusted:
        if project_path.is_file():
            config.ignored_project_file = str(project_path)
    else:
        data, problem = read_config_file(project_path)
        if problem is not None:
            config.errors.append(problem)
        if data is not None:
            value = _merge_file(config, project_path, data, project=True)
            auto = value if value is not None else auto
    config.auto_enable_codemode = auto
    return config


def servers_with_names(config: McpConfig, names: Sequence[str]) -> list[ServerConfig]:
    wanted = set(names)
    return [s for s in config.servers if s.name in wanted]
