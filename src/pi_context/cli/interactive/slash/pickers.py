"""The slash commands that open a picker: ``/model``, ``/scoped-models``, ``/thinking``,
``/fork``, ``/resume``, and ``/hotkeys``.

Each handler here returns ``True`` when it dealt with the command. When the shell cannot show
a picker (its input is not a terminal) the ones that need one return ``False`` and
:mod:`pi_context.cli.interactive.slash.commands` runs the text form instead (a numbered list and
a question), so scripts driving pictx through a pipe keep working.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from rich.text import Text

from pi_context.cli.app.session_list import SessionSummary
from pi_context.cli.app.session_replacement import FORKED, NO_FORK_MESSAGES
from pi_context.cli.interactive.hotkeys import hotkeys_table
from pi_context.cli.interactive.pickers.fork import ForkPicker
from pi_context.cli.interactive.pickers.list import OptionPicker, one_line
from pi_context.cli.interactive.pickers.model import ModelPicker, ScopeEditor, exact_model
from pi_context.cli.interactive.pickers.session import SessionPicker
from pi_context.cli.interactive.pickers.thinking import (
    ThinkingPicker,
    match_thinking_level,
    unknown_level_message,
)
from pi_context.export.document import entry_preview

if TYPE_CHECKING:
    from pi_context.cli.app.agent_api import AgentHost
    from pi_context.cli.interactive.shell import Shell

__all__ = [
    "choose_option",
    "fork_command",
    "hotkeys_command",
    "last_exchanges",
    "model_command",
    "resume_command",
    "scoped_models_command",
    "show_last_exchanges",
    "switch_to_session",
    "thinking_command",
]


def _say(shell: Shell, text: str, style: str = "") -> None:
    shell.console.print(Text(text, style=style), soft_wrap=True)


def _current_key(agent: AgentHost) -> str | None:
    info = agent.model_info()
    return f"{info.provider}/{info.id}" if info is not None else None


def _switched(shell: Shell, key: str, *, save: bool) -> None:
    shell.agent.select_model(key, save=save)
    if save:
        _say(shell, f"Default model: {key}", "green")
    else:
        _say(shell, f"Model: {key.partition('/')[2]}", "green")


async def model_command(shell: Shell, args: str) -> bool:
    """``/model [<q>]``; ``False`` leaves it to the text form."""
    agent = shell.agent
    choices = agent.model_choices()
    scope = agent.model_scope()
    if args and not args.startswith("scripted:"):
        pool = [c for c in choices if c.key in scope] if scope else choices
        named = exact_model([c for c in pool if c.available or c.key in scope], args)
        if named is not None:
            _switched(shell, named.key, save=False)
            return True
    if not shell.pickers or args.startswith("scripted:"):
        return False
    picker = ModelPicker(
        choices, scope=scope, current=_current_key(agent), default=agent.default_model_key()
    )
    picked = await shell.pick(picker, args)
    if picked is not None:
        _switched(shell, picked.key, save=picked.save)
    return True


async def scoped_models_command(shell: Shell, args: str) -> bool:
    agent = shell.agent
    scope = agent.model_scope()
    if not shell.pickers:
        return False
    editor = ScopeEditor(agent.model_choices(), scope)
    await shell.pick(editor)
    if editor.enabled == scope and not editor.saved:
        return True
    agent.set_model_scope(editor.enabled, save=editor.saved)
    listed = ", ".join(editor.enabled) or "every model with a key"
    where = "saved to settings" if editor.saved else "for this session"
    _say(shell, f"Model scope ({where}): {listed}", "green")
    return True


async def thinking_command(shell: Shell, args: str) -> bool:
    agent = shell.agent
    supported = agent.supported_thinking_levels()
    if args:
        level = match_thinking_level(supported, args)
        if level is None:
            _say(shell, unknown_level_message(supported, args), "red")
            return True
        _say(shell, f"Thinking level: {agent.set_thinking_level(level)}", "green")
        return True
    if not shell.pickers:
        return False
    picked = await shell.pick(ThinkingPicker(supported, agent.thinking_level()))
    if picked is not None:
        level = agent.set_thinking_level(picked.level, save=picked.save)
        saved = " (saved as default)" if picked.save else ""
        _say(shell, f"Thinking level: {level}{saved}", "green")
    return True


async def fork_command(shell: Shell, args: str) -> bool:
    messages = shell.agent.fork_messages()
    if not messages:
        _say(shell, NO_FORK_MESSAGES)
        return True
    if not shell.pickers:
        return False
    chosen = await shell.pick(ForkPicker(messages))
    if chosen is not None:
        forked, text = await shell.agent.fork_before(chosen.entry_id)
        shell.switch(forked)
        shell.set_editor(text)
        _say(shell, FORKED, "green")
    return True


async def choose_option(shell: Shell, question: str, options: Sequence[str]) -> int | None:
    """One of ``options`` (its index), by picker or by number; ``None`` when cancelled."""
    if shell.pickers:
        return await shell.pick(OptionPicker(question, options))
    _say(shell, question)
    for number, option in enumerate(options, start=1):
        _say(shell, f"{number:>3} {option}")
    answer = (await shell.ask("Choose # (empty cancels): ")).strip()
    if answer.isdigit() and 1 <= int(answer) <= len(options):
        return int(answer) - 1
    return None


async def switch_to_session(shell: Shell, chosen: SessionSummary) -> bool:
    """Open ``chosen``: in its own folder (after asking when that is not this one), or, when
    its folder is gone, here (pi's three-way choice). ``False`` when nothing was opened."""
    agent = shell.agent
    here = agent.project_trust().directory
    if chosen.cwd and not os.path.isdir(chosen.cwd):
        answer = await choose_option(
            shell,
            f"The session's folder does not exist any more: {one_line(chosen.cwd)}",
            [
                f"Continue in {here} (asks again next time)",
                f"Fork into {here} (new session ID, original kept)",
                "Cancel",
            ],
        )
        if answer not in (0, 1):
            _say(shell, "Session not opened.")
            return False
        shell.switch(await agent.open_session_here(chosen.path, fork=answer == 1))
        return True
    if chosen.cwd and os.path.realpath(chosen.cwd) != os.path.realpath(here):
        # its tools would run there and that directory's AGENTS.md would load
        answer = await choose_option(
            shell,
            f"This session was recorded in {one_line(chosen.cwd)} (you are in {here}).",
            ["Resume it there (its tools run there, its AGENTS.md loads)", "Cancel"],
        )
        if answer != 0:
            _say(shell, "Session not opened.")
            return False
    shell.switch(await agent.open_session(chosen.path))
    return True


async def resume_command(shell: Shell, args: str) -> bool:
    if not shell.pickers:
        return False
    agent = shell.agent
    picker = SessionPicker(
        here=agent.sessions_here,
        everywhere=agent.sessions_everywhere,
        current=agent.session.file_path,
        rename=lambda session, name: agent.rename_session(session.path, name),
        delete=lambda session: agent.delete_session(session.path),
    )
    chosen = await shell.pick(picker)
    if chosen is not None and await switch_to_session(shell, chosen):
        _say(shell, "Resumed session", "green")
        show_last_exchanges(shell)
    return True


def last_exchanges(session: Any, count: int = 4) -> list[tuple[str, str]]:
    """``(who, one-line preview)`` of the last ``count`` user and assistant messages of the
    current branch, oldest first (what ``/resume`` shows of the conversation it opened)."""
    shown = []
    for entry in session.branch_view():
        if entry.type == "message" and entry.role in ("user", "assistant"):
            preview = entry_preview(entry.data)
            if preview:
                shown.append(("you" if entry.role == "user" else "assistant", preview))
    return shown[-count:]


def show_last_exchanges(shell: Shell) -> None:
    recent = last_exchanges(shell.agent.session)
    if recent:
        _say(shell, "Where it left off:", "dim")
    for role, preview in recent:
        shell.console.print(Text.assemble((f"  {role}: ", "bold"), preview))


async def hotkeys_command(shell: Shell, _args: str) -> bool:
    shell.console.print(hotkeys_table())
    return True
