"""Project trust, recorded where pi records it: ``<agentDir>/trust.json``.

The store maps canonical (realpath) directory paths to ``true``/``false`` (``null`` = no
decision); the nearest ancestor with a decision wins. It is written with sorted keys, two-space
indentation and a trailing newline, exactly as pi writes it, so pi and pi-context share one
set of decisions.

A project *needs* trust only when it has resources that could change what the agent does:
``.pi/{settings.json, mcp.json, extensions, skills, prompts, themes, SYSTEM.md,
APPEND_SYSTEM.md}`` or an ``.agents/skills`` directory in the cwd or any ancestor (except
``~/.agents/skills``). Untrusted projects still get their context files, but not those.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Literal

from msgspec import Struct

from pi_context._json import loads
from pi_context.errors import SettingsError
from pi_context.resources.paths import agent_dir as default_agent_dir
from pi_context.resources.paths import ancestors, home_dir
from pi_context.resources.settings import read_config_text

__all__ = [
    "TRUST_FILE_NAME",
    "TRUST_REQUIRING_ENTRIES",
    "TrustDecision",
    "TrustStore",
    "canonical_dir",
    "project_needs_trust",
    "resolve_project_trust",
]

TRUST_FILE_NAME = "trust.json"
TRUST_REQUIRING_ENTRIES: tuple[str, ...] = (
    "settings.json",
    "mcp.json",
    "extensions",
    "skills",
    "prompts",
    "themes",
    "SYSTEM.md",
    "APPEND_SYSTEM.md",
)


def canonical_dir(path: str | os.PathLike[str]) -> str:
    """The realpath of ``path`` (absolute path when it does not exist)."""
    return os.path.realpath(os.path.abspath(os.fspath(path)))


class TrustStore:
    """Saved trust decisions (``<agentDir>/trust.json``)."""

    def __init__(self, path: str | os.PathLike[str] | None = None):
        self.path = Path(path) if path is not None else default_agent_dir() / TRUST_FILE_NAME
        self._data: dict[str, bool | None] | None = None

    def _load(self) -> dict[str, bool | None]:
        if self._data is not None:
            return self._data
        try:
            text = read_config_text(self.path)
        except OSError as exc:
            raise SettingsError(f"Invalid trust store: {exc.strerror}", path=self.path) from exc
        if text is None:
            self._data = {}
            return self._data
        try:
            data = loads(text)
        except ValueError as exc:
            raise SettingsError(f"Invalid trust store: {exc}", path=self.path) from exc
        if not isinstance(data, dict) or not all(
            v is None or isinstance(v, bool) for v in data.values()
        ):
            raise SettingsError(
                "Invalid trust store: expected an object of true/false/null values",
                path=self.path,
            )
        self._data = dict(data)
        return self._data

    def lookup(self, cwd: str | os.PathLike[str]) -> tuple[str, bool] | None:
        """``(directory, decision)`` of the nearest saved decision for ``cwd`` or an ancestor."""
        data = self._load()
        for directory in ancestors(canonical_dir(cwd)):
            value = data.get(directory)
            if isinstance(value, bool):
                return directory, value
        return None

    def get(self, cwd: str | os.PathLike[str]) -> bool | None:
        found = self.lookup(cwd)
        return None if found is None else found[1]

    def set(self, directory: str | os.PathLike[str], value: bool | None) -> str:
        """Record (or with ``None`` forget) the decision for ``directory``; saves at once."""
        data = dict(self._load())
        key = canonical_dir(directory)
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
        self._save(data)
        return key

    def _save(self, data: dict[str, bool | None]) -> None:
        import tempfile  # only when a decision is saved

        self.path.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
        fd, tmp = tempfile.mkstemp(prefix=".trust-", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        self._data = data


def project_needs_trust(
    cwd: str | os.PathLike[str], home: str | os.PathLike[str] | None = None
) -> bool:
    """Whether ``cwd`` has any resource that only trusted projects may use."""
    cwd_s = os.path.abspath(os.fspath(cwd))
    pi_dir = os.path.join(cwd_s, ".pi")
    if any(os.path.exists(os.path.join(pi_dir, name)) for name in TRUST_REQUIRING_ENTRIES):
        return True
    home_agents = os.path.join(os.path.abspath(os.fspath(home or home_dir())), ".agents", "skills")
    candidates = (os.path.join(directory, ".agents", "skills") for directory in ancestors(cwd_s))
    return any(c != home_agents and os.path.isdir(c) for c in candidates)


TrustSource = Literal["override", "saved", "not-needed", "default"]


class TrustDecision(Struct, frozen=True):
    trusted: bool
    source: TrustSource
    directory: str | None = None
    """The directory whose saved decision applied (``source == "saved"``)."""


def resolve_project_trust(
    cwd: str | os.PathLike[str],
    store: TrustStore,
    *,
    override: bool | None = None,
    default: Literal["ask", "always", "never"] = "ask",
    home: str | os.PathLike[str] | None = None,
) -> TrustDecision:
    """pi's decision order for a non-interactive run.

    An explicit ``override`` (``--approve``/``--no-approve``) wins; then the nearest saved
    decision; a project without trust-requiring resources is trusted; otherwise
    ``defaultProjectTrust`` (``ask`` counts as no, as in pi's print and json modes).
    """
    if override is not None:
        return TrustDecision(override, "override")
    saved = store.lookup(cwd)
    if saved is not None:
        return TrustDecision(saved[1], "saved", saved[0])
    if not project_needs_trust(cwd, home):
        return TrustDecision(True, "not-needed")
    return TrustDecision(default == "always", "default")
