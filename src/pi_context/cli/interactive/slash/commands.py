"""Slash commands of the interactive mode.

A line starting with ``/`` (after trimming) is a command: ``/name`` followed by its argument
text. ``/skill:<name> [args]`` expands a skill into the user message. Commands act on a
:class:`Shell` (the interactive controller), so they can be tested without a terminal.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from rich.markup import escape
from rich.table import Table
from rich.text import Text

from pi_context import session_dirs
from pi_context.cli.app.agent_api import AgentHost, ProjectTrust
from pi_context.cli.app.session_replacement import (
    CLONED,
    FORKED,
    NO_FORK_MESSAGES,
    NOTHING_TO_CLONE,
    SwitchCancelled,
)
from pi_context.cli.interactive.shell import Shell
from pi_context.cli.interactive.slash import pickers as picker_commands
from pi_context.cli.interactive.slash.pickers import show_last_exchanges
from pi_context.cli.interactive.stats import cache_ratio, count_messages, format_tokens
from pi_context.errors import PiContextError
from pi_context.export import SessionDocument, export_file
from pi_context.export.document import entry_kind, entry_preview

__all__ = [
    "COMMANDS",
    "Shell",
    "SlashCommand",
    "command_names",
    "document_of",
    "parse_slash",
    "pick_session",
    "run_slash",
    "session_rows",
    "tree_rows",
]


Handler = Callable[[Shell, str], Awaitable[None]]

PICKER_SIZE = 30
"""How many of the newest sessions a picker lists."""


@dataclass(frozen=True, slots=True)
class SlashCommand:
    name: str
    usage: str
    help: str
    handler: Handler


def parse_slash(line: str) -> tuple[str, str] | None:
    """``("compact", "keep the API notes")`` for ``/compact keep the API notes``; else ``None``."""
    text = line.strip()
    if not text.startswith("/") or len(text) < 2:
        return None
    name, _, rest = text[1:].partition(" ")
    if name.startswith("skill:"):
        return "skill", text[1:]
    return name, rest.strip()


def document_of(agent: AgentHost) -> SessionDocument:
    """The live session as an export document (current leaf, not the file's last line)."""
    session = agent.session
    return SessionDocument.from_entries(
        session.header,
        [entry.data for entry in session.entries],
        session.leaf_id,
        path=session.file_path,
    )


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
        marker = "◉" if entry is leaf else ("●" if id(entry) in on_path else "○")
        label = f" [{labels[eid]}]" if eid in labels else ""
        rows.append((eid, f"{'  ' * depth}{marker} {eid} {kind}{label}: {entry_preview(entry)}"))
    return rows


# -- handlers ------------------------------------------------------------------------------


async def _help(shell: Shell, _args: str) -> None:
    table = Table(show_header=False, box=None)
    for command in COMMANDS.values():
        table.add_row(Text(command.usage, style="bold"), command.help)
    table.add_row(Text("/skill:<name> [args]", style="bold"), "run a skill with optional arguments")
    for extra in shell.agent.extension_commands():
        if extra.name not in COMMANDS:
            about = extra.description or f"from extension {extra.extension}"
            table.add_row(Text(f"/{extra.name}", style="bold"), about)
    shell.console.print(table)
    shell.console.print(
        "Enter sends; Alt+Enter (or Esc then Enter) adds a line; Esc/Ctrl-C aborts a run."
    )


async def _quit(shell: Shell, _args: str) -> None:
    shell.request_quit()


async def _compact(shell: Shell, args: str) -> None:
    agent = shell.agent
    await shell.busy("Compacting…", lambda: agent.compact(args or None))


async def _reload(shell: Shell, _args: str) -> None:
    await shell.agent.reload()
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


def _saved_decision(trust: ProjectTrust) -> str:
    found = trust.store.lookup(trust.directory)
    if found is None:
        return "none"
    directory, value = found
    word = "trusted" if value else "untrusted"
    if directory == os.path.realpath(trust.directory):
        return f"{word} ({directory})"
    return f"{word} (inherited from {directory})"


async def _trust(shell: Shell, _args: str) -> None:
    """Save a trust decision for the session's directory: the only way trust is recorded here
    besides ``pictx trust``/``pictx distrust``."""
    trust = shell.agent.project_trust()
    here = os.path.realpath(trust.directory)
    parent = os.path.dirname(here)
    shell.console.print(Text(f"Directory: {here}"))
    shell.console.print(Text(f"Saved decision: {_saved_decision(trust)}"))
    current = "trusted" if trust.decision.trusted else "untrusted"
    shell.console.print(Text(f"Current session: {current}"))
    # (label, directory to save, decision)
    options = [("Trust", here, True)]
    if parent != here:
        options.append((f"Trust parent folder ({parent})", parent, True))
    options.append(("Do not trust", here, False))
    for number, (label, _, _) in enumerate(options, start=1):
        shell.console.print(Text(f"{number:>3} {label}"))
    choice = (await shell.ask("Choose # (empty cancels): ")).strip()
    if not choice.isdigit() or not 1 <= int(choice) <= len(options):
        shell.console.print("Nothing saved.")
        return
    _, directory, trusted = options[int(choice) - 1]
    trust.store.set(directory, trusted)
    if directory != here:
        trust.store.set(here, None)  # the parent's decision applies here from now on
    word = "trusted" if trusted else "untrusted"
    shell.console.print(
        f"[green]Saved trust decision: {word}.[/green] /reload applies it to settings, prompts "
        "and skills; restart pictx for extensions."
    )


async def _skill(shell: Shell, text: str) -> None:
    expanded = shell.agent.expand_skill_command("/" + text)
    if expanded.startswith("/skill:"):
        name = text.split(" ", 1)[0][len("skill:") :]
        shell.console.print(f"[red]Unknown skill: {escape(name)}[/red]")
        return
    await shell.send(expanded)


async def _export(shell: Shell, args: str) -> None:
    doc = document_of(shell.agent)
    target = export_file(doc, args or None, cwd=shell.cwd)
    shell.console.print(f"Exported to: {escape(str(target))}")


async def _session(shell: Shell, _args: str) -> None:
    session = shell.agent.session
    counts = count_messages(session.entries)
    stats = shell.agent.stats()
    ratio = cache_ratio(stats)
    rows = [
        ("Name", session.name or "(none)"),
        ("File", str(session.file_path) if session.file_path else "In-memory"),
        ("Id", session.id),
        ("Entries", str(counts.entries)),
        ("Messages", f"{counts.user_messages} user, {counts.assistant_messages} assistant"),
        ("Tools", f"{counts.tool_calls} calls, {counts.tool_results} results"),
        ("Compactions", str(counts.compactions)),
        (
            "Tokens",
            f"input {stats.input:,} · output {stats.output:,} · cache read {stats.cache_read:,}"
            f" · cache write {stats.cache_write:,}",
        ),
        ("Cache hit ratio", f"{ratio * 100:.1f}%" if ratio is not None else "–"),
        (
            "Context",
            "unknown until the next response"
            if stats.context_tokens is None
            else f"{format_tokens(stats.context_tokens)} tokens",
        ),
        ("Cost", f"${stats.cost:.4f}"),
    ]
    table = Table(show_header=False, box=None)
    for key, value in rows:
        table.add_row(Text(key, style="bold"), value)
    shell.console.print(table)


async def _model(shell: Shell, args: str) -> None:
    if await picker_commands.model_command(shell, args):
        return
    agent = shell.agent
    if not args:
        current = agent.model_info()
        if current is None:
            shell.console.print("No model configured.")
        else:
            shell.console.print(
                f"Current model: {escape(current.provider)}/{escape(current.id)} (window {current.context_window:,})"
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


async def _name(shell: Shell, args: str) -> None:
    session = shell.agent.session
    if not args:
        shell.console.print(f"Session name: {escape(session.name or '(none)')}")
        return
    session.append_session_info(args)
    shell.console.print(f"Session name: {escape(session.name or '')}")


async def _label(shell: Shell, args: str) -> None:
    """``/label text`` labels the current leaf; ``/label <id> text`` another entry; ``/label`` lists."""
    session = shell.agent.session
    if not args:
        labels = session.labels
        if not labels:
            shell.console.print("No labels.")
        for target, text in labels.items():
            shell.console.print(f"{escape(target)}: {escape(text)}")
        return
    first, _, rest = args.partition(" ")
    if session.get(first) is not None:
        target, text = first, rest.strip()
    else:
        if session.leaf_id is None:
            shell.console.print("[red]Nothing to label yet.[/red]")
            return
        target, text = session.leaf_id, args
    session.append_label(target, text or None)
    shell.console.print(f"Label of {escape(target)}: {escape(text or '(cleared)')}")


async def _tree(shell: Shell, args: str) -> None:
    """``/tree``: the full-screen selector in a terminal; ``/tree <id|#>`` (or a shell without
    a terminal) moves line by line."""
    terminal = None if args else shell.full_screen_io()
    if terminal is not None:
        from pi_context.cli.interactive.tree.command import run_tree_selector

        await run_tree_selector(shell, *terminal)
        return
    agent = shell.agent
    doc = document_of(agent)
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
    editor = getattr(result, "editor_text", None)
    if isinstance(editor, str) and editor and not shell.editor_text():
        shell.set_editor(editor)
    summary_id = getattr(result, "summary_entry_id", None)
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


async def _new(shell: Shell, _args: str) -> None:
    shell.switch(await shell.agent.new_session())
    shell.console.print("[green]New session.[/green]")


async def _resume(shell: Shell, args: str) -> None:
    if await picker_commands.resume_command(shell, args):
        return
    directory = shell.agent.session_dir()
    sessions = session_dirs.list_sessions(directory) if directory is not None else []
    if not sessions:
        shell.console.print("No saved sessions in this project.")
        return
    for row in session_rows(sessions):
        shell.console.print(Text(row))
    info = pick_session(sessions, (await shell.ask("Resume # (empty cancels): ")).strip())
    if info is None:
        return
    summary = shell.agent.sessions_here()
    chosen = next((s for s in summary if s.path == info.path), None)
    if chosen is None or not await picker_commands.switch_to_session(shell, chosen):
        return
    shell.console.print(Text(f"Resumed {info.path.name}.", style="green"))
    show_last_exchanges(shell)


def session_rows(sessions: Sequence[session_dirs.SessionInfo]) -> list[str]:
    """The numbered lines of a session picker (the newest :data:`PICKER_SIZE` sessions)."""
    rows = []
    for number, info in enumerate(sessions[:PICKER_SIZE], start=1):
        title = info.name or info.first_message or "(empty)"
        rows.append(f"{number:>3} {info.created[:19]} {info.message_count:>4} msgs  {title[:70]}")
    return rows


def pick_session(
    sessions: Sequence[session_dirs.SessionInfo], choice: str
) -> session_dirs.SessionInfo | None:
    """The session numbered ``choice`` in :func:`session_rows`; ``None`` for anything else."""
    if not choice.isdigit() or not 1 <= int(choice) <= min(PICKER_SIZE, len(sessions)):
        return None
    return sessions[int(choice) - 1]


async def _fork(shell: Shell, args: str) -> None:
    """pi's ``/fork``: pick a user message of the file (the last one first); the new session
    holds what came before it, and the message's text goes back into the editor."""
    if await picker_commands.fork_command(shell, args):
        return
    rows = shell.agent.fork_messages()
    if not rows:
        shell.console.print(NO_FORK_MESSAGES)
        return
    for number, row in enumerate(rows, start=1):
        shell.console.print(Text(f"{number:>3} {_one_line(row.text)}"))
    choice = (await shell.ask(f"Fork before message # [{len(rows)}] (q cancels): ")).strip()
    if choice.lower() in ("q", "quit"):
        return
    number = int(choice) if choice.isdigit() else (len(rows) if not choice else 0)
    if not 1 <= number <= len(rows):
        shell.console.print(f"No message number {escape(choice)}.")
        return
    forked, text = await shell.agent.fork_before(rows[number - 1].entry_id)
    shell.switch(forked)
    shell.set_editor(text)
    shell.console.print(Text(FORKED, style="green"))


def _one_line(text: str, width: int = 80) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


async def _clone(shell: Shell, _args: str) -> None:
    """pi's ``/clone``: a new session holding the whole current path."""
    if shell.agent.session.leaf_id is None:
        shell.console.print(NOTHING_TO_CLONE)
        return
    shell.switch(await shell.agent.clone())
    shell.set_editor("")
    shell.console.print(Text(CLONED, style="green"))


async def _login(shell: Shell, args: str) -> None:
    """``/login [provider]``: store an API key for a provider in ``<agentDir>/auth.json``
    (asked without echo). pictx runs no OAuth browser flow."""
    known = shell.agent.login_providers()
    info = shell.agent.model_info()
    current = info.provider if info is not None and info.provider in known else ""
    provider = args.strip()
    if not provider:
        hint = f" [{current}]" if current else ""
        provider = (await shell.ask(f"Provider to store an API key for{hint}: ")).strip()
        provider = provider or current
    if not provider:
        shell.console.print("Login cancelled.")
        return
    if provider not in known:
        shell.console.print(
            Text(f'Unknown provider "{provider}". Known providers: {", ".join(known)}', "red")
        )
        return
    key = (await shell.ask(f"API key for {provider} (input hidden): ", secret=True)).strip()
    if not key:
        shell.console.print("Login cancelled.")
        return
    path = shell.agent.login(provider, key)
    shell.console.print(Text(f"Stored an API key for {provider} in {path}.", style="green"))


async def _logout(shell: Shell, args: str) -> None:
    """``/logout [provider]``: remove a provider's stored credential from auth.json."""
    stored = shell.agent.stored_logins()
    provider = args.strip()
    if not provider:
        if not stored:
            shell.console.print("No stored credentials.")
            return
        default = stored[0] if len(stored) == 1 else ""
        hint = f" [{default}]" if default else f" ({', '.join(stored)})"
        provider = (await shell.ask(f"Log out of which provider{hint}: ")).strip() or default
    if not provider:
        shell.console.print("Logout cancelled.")
        return
    if shell.agent.logout(provider):
        shell.console.print(Text(f"Removed the stored credential for {provider}.", "green"))
    else:
        shell.console.print(Text(f"No stored credential for {provider}."))


async def _thinking(shell: Shell, args: str) -> None:
    if await picker_commands.thinking_command(shell, args):
        return
    agent = shell.agent
    supported = agent.supported_thinking_levels()
    shell.console.print(Text(f"Thinking level: {agent.thinking_level()}"))
    shell.console.print(Text(f"Available levels: {', '.join(supported)}"))
    answer = (await shell.ask("Set to (empty keeps it): ")).strip()
    if answer:
        await picker_commands.thinking_command(shell, answer)


async def _scoped_models(shell: Shell, args: str) -> None:
    if await picker_commands.scoped_models_command(shell, args):
        return
    agent = shell.agent
    scope = agent.model_scope()
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


async def _hotkeys(shell: Shell, args: str) -> None:
    await picker_commands.hotkeys_command(shell, args)


COMMANDS: dict[str, SlashCommand] = {
    c.name: c
    for c in (
        SlashCommand(
            "compact", "/compact [instructions]", "summarize older messages now", _compact
        ),
        SlashCommand(
            "tree", "/tree [id]", "move in the session tree, label, summarize a branch", _tree
        ),
        SlashCommand("reload", "/reload", "re-read settings, AGENTS.md, skills, prompts", _reload),
        SlashCommand("trust", "/trust", "save whether this project is trusted", _trust),
        SlashCommand("export", "/export [file.html|file.jsonl]", "export the session", _export),
        SlashCommand("session", "/session", "file, counts, tokens, cache, cost", _session),
        SlashCommand("model", "/model [search]", "pick or switch the model (Ctrl+L)", _model),
        SlashCommand(
            "scoped-models", "/scoped-models", "choose the models Ctrl+P cycles", _scoped_models
        ),
        SlashCommand("thinking", "/thinking [level]", "set or pick the thinking level", _thinking),
        SlashCommand("name", "/name [name]", "show or set the session name", _name),
        SlashCommand("label", "/label [id] [text]", "label the current (or given) entry", _label),
        SlashCommand("new", "/new", "start a new session", _new),
        SlashCommand("resume", "/resume", "resume a saved session of this project", _resume),
        SlashCommand("fork", "/fork", "new session from before an earlier message", _fork),
        SlashCommand("clone", "/clone", "new session holding the current path", _clone),
        SlashCommand("login", "/login [provider]", "store an API key in auth.json", _login),
        SlashCommand("logout", "/logout [provider]", "remove a stored credential", _logout),
        SlashCommand("hotkeys", "/hotkeys", "the keyboard shortcuts", _hotkeys),
        SlashCommand("help", "/help", "this list", _help),
        SlashCommand("quit", "/quit", "leave (also /exit, Ctrl-D)", _quit),
    )
}
_ALIASES = {"exit": "quit", "q": "quit", "?": "help"}


def command_names() -> list[str]:
    """Every command as typed, for completion."""
    return ["/" + name for name in COMMANDS]


async def run_slash(shell: Shell, line: str) -> bool:
    """Run ``line`` if it is a slash command; ``False`` when it is not one (send it as text)."""
    parsed = parse_slash(line)
    if parsed is None:
        return False
    name, args = parsed
    if name == "skill":
        handler: Handler = _skill
    else:
        command = COMMANDS.get(_ALIASES.get(name, name))
        if command is None:
            if await shell.agent.run_extension_command(name, args):
                return True
            shell.console.print(
                f"[red]Unknown command /{escape(name)}. Type /help for the list.[/red]"
            )
            return True
        handler = command.handler
    try:
        await handler(shell, args)
    except SwitchCancelled as exc:
        shell.console.print(Text(str(exc), style="dim"))
    except PiContextError as exc:
        shell.console.print(Text(f"pictx: error: {exc}", style="red"))
    return True
