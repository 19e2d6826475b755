"""``pictx mcp``: list, add and remove MCP servers in ``mcp.json`` (no session, no agent).

``list`` connects every enabled server in parallel (then closes them) and prints its state and
tools; it exits 1 when a file has a problem or an enabled server did not connect, so scripts
can check a configuration. ``add`` and ``remove`` change only the one entry of the global file
(``--local``: the project's ``.pi/mcp.json``), keeping the rest of the file and its
indentation.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import click

from pi_context.cli.terminal_text import echo, json_for_terminal
from pi_context.mcp.config import (
    EXPOSURES,
    global_config_path,
    load_mcp_config,
    project_config_path,
    validate_entry,
)
from pi_context.mcp.files import McpFileError, add_server, list_servers, remove_server
from pi_context.resources.paths import agent_dir as default_agent_dir
from pi_context.resources.trust import TrustStore, resolve_project_trust

__all__ = ["mcp_group"]


def _agent_dir() -> Path:
    return Path(default_agent_dir())


def _trusted(cwd: str, agent: Path) -> bool:
    return resolve_project_trust(cwd, TrustStore(agent / "trust.json")).trusted


def _pairs(values: tuple[str, ...], flag: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for value in values:
        key, sep, rest = value.partition("=")
        if not sep or not key:
            raise click.UsageError(f"{flag} takes KEY=VALUE, got {value!r}")
        out[key] = rest
    return out


@click.group(name="mcp", context_settings={"help_option_names": ["-h", "--help"]})
def mcp_group() -> None:
    """List, add and remove MCP servers (mcp.json)."""


@mcp_group.command(name="list")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def list_command(as_json: bool) -> None:
    """Connect every enabled server and show its state and tools."""
    agent, cwd = _agent_dir(), os.getcwd()
    trusted = _trusted(cwd, agent)
    config, listed = asyncio.run(list_servers(agent, cwd, trusted=trusted))
    note = (
        f"{config.ignored_project_file} is ignored because the project is not trusted."
        " Run pictx trust to trust it."
        if config.ignored_project_file
        else None
    )
    if as_json:
        payload: dict[str, Any] = {
            "servers": [s.to_json() for s in listed],
            "errors": config.errors,
        }
        if note:
            payload["note"] = note
        echo(json_for_terminal(json.dumps(payload, indent=2, ensure_ascii=False)))
    else:
        if not listed and not config.errors:
            echo(
                f"No MCP servers configured. Add them to {global_config_path(agent)} or .pi/mcp.json."
            )
        for server in listed:
            for line in server.lines():
                echo(line)
        for error in config.errors:
            echo(f"config error: {error}")
        if note:
            echo(note)
    failed = any(s.config.enabled and s.state != "connected" for s in listed)
    if config.errors or failed:
        raise click.exceptions.Exit(1)


@mcp_group.command(name="add", context_settings={"ignore_unknown_options": True})
@click.argument("name")
@click.option("-l", "--local", is_flag=True, help="Write the project's .pi/mcp.json.")
@click.option("--url", default=None, help="A streamable HTTP server at this URL.")
@click.option("--env", "envs", multiple=True, metavar="K=V", help="Environment (stdio only).")
@click.option("--cwd", "work_dir", default=None, help="Working directory (stdio only).")
@click.option("--header", "headers", multiple=True, metavar="K=V", help="HTTP header.")
@click.option(
    "--bearer-token-env-var",
    default=None,
    metavar="NAME",
    help="Send Authorization: Bearer ${NAME} (HTTP only).",
)
@click.option("--exposure", type=click.Choice(EXPOSURES), default=None)
@click.option("--description", default=None, help="One line for the prompt and for search.")
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
def add_command(
    name: str,
    local: bool,
    url: str | None,
    envs: tuple[str, ...],
    work_dir: str | None,
    headers: tuple[str, ...],
    bearer_token_env_var: str | None,
    exposure: str | None,
    description: str | None,
    command: tuple[str, ...],
) -> None:
    """Add (or replace) a server: NAME [options] -- COMMAND [ARGS...], or NAME --url URL."""
    args = list(command)
    if args and args[0] == "--":
        args = args[1:]
    if url is not None and args:
        raise click.UsageError("give either --url or a command after --, not both")
    if url is None and not args:
        raise click.UsageError("give a command after -- (stdio) or --url URL (streamable HTTP)")
    entry: dict[str, Any] = {}
    if url is not None:
        if envs:
            raise click.ClickException("--env only applies to stdio servers.")
        if work_dir is not None:
            raise click.ClickException("--cwd only applies to stdio servers.")
        entry["url"] = url
        header_map = _pairs(headers, "--header")
        if bearer_token_env_var:
            header_map["Authorization"] = f"Bearer ${{{bearer_token_env_var}}}"
        if header_map:
            entry["headers"] = header_map
    else:
        if headers or bearer_token_env_var:
            raise click.ClickException("--header only applies to HTTP servers.")
        entry["command"] = args[0]
        if args[1:]:
            entry["args"] = args[1:]
        if envs:
            entry["env"] = _pairs(envs, "--env")
        if work_dir is not None:
            entry["cwd"] = work_dir
    if exposure is not None and exposure != "codemode":
        entry["exposure"] = exposure
    if description is not None:
        entry["description"] = description
    problem = validate_entry(name, entry, project=local)
    if problem is not None:
        raise click.ClickException(problem)
    agent, cwd = _agent_dir(), os.getcwd()
    path = project_config_path(cwd) if local else global_config_path(agent)
    try:
        replaced = add_server(path, name, entry)
    except McpFileError as exc:
        raise click.ClickException(str(exc)) from exc
    scope = "project" if local else "global"
    echo(f'{"Replaced" if replaced else "Added"} {scope} MCP server "{name}" in {path}.')
    if local and not _trusted(cwd, agent):
        echo(f"{path} is ignored until the project is trusted: run pictx trust.")
    echo("Check it with: pictx mcp list")


@mcp_group.command(name="remove")
@click.argument("name")
@click.option("-l", "--local", is_flag=True, help="Remove it from the project's .pi/mcp.json.")
def remove_command(name: str, local: bool) -> None:
    """Remove a server from the global (or, with --local, the project's) mcp.json."""
    agent, cwd = _agent_dir(), os.getcwd()
    path = project_config_path(cwd) if local else global_config_path(agent)
    try:
        removed = remove_server(path, name)
    except McpFileError as exc:
        raise click.ClickException(str(exc)) from exc
    scope = "project" if local else "global"
    if removed:
        echo(f'Removed {scope} MCP server "{name}" from {path}.')
        return
    other = global_config_path(agent) if local else project_config_path(cwd)
    config = load_mcp_config(agent, cwd, trusted=True)
    elsewhere = any(s.name == name and s.source == str(other) for s in config.servers)
    message = f'No {scope} MCP server named "{name}" in {path}.'
    if elsewhere:
        message += f" It is defined in {other}; {'omit --local' if local else 'use --local'}."
    raise click.ClickException(message)
