"""Where pi keeps its configuration, so a pi user's files just work.

The agent dir is ``$PI_CODING_AGENT_DIR`` (a leading ``~`` expanded) or ``~/.pi/agent``; a
project's own configuration lives in ``<cwd>/.pi``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path

__all__ = [
    "AGENT_DIR_ENV",
    "CONFIG_DIR_NAME",
    "agent_dir",
    "ancestors",
    "expand_home",
    "find_git_root",
    "home_dir",
    "project_config_dir",
    "resolve_cwd",
]

AGENT_DIR_ENV = "PI_CODING_AGENT_DIR"
CONFIG_DIR_NAME = ".pi"


def home_dir() -> Path:
    """The user's home (``$HOME`` when set, as Node's ``os.homedir()`` does)."""
    home = os.environ.get("HOME")
    return Path(home) if home else Path.home()


def expand_home(path: str) -> str:
    """Expand a leading ``~`` (alone or followed by a separator) to the home directory."""
    if path == "~":
        return str(home_dir())
    if path.startswith(("~/", "~\\")):
        return str(home_dir() / path[2:])
    return path


def agent_dir(env: Mapping[str, str] | None = None) -> Path:
    """pi's global agent dir: ``$PI_CODING_AGENT_DIR`` or ``~/.pi/agent``.

    ``env`` replaces ``os.environ`` for the lookup of the variable.
    """
    configured = (os.environ if env is None else env).get(AGENT_DIR_ENV)
    if configured:
        return Path(os.path.abspath(expand_home(configured)))
    return home_dir() / CONFIG_DIR_NAME / "agent"


def resolve_cwd(cwd: str | os.PathLike[str] | None = None) -> Path:
    """An absolute working directory, normalized but not resolved through symlinks."""
    return Path(os.path.abspath(os.fspath(cwd) if cwd is not None else os.getcwd()))


def ancestors(path: str) -> Iterator[str]:
    """``path`` and then each parent up to the filesystem root (by string, no filesystem access)."""
    directory = path
    while True:
        yield directory
        parent = os.path.dirname(directory)
        if parent == directory:
            return
        directory = parent


def find_git_root(start: str) -> str | None:
    """The nearest ancestor of ``start`` (inclusive) containing a ``.git`` entry."""
    return next((d for d in ancestors(start) if os.path.lexists(os.path.join(d, ".git"))), None)


def project_config_dir(cwd: str | os.PathLike[str]) -> Path:
    """A project's own configuration directory: ``<cwd>/.pi``."""
    return resolve_cwd(cwd) / CONFIG_DIR_NAME
