"""The application family: ``/help``, ``/hotkeys``, ``/quit``, ``/reload``, ``/compact``,
``/tree``, ``/debug`` and ``/skill:<name>``.

``/tree`` opens the full-screen selector (:mod:`pi_context.cli.interactive.tree`) in a
terminal; ``/tree <id|#>``, or a shell without a terminal, moves line by line with the listing
of :func:`tree_rows`.
"""

from __future__ import annotations

import json
import platform
import shutil
from collections.abc import Sequence
from datetime import UTC, datetime

from rich.markup import escape
from rich.table import Table
from rich.text import Text

from pi_context._version import __version__
from pi_context.cli.interactive.hotkeys import hotkeys_table
from pi_context.cli.interactive.shell import Shell, say
from pi_context.cli.interactive.slash.registry import BUILT_INS, commands_for, shadowing_note
from pi_context.cli.interactive.stats import format_tokens
from pi_context.cli.interactive.theme import apply_theme, show_warnings
from pi_context.cli.terminal_text import terminal_safe
from pi_context.export import SessionDocument
from pi_context.export.document import entry_kind, entry_preview, tree_marker

__all__ = ["tree_rows"]


@BUILT_INS.command("help", "/help", "this list", aliases=("?",))
async def help_(shell: Shell, _args: str) -> None:
    """Every command of this session: the built-ins, then the extensions' (one registry)."""
    commands = commands_for(shell.agent)
    table = Table(show_header=False, box=None)
    for command in commands:
        # an extension's usage and description are its text: shown, never read as markup
        table.add_row(
            Text(terminal_safe(command.usage), style="bold"), Text(terminal_safe(command.help))
        )
    shell.console.print(table)
    for hidden in commands.shadowed:
        shell.console.print(Text(shadowing_note(hidden), style="yellow"))
    shell.console.print(
        "Enter sends; Alt+Enter (or Esc then Enter) adds a line; Esc/Ctrl-C aborts a run."
    )


@BUILT_INS.command("hotkeys", "/hotkeys", "the keyboard shortcuts")
async def hotkeys(shell: Shell, _args: str) -> None:
    # the keys in effect (keybindings.json applied) when the shell has a keymap
    shell.console.print(hotkeys_table(getattr(shell, "keymap", None)))


@BUILT_INS.command("copy", "/copy", "copy the last assistant answer to the clipboard")
async def copy(shell: Shell, _args: str) -> None:
    copy_answer = getattr(shell, "copy_last_answer", None)  # the interactive shell's
    if copy_answer is None:
        shell.console.print(Text("/copy needs the interactive terminal", style="red"))
        return
    copy_answer()


@BUILT_INS.command("quit", "/quit", "leave (also /exit, Ctrl-D)", aliases=("exit", "q"))
async def quit_(shell: Shell, _args: str) -> None:
    shell.request_quit()


@BUILT_INS.command("compact", "/compact [instructions]", "summarize older messages now")
async def compact(shell: Shell, args: str) -> None:
    agent = shell.agent
    await shell.busy("Compacting…", lambda: agent.compact(args or None))


@BUILT_INS.command("reload", "/reload", "re-read settings, keybindings, AGENTS.md, skills, prompts")
async def reload(shell: Shell, _args: str) -> None:
    await shell.agent.reload()
    show_warnings(shell.console, apply_theme(shell.console, shell.agent))  # `theme` may be new
    reload_keys = getattr(shell, "reload_keymap", None)  # the terminal's keybindings.json
    if reload_keys is not None:
        reload_keys()
    shell.console.print("[green]Reloaded settings, context files, skills and prompts.[/green]")
    trust = shell.agent.project_trust()
    if not trust.decision.trusted and trust.decision.source == "default":
        # e.g. .pi files written during the session: never trusted without the user saying so
        shell.console.print(
            Text(
                f"{trust.directory} is not trusted: its .pi settings, SYSTEM.md, "
                "APPEND_SYSTEM.md, skills and extensions are not used. /trust to trust it.",
                style="yellow",
            )
        )


@BUILT_INS.command(
    "skill:", "/skill:<name> [args]", "run a skill with optional arguments", completes=False
)
async def skill(shell: Shell, text: str) -> None:
    expanded = shell.agent.expand_skill_command("/" + text)
    if expanded.startswith("/skill:"):
        name = text.split(" ", 1)[0][len("skill:") :]
        shell.console.print(f"[red]Unknown skill: {escape(name)}[/red]")
        return
    await shell.send(expanded)


def tree_rows(doc: SessionDocument) -> list[tuple[str, str]]:
    """``(entry id, display line)`` for ``/tree``: metadata entries left out, branch points indented."""
    hidden = {"label", "session_info", "thinking_level_change", "custom", "model_change", "usage"}
    on_path = {id(e) for e in doc.active_path}  # ids may repeat in a file: compare entries
    leaf = doc.by_id.get(doc.leaf_id) if doc.leaf_id is not None else None
    labels = doc.labels()
    rows = []
    for entry, depth in doc.preorder():
        eid = str(entry["id"])
        kind = entry_kind(entry)
        if entry.get("type") in hidden or kind in ("system", "toolResult"):
            continue
        marker = tree_marker(entry, leaf, id(entry) in on_path)
        label = f" [{labels[eid]}]" if eid in labels else ""
        rows.append((eid, f"{'  ' * depth}{marker} {eid} {kind}{label}: {entry_preview(entry)}"))
    return rows


@BUILT_INS.command("tree", "/tree [id]", "move in the session tree, label, summarize a branch")
async def tree(shell: Shell, args: str) -> None:
    """``/tree``: the full-screen selector in a terminal; ``/tree <id|#>`` (or a shell without
    a terminal) moves line by line."""
    terminal = None if args else shell.full_screen_io()
    if terminal is not None:
        from pi_context.cli.interactive.tree.command import run_tree_selector

        await run_tree_selector(shell, *terminal)
        return
    agent = shell.agent
    doc = SessionDocument.from_session(agent.session)
    rows = tree_rows(doc)
    if not rows:
        shell.console.print("The session is empty.")
        return
    if args:
        choice = args
    else:
        for index, (_, line) in enumerate(rows, start=1):
            shell.console.print(Text(f"{index:>3} {line}"), soft_wrap=True)
        choice = (await shell.ask("Go to # or id (L <#> <text> labels; empty cancels): ")).strip()
    if not choice:
        return
    if choice[:2].lower() == "l ":
        number, _, text = choice[2:].strip().partition(" ")
        target = _pick(rows, number)
        if target is None:
            shell.console.print("[red]No such entry.[/red]")
            return
        agent.session.append_label(target, text.strip() or None)
        shell.console.print(f"Label of {escape(target)}: {escape(text.strip() or '(cleared)')}")
        return
    target = _pick(rows, choice)
    if target is None and agent.session.get(choice) is not None:
        target = choice  # an entry the listing leaves out (a model change, a label, …)
    if target is None:
        shell.console.print("[red]No such entry.[/red]")
        return
    if target == agent.session.leaf_id:
        shell.console.print("Already there.")
        return
    answer = (
        (
            await shell.ask(
                "Summarize the branch you are leaving? [y]es / [n]o / [c]ustom instructions "
                "(empty or Ctrl-C cancels): "
            )
        )
        .strip()
        .lower()
    )
    if not answer.startswith(("y", "n", "c")):
        shell.console.print("Not moved.")
        return
    summarize = answer.startswith(("y", "c"))
    instructions = None
    if answer.startswith("c"):
        instructions = (await shell.ask("Instructions for the summary: ")).strip() or None
    label = "Summarizing the branch you leave…" if summarize else "Moving…"
    before = agent.estimate_context()
    result = await shell.busy(
        label, lambda: agent.navigate(target, summarize=summarize, instructions=instructions)
    )
    if result is not None and result.editor_text and not shell.editor_text():
        shell.set_editor(result.editor_text)
    summary_id = result.summary_entry_id if result is not None else None
    note = f" (branch summary {summary_id})" if summary_id else ""
    after = agent.estimate_context()
    shell.console.print(
        f"[green]Now at {escape(agent.session.leaf_id or 'the root')}{escape(note)}; context about "
        f"{format_tokens(before)} → {format_tokens(after)} tokens.[/green]"
    )


def _pick(rows: Sequence[tuple[str, str]], choice: str) -> str | None:
    if choice.isdigit() and 1 <= int(choice) <= len(rows):
        return rows[int(choice) - 1][0]
    for eid, _ in rows:
        if eid == choice:
            return eid
    return None


DEBUG_LOG_NAME = "pictx-debug.log"


@BUILT_INS.command("debug", "/debug", "write a debug log (terminal, session, messages)")
async def debug(shell: Shell, _args: str) -> None:
    """pi's ``/debug``: ``<agentDir>/pictx-debug.log`` (replaced each time) with the terminal
    size, the versions, the session file, model and working directory, and the messages of
    the context as JSON lines. No credential, header or environment variable is written."""
    agent = shell.agent
    size = shutil.get_terminal_size()
    info = agent.model_info()
    lines = [
        f"Debug output at {datetime.now(UTC).isoformat()}",
        f"Terminal: {size.columns}x{size.lines}",
        f"pictx {__version__}, Python {platform.python_version()}, {platform.platform()}",
        f"Session: {agent.session.file_path or 'in memory'}",
        f"Working directory: {agent.cwd}",
        f"Model: {f'{info.provider}/{info.id}' if info is not None else 'none'}",
        f"Thinking level: {agent.thinking_level()}",
        "",
        "=== Agent messages (JSONL) ===",
        *(json.dumps(message, ensure_ascii=False) for message in agent.session.messages()),
        "",
    ]
    path = agent.agent_dir / DEBUG_LOG_NAME
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines), encoding="utf-8")
    say(shell, "✓ Debug log written", "green")
    say(shell, str(path), "dim")
