"""The model family: ``/model``, ``/scoped-models``, ``/thinking``.

Each opens a picker when the input is a terminal (Ctrl+L opens ``/model``'s too) and falls
back to a question otherwise; an argument that names its choice exactly (``/model
provider/id``, ``/thinking low``) switches at once either way.
"""

from __future__ import annotations

from rich.markup import escape
from rich.text import Text

from pi_context.cli.app.agent_api import AgentApi
from pi_context.cli.interactive.pickers.model import ModelPicker, ScopeEditor, exact_model
from pi_context.cli.interactive.pickers.thinking import (
    ThinkingPicker,
    match_thinking_level,
    unknown_level_message,
)
from pi_context.cli.interactive.shell import Shell, say
from pi_context.cli.interactive.slash.registry import BUILT_INS

__all__: list[str] = []


def _current_key(agent: AgentApi) -> str | None:
    info = agent.model_info()
    return f"{info.provider}/{info.id}" if info is not None else None


def _switched(shell: Shell, key: str, *, save: bool) -> None:
    shell.agent.select_model(key, save=save)
    if save:
        say(shell, f"Default model: {key}", "green")
    else:
        say(shell, f"Model: {key.partition('/')[2]}", "green")


@BUILT_INS.command("model", "/model [search]", "pick or switch the model (Ctrl+L)")
async def model(shell: Shell, args: str) -> None:
    """``/model <q>``: an exact name switches; otherwise the picker searching ``<q>``, or
    without a terminal the list of models and a question. ``scripted:<file>`` always goes
    through the text form (it is no registry model)."""
    agent = shell.agent
    scripted = args.startswith("scripted:")
    if args and not scripted:
        choices = agent.model_choices()
        scope = agent.model_scope()
        pool = [c for c in choices if c.key in scope] if scope else choices
        named = exact_model([c for c in pool if c.available or c.key in scope], args)
        if named is not None:
            _switched(shell, named.key, save=False)
            return
    if shell.pickers and not scripted:
        picker = ModelPicker(
            agent.model_choices(),
            scope=agent.model_scope(),
            current=_current_key(agent),
            default=agent.default_model_key(),
        )
        picked = await shell.pick(picker, args)
        if picked is not None:
            _switched(shell, picked.key, save=picked.save)
        return
    if not args:
        current = agent.model_info()
        if current is None:
            shell.console.print("No model configured.")
        else:
            shell.console.print(
                f"Current model: {escape(current.provider)}/{escape(current.id)} "
                f"(window {current.context_window:,})"
            )
        available = agent.available_models()
        if available:
            shell.console.print("Available: " + escape(", ".join(available)))
        args = (await shell.ask("Switch to (empty keeps it): ")).strip()
        if not args:
            return
    agent.switch_model(args)
    info = agent.model.info
    shell.console.print(f"Model: {escape(info.provider)}/{escape(info.id)}")


@BUILT_INS.command("scoped-models", "/scoped-models", "choose the models Ctrl+P cycles")
async def scoped_models(shell: Shell, _args: str) -> None:
    agent = shell.agent
    scope = agent.model_scope()
    if shell.pickers:
        editor = ScopeEditor(agent.model_choices(), scope)
        await shell.pick(editor)
        if editor.enabled == scope and not editor.saved:
            return
        agent.set_model_scope(editor.enabled, save=editor.saved)
        listed = ", ".join(editor.enabled) or "every model with a key"
        where = "saved to settings" if editor.saved else "for this session"
        say(shell, f"Model scope ({where}): {listed}", "green")
        return
    shell.console.print(Text(f"Model scope: {', '.join(scope) or 'every model with a key'}"))
    answer = (
        await shell.ask("New scope, provider/id separated by commas (empty keeps it, - clears): ")
    ).strip()
    if not answer:
        return
    known = {choice.key for choice in agent.model_choices()}
    keys = [] if answer == "-" else [k.strip() for k in answer.split(",") if k.strip()]
    unknown = [k for k in keys if k not in known]
    if unknown:
        shell.console.print(Text(f"Unknown model: {', '.join(unknown)}", style="red"))
        return
    agent.set_model_scope(keys, save=False)
    shell.console.print(Text(f"Model scope: {', '.join(keys) or 'every model with a key'}"))


def _set_level(shell: Shell, requested: str) -> None:
    supported = shell.agent.supported_thinking_levels()
    level = match_thinking_level(supported, requested)
    if level is None:
        say(shell, unknown_level_message(supported, requested), "red")
        return
    say(shell, f"Thinking level: {shell.agent.set_thinking_level(level)}", "green")


@BUILT_INS.command("thinking", "/thinking [level]", "set or pick the thinking level")
async def thinking(shell: Shell, args: str) -> None:
    agent = shell.agent
    if args:
        _set_level(shell, args)
        return
    supported = agent.supported_thinking_levels()
    if shell.pickers:
        picked = await shell.pick(ThinkingPicker(supported, agent.thinking_level()))
        if picked is not None:
            level = agent.set_thinking_level(picked.level, save=picked.save)
            saved = " (saved as default)" if picked.save else ""
            say(shell, f"Thinking level: {level}{saved}", "green")
        return
    shell.console.print(Text(f"Thinking level: {agent.thinking_level()}"))
    shell.console.print(Text(f"Available levels: {', '.join(supported)}"))
    answer = (await shell.ask("Set to (empty keeps it): ")).strip()
    if answer:
        _set_level(shell, answer)
