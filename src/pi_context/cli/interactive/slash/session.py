"""The session family: ``/new``, ``/resume``, ``/fork``, ``/clone``, ``/name``, ``/label``,
``/session``, ``/export``, ``/import``.

``/resume`` and ``/fork`` open a picker when the input is a terminal and fall back to a
numbered list and a question otherwise (a pipe), so scripts driving pictx keep working; both
forms of each command are here.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Sequence
from pathlib import Path

from rich.markup import escape
from rich.table import Table
from rich.text import Text

from pi_context import session_dirs
from pi_context.cli.app.session_list import pick_session, session_rows
from pi_context.cli.app.session_replacement import (
    CLONED,
    FORKED,
    NO_FORK_MESSAGES,
    NOTHING_TO_CLONE,
)
from pi_context.cli.interactive.pickers.fork import ForkPicker
from pi_context.cli.interactive.pickers.list import OptionPicker
from pi_context.cli.interactive.pickers.session import SessionPicker
from pi_context.cli.interactive.shell import Shell, say, show_last_exchanges
from pi_context.cli.interactive.slash.registry import BUILT_INS
from pi_context.cli.interactive.stats import cache_ratio, count_messages, format_tokens
from pi_context.cli.terminal_text import one_line
from pi_context.export import SessionDocument, export_file
from pi_context.resources.paths import expand_home
from pi_context.session_dirs import SessionInfo

__all__ = ["choose_option", "switch_to_session"]


@BUILT_INS.command("new", "/new", "start a new session")
async def new(shell: Shell, _args: str) -> None:
    shell.switch(await shell.agent.new_session())
    shell.console.print("[green]New session.[/green]")


@BUILT_INS.command("resume", "/resume", "resume a saved session of this project")
async def resume(shell: Shell, _args: str) -> None:
    if shell.agent.stored is not None:
        await _resume_stored(shell)
        return
    if shell.pickers:
        await _resume_picker(shell)
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
    chosen = next((s for s in shell.agent.sessions_here() if s.path == info.path), None)
    if chosen is None or not await switch_to_session(shell, chosen):
        return
    shell.console.print(Text(f"Resumed {info.path.name}.", style="green"))
    show_last_exchanges(shell)


async def _resume_stored(shell: Shell) -> None:
    """``/resume`` on a stored session: the sessions of its store and tenant, numbered (the
    current one marked), and the one chosen opened by the rules of a session file."""
    agent = shell.agent
    rows = await agent.stored_sessions()
    if not rows:
        say(shell, "No stored sessions in this store and tenant.")
        return
    current = agent.session.id
    for number, (session_id, entries, updated) in enumerate(rows, start=1):
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(updated)) if updated else "-"
        mark = " (current)" if session_id == current else ""
        shell.console.print(
            Text(f"{number:>3} {one_line(session_id)}  {entries} entries  {when}{mark}")
        )
    choice = (await shell.ask("Resume # (empty cancels): ")).strip()
    if not choice.isdigit() or not 1 <= int(choice) <= len(rows):
        return
    session_id = rows[int(choice) - 1][0]
    loaded = await agent.load_stored_session(session_id)
    recorded = loaded.session.header.get("cwd")
    here = agent.project_trust().directory
    in_place = False
    if isinstance(recorded, str) and not os.path.isdir(recorded):
        answer = await choose_option(
            shell,
            f"The session's folder does not exist any more: {one_line(recorded)}",
            [f"Continue in {here} (asks again next time)", "Cancel"],
        )
        if answer != 0:
            say(shell, "Session not opened.")
            return
        in_place = True
    elif isinstance(recorded, str) and os.path.realpath(recorded) != os.path.realpath(here):
        answer = await choose_option(
            shell,
            f"This session was recorded in {one_line(recorded)} (you are in {here}).",
            ["Resume it there (its tools run there, its AGENTS.md loads)", "Cancel"],
        )
        if answer != 0:
            say(shell, "Session not opened.")
            return
    shell.switch(await agent.open_stored_session(loaded, here=in_place))
    say(shell, f"Resumed stored session {one_line(session_id)}.", "green")
    show_last_exchanges(shell)


async def _resume_picker(shell: Shell) -> None:
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
        say(shell, "Resumed session", "green")
        show_last_exchanges(shell)


async def choose_option(shell: Shell, question: str, options: Sequence[str]) -> int | None:
    """One of ``options`` (its index), by picker or by number; ``None`` when cancelled."""
    if shell.pickers:
        return await shell.pick(OptionPicker(question, options))
    say(shell, question)
    for number, option in enumerate(options, start=1):
        say(shell, f"{number:>3} {option}")
    answer = (await shell.ask("Choose # (empty cancels): ")).strip()
    if answer.isdigit() and 1 <= int(answer) <= len(options):
        return int(answer) - 1
    return None


async def switch_to_session(shell: Shell, chosen: SessionInfo) -> bool:
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
            say(shell, "Session not opened.")
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
            say(shell, "Session not opened.")
            return False
    shell.switch(await agent.open_session(chosen.path))
    return True


@BUILT_INS.command("fork", "/fork", "new session from before an earlier message")
async def fork(shell: Shell, _args: str) -> None:
    """pi's ``/fork``: pick a user message of the file (the last one first); the new session
    holds what came before it, and the message's text goes back into the editor."""
    rows = shell.agent.fork_messages()
    if not rows:
        say(shell, NO_FORK_MESSAGES)
        return
    if shell.pickers:
        chosen = await shell.pick(ForkPicker(rows))
        if chosen is None:
            return
        entry_id = chosen.entry_id
    else:
        for number, row in enumerate(rows, start=1):
            shell.console.print(Text(f"{number:>3} {one_line(row.text, 80)}"))
        choice = (await shell.ask(f"Fork before message # [{len(rows)}] (q cancels): ")).strip()
        if choice.lower() in ("q", "quit"):
            return
        number = int(choice) if choice.isdigit() else (len(rows) if not choice else 0)
        if not 1 <= number <= len(rows):
            shell.console.print(f"No message number {escape(choice)}.")
            return
        entry_id = rows[number - 1].entry_id
    forked, text = await shell.agent.fork_before(entry_id)
    shell.switch(forked)
    shell.set_editor(text)
    say(shell, FORKED, "green")


@BUILT_INS.command("clone", "/clone", "new session holding the current path")
async def clone(shell: Shell, _args: str) -> None:
    """pi's ``/clone``: a new session holding the whole current path."""
    if shell.agent.session.leaf_id is None:
        shell.console.print(NOTHING_TO_CLONE)
        return
    shell.switch(await shell.agent.clone())
    shell.set_editor("")
    shell.console.print(Text(CLONED, style="green"))


@BUILT_INS.command("name", "/name [name]", "show or set the session name")
async def name(shell: Shell, args: str) -> None:
    session = shell.agent.session
    if not args:
        shell.console.print(f"Session name: {escape(session.name or '(none)')}")
        return
    shell.agent.set_session_name(args)
    shell.console.print(f"Session name: {escape(session.name or '')}")


@BUILT_INS.command("label", "/label [id] [text]", "label the current (or given) entry")
async def label(shell: Shell, args: str) -> None:
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


@BUILT_INS.command("session", "/session", "file, counts, tokens, cache, cost")
async def session_info(shell: Shell, _args: str) -> None:
    session = shell.agent.session
    counts = count_messages(session.entries)
    stats = shell.agent.stats()
    ratio = cache_ratio(stats)
    rows = [
        ("Name", session.name or "(none)"),
        _where(shell),
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


def _where(shell: Shell) -> tuple[str, str]:
    """The ``/session`` row saying where the session is kept."""
    stored = shell.agent.stored
    if stored is not None:
        return ("Stored", f"{escape(one_line(stored))} (in the store of --session URL#ID)")
    file = shell.agent.session.file_path
    return ("File", str(file) if file else "In-memory")


@BUILT_INS.command("export", "/export [file.html|file.jsonl]", "export the session")
async def export(shell: Shell, args: str) -> None:
    doc = SessionDocument.from_session(shell.agent.session)
    target = export_file(doc, args or None, cwd=shell.cwd)
    shell.console.print(f"Exported to: {escape(str(target))}")


IMPORT_USAGE = "Usage: /import <path.jsonl>"


@BUILT_INS.command(
    "import",
    "/import <path.jsonl>",
    "copy a session file here and open it (its ID and folder kept)",
)
async def import_session(shell: Shell, args: str) -> None:
    """pi's ``/import``: after a yes, the file is copied into this project's session folder
    (a name already there gets ``-1``, ``-2``... before ``.jsonl``; a file already in the
    folder is opened as it is) and opened like ``/resume`` would open it: its ID and its
    working directory kept. The original is not changed."""
    raw = args.strip().strip('"').strip("'")
    if not raw:
        say(shell, IMPORT_USAGE, "red")
        return
    agent = shell.agent
    source = Path(expand_home(raw))
    if not source.is_absolute():
        source = Path(agent.cwd) / source
    source = source.resolve()
    if not source.is_file():
        say(shell, f"Failed to import session: no such file: {source}", "red")
        return
    if session_dirs.read_header(source) is None:
        say(shell, f"Failed to import session: {source} is not a session file", "red")
        return
    directory = agent.session_dir()
    if directory is None:
        say(shell, "Failed to import session: this session is not saved (--no-session)", "red")
        return
    if await choose_option(shell, f"Replace current session with {raw}?", ["Yes", "No"]) != 0:
        say(shell, "Import cancelled")
        return
    target = directory / source.name
    copied = target.resolve() != source
    if copied:
        suffix = 1
        while target.exists():
            target = directory / f"{source.stem}-{suffix}{source.suffix}"
            suffix += 1
        directory.mkdir(parents=True, exist_ok=True)
        with source.open("rb") as reader, target.open("xb") as writer:
            shutil.copyfileobj(reader, writer)
    info = session_dirs.read_session_info(target)
    if info is None or not await switch_to_session(shell, info):
        if copied:  # nothing was opened: leave no stray copy
            target.unlink(missing_ok=True)
        say(shell, "Import cancelled")
        return
    say(shell, f"Session imported from: {raw}", "green")
    show_last_exchanges(shell)
