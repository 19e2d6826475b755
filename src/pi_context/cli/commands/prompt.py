"""``pictx prompt``, ``pictx skills``, ``pictx trust`` and ``pictx distrust``.

``prompt`` prints the system prompt exactly as the first request for a directory would carry
it (default tools, discovered context files, SYSTEM/APPEND_SYSTEM, skills); ``--json`` adds the
sections, the inputs and every diagnostic. Trust decisions go to pi's own store,
``<agentDir>/trust.json``, so pi and pictx share them.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from pi_context.cli.terminal_text import echo, json_for_terminal, text_for_stream
from pi_context.errors import PiContextError
from pi_context.prompt import build_sections, prompt_options_for
from pi_context.prompt.sections import render_prompt
from pi_context.resources import LoadedResources, ResourceLoader, TrustStore
from pi_context.resources.paths import agent_dir
from pi_context.resources.trust import TRUST_FILE_NAME, canonical_dir
from pi_context.tools.registry import default_tools

__all__ = [
    "distrust_command",
    "prompt_command",
    "skills_command",
    "trust_command",
]


def _load(cwd: str | None, approve: bool | None, no_context_files: bool) -> LoadedResources:
    loader = ResourceLoader(cwd, trusted=approve, no_context_files=no_context_files)
    return loader.load()


def _left_out_note(res: LoadedResources) -> str | None:
    """What an untrusted project's skills would add, said instead of silence: the count of
    project skills left out and how to trust the project."""
    if res.trusted:
        return None
    loaded = {s.name for s in res.skills}
    with_trust = ResourceLoader(
        res.cwd, agent_dir=res.agent_dir, trusted=True, no_context_files=True
    )
    left = [s for s in with_trust.load().skills if s.name not in loaded]
    if not left:
        return None
    count = f"{len(left)} project skill{'s' if len(left) != 1 else ''}"
    return (
        f"{count} left out: this project is not trusted "
        "(`pictx trust` trusts it; `--approve` for one run)"
    )


def _fail(exc: PiContextError) -> None:
    raise click.ClickException(str(exc)) from exc


def _prompt_parts(res: LoadedResources) -> tuple[dict[str, str], str]:
    sections = build_sections(prompt_options_for(res, default_tools(res.cwd)))
    return sections, render_prompt(sections)


def _print_diagnostics(diagnostics: Sequence[Any]) -> None:
    for diag in diagnostics:
        echo(str(diag), err=True)


_cwd_option = click.option(
    "--cwd",
    type=click.Path(file_okay=False, exists=True),
    default=None,
    help="Directory to assemble the prompt for (default: the current directory).",
)
_approve_option = click.option(
    "-a/-na",
    "--approve/--no-approve",
    "approve",
    default=None,
    help="Treat the project as trusted / untrusted for this run (default: saved decision).",
)


@click.command("prompt")
@_cwd_option
@click.option("--json", "as_json", is_flag=True, help="Sections, inputs and diagnostics as JSON.")
@click.option("--no-context-files", is_flag=True, help="Skip AGENTS.md/CLAUDE.md discovery.")
@_approve_option
def prompt_command(
    cwd: str | None, as_json: bool, no_context_files: bool, approve: bool | None
) -> None:
    """Print the system prompt as it would be sent for a directory."""
    try:
        res = _load(cwd, approve, no_context_files)
        sections, text = _prompt_parts(res)
    except PiContextError as exc:
        _fail(exc)
        return
    if as_json:
        payload = {
            "sections": sections,
            "text": text,
            "contextFiles": [f.to_json() for f in res.context_files],
            "skills": [
                {
                    "name": s.name,
                    "description": s.description,
                    "filePath": s.file_path,
                    "disableModelInvocation": s.disable_model_invocation,
                }
                for s in res.skills
            ],
            "diagnostics": [d.to_json() for d in res.diagnostics],
            "trusted": res.trusted,
        }
        click.echo(json_for_terminal(json.dumps(payload, ensure_ascii=False, indent=2)))
        return
    _print_diagnostics(res.diagnostics)
    note = _left_out_note(res)
    if note is not None:
        echo(note, err=True)
    # the prompt itself is data when piped (kept as is), shown terminal-safe on a terminal
    click.echo(text_for_stream(text, sys.stdout), nl=sys.stdout.isatty())


@click.command("skills")
@_cwd_option
@click.option("--json", "as_json", is_flag=True, help="Skills and diagnostics as JSON.")
@_approve_option
def skills_command(cwd: str | None, as_json: bool, approve: bool | None) -> None:
    """List the skills available in a directory, with loading problems."""
    try:
        res = _load(cwd, approve, True)
    except PiContextError as exc:
        _fail(exc)
        return
    note = _left_out_note(res)
    if as_json:
        payload = {
            "skills": [s.to_json() for s in res.skills],
            "diagnostics": [d.to_json() for d in res.diagnostics],
            "leftOut": note,
        }
        click.echo(json_for_terminal(json.dumps(payload, ensure_ascii=False, indent=2)))
        return
    if not res.skills:
        click.echo("No skills found." if note is None else "No skills loaded.")
    if note is not None:
        click.echo(note)
    for skill in res.skills:
        hidden = (
            "  (hidden from the model; /skill:name only)" if skill.disable_model_invocation else ""
        )
        summary = skill.description.strip().split("\n", 1)[0]
        echo(f"{skill.name}{hidden}\n  {summary}\n  {skill.file_path}")
    _print_diagnostics(res.diagnostics)


def _store() -> TrustStore:
    return TrustStore(agent_dir() / TRUST_FILE_NAME)


@click.command("trust")
@click.argument("directory", required=False, type=click.Path(file_okay=False))
@click.option("--forget", is_flag=True, help="Remove the saved decision instead.")
def trust_command(directory: str | None, forget: bool) -> None:
    """Trust a project (its .pi settings, SYSTEM.md, skills) from now on."""
    target = directory or str(Path.cwd())
    try:
        key = _store().set(target, None if forget else True)
    except PiContextError as exc:
        _fail(exc)
        return
    verb = "Forgot the trust decision for" if forget else "Trusted"
    echo(f"{verb} {key}")


@click.command("distrust")
@click.argument("directory", required=False, type=click.Path(file_okay=False))
def distrust_command(directory: str | None) -> None:
    """Never use a project's .pi settings, SYSTEM.md or skills (context files still load)."""
    target = directory or str(Path.cwd())
    try:
        key = _store().set(target, False)
    except PiContextError as exc:
        _fail(exc)
        return
    echo(f"Distrusted {canonical_dir(key)}")
