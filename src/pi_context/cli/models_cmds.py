"""``pictx models``: the models ``--model`` can name, and whether each can be used now."""

from __future__ import annotations

import click

from pi_context import _json
from pi_context.cli.terminal_text import echo, json_for_terminal
from pi_context.providers.models import load_registry

__all__ = ["models_command", "register"]


@click.command("models")
@click.option("--all", "show_all", is_flag=True, help="Also list models with no key configured.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per model.")
def models_command(show_all: bool, as_json: bool) -> None:
    """List the models pictx knows: built-ins, ~/.pi/agent/models.json and the local model."""
    registry = load_registry()
    for problem in registry.errors:
        echo(f"pictx: warning: {problem}", err=True)
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


def register(group: click.Group) -> None:
    group.add_command(models_command)
