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
    """Read the global file with the standard library alone and spawn its stdio servers: what
    :func:`~pi_context.mcp.config.load_mcp_config` would accept of it (the same checks, the
    same ``~`` expansion), without importing ``orjson``, ``msgspec`` or ``tempfile``, which
    the rest of ``pictx`` loads afterwards, while the servers start."""
    from pathlib import Path

    from pi_context.resources.paths import agent_dir

    if os.path.exists(os.path.join(cwd, ".pi", "mcp.json")):
        return  # the project's file may replace or override the global entries
    servers = _global_servers(os.path.join(agent_dir(), "mcp.json"))
    if not servers:
        return
    from .entries import NAME, normalized, validate_entry
    from .stdio import anonymous_file, spawn

    accepted: set[str] = set()
    for name, entry in servers.items():
        if not isinstance(name, str) or validate_entry(name, entry, project=False) is not None:
            continue
        if name.replace("-", "_") in accepted:
            continue  # a clash: the configuration rejects this entry
        accepted.add(name.replace("-", "_"))
        assert NAME.match(name) is not None
        raw = normalized(entry)
        env: Mapping[str, Any] = raw.get("env") or {}
        url = raw.get("url")
        if raw.get("enabled", True) is False or (
            isinstance(url, str) and raw.get("type") in (None, "http", "streamable-http")
        ):
            continue  # disabled, or not a stdio server
        if any(str(v).startswith("!") for v in env.values()):
            continue
        resolved = {str(k): str(v) for k, v in env.items()}  # a value without "$" as it is
        if any("$" in v for v in resolved.values()):
            from .values import resolve_values

            resolved = resolve_values(env, f'MCP server "{name}" env')
        command = str(raw["command"])
        args = [str(a) for a in raw.get("args") or []]
        where = str(Path(cwd) / str(raw.get("cwd") or "."))  # as the session joins it
        stderr = anonymous_file()
        try:
            proc = spawn(command, args, env={**os.environ, **resolved}, cwd=where, stderr=stderr)
        except OSError:
            stderr.close()
            continue  # the session's own attempt reports it
        _EARLY[key(command, args, where, resolved)] = (proc, stderr)


def _global_servers(path: str) -> Mapping[str, Any] | None:
    """The ``mcpServers`` object of the global file, or ``None`` when it is missing or when
    the configuration would not read it as it is read here (then the session starts them)."""
    try:
        with open(path, "rb") as file:
            data = file.read()
    except OSError:
        return None
    import json

    def no_constant(name: str) -> Any:
        raise ValueError(name)  # NaN and Infinity: not JSON for the configuration's reader

    try:
        value = json.loads(data.removeprefix(b"\xef\xbb\xbf"), parse_constant=no_constant)
    except ValueError:
        return None
    servers = value.get("mcpServers") if isinstance(value, dict) else None
    return servers if isinstance(servers, dict) else None


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
