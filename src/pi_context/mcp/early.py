"""Stdio servers started by the command line before the rest of ``pictx`` loads.

A server written in Python or Node takes a second or more to start, and ``pictx -p`` spends a
good part of its own start-up importing itself before the session would start the server.
:func:`spawn_for_command_line` is the first thing an agent run does: it reads the global
``mcp.json`` and starts its enabled stdio servers at once. When the session starts its servers,
:func:`claim` hands it the process started for the same command, arguments, resolved
``env`` and directory; whatever is left unclaimed then (the run's configuration differed) is
stopped by :func:`release_unclaimed`, and at the latest when the interpreter exits.

It stays out of the way whenever the run's servers could differ from the global file's: with
``--no-mcp``, with a project ``.pi/mcp.json`` (its trust, overrides and replacements decide),
for a value read from a shell command (``!…``, whose command must not run twice), and for
anything but a ``-p`` / ``--mode`` run.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # not typing's: ``pictx --help`` imports this module, and no typing
if TYPE_CHECKING:
    import subprocess
    from collections.abc import Mapping, Sequence
    from typing import IO, Any

__all__ = ["claim", "release_unclaimed", "spawn_for_command_line"]

Key = tuple[str, tuple[str, ...], str, tuple[tuple[str, str], ...]]

_EARLY: dict[Key, tuple[subprocess.Popen[bytes], IO[bytes]]] = {}

_AGENT_RUN_FLAGS = frozenset({"-p", "--print", "--mode"})
_NOT_NOW = frozenset({"--no-mcp", "-h", "--help", "-v", "--version"})


def key(command: str, args: Sequence[str], cwd: str, env: Mapping[str, str]) -> Key:
    """What makes two starts of a server the same."""
    return (command, tuple(args), cwd, tuple(sorted(env.items())))


def spawn_for_command_line(argv: Sequence[str], cwd: str | None = None) -> None:
    """Start the global file's stdio servers now when ``argv`` is an agent run with MCP on;
    never raises (a problem is the session's to report, later)."""
    if not argv or not argv[0].startswith("-"):
        return  # a subcommand, or an interactive prompt
    if _NOT_NOW & set(argv) or not _AGENT_RUN_FLAGS & set(argv):
        return
    import contextlib

    with contextlib.suppress(Exception):  # the session starts (and reports) them anyway
        _spawn_global_servers(cwd or os.getcwd())


def _spawn_global_servers(cwd: str) -> None:
    import tempfile
    from pathlib import Path

    from pi_context.resources.paths import agent_dir

    from .config import global_config_path, load_mcp_config, project_config_path

    agent = agent_dir()
    if not global_config_path(agent).is_file() or project_config_path(cwd).exists():
        return
    from .stdio import spawn
    from .values import resolve_values

    config = load_mcp_config(agent, cwd, trusted=False)
    for server in config.servers:
        raw = server.raw
        env: Mapping[str, Any] = raw.get("env") or {}
        if not server.enabled or server.transport != "stdio":
            continue
        if any(str(v).startswith("!") for v in env.values()):
            continue
        resolved = resolve_values(env, f'MCP server "{server.name}" env')
        command = str(raw["command"])
        args = [str(a) for a in raw.get("args") or []]
        where = str(Path(cwd) / str(raw.get("cwd") or "."))
        stderr = tempfile.TemporaryFile()  # noqa: SIM115 - handed over with the process
        try:
            proc = spawn(command, args, env={**os.environ, **resolved}, cwd=where, stderr=stderr)
        except OSError:
            stderr.close()
            continue  # the session's own attempt reports it
        _EARLY[key(command, args, where, resolved)] = (proc, stderr)


def claim(k: Key) -> tuple[subprocess.Popen[bytes], IO[bytes]] | None:
    """The process started early for this server, if any (and still running)."""
    return _EARLY.pop(k, None)  # one that exited already fails as a fresh start would


def release_unclaimed() -> None:
    """Stop the early servers no session asked for (without waiting for them)."""
    if not _EARLY:
        return
    from .stdio import leave_process

    for proc, stderr in _EARLY.values():
        leave_process(proc)
        stderr.close()
    _EARLY.clear()
