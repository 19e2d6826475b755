"""``pictx [options] [messages...]``: start the agent (interactive, ``-p`` or ``--mode json``).

Mode: ``--mode json`` streams events; ``-p``, piped stdin or a non-terminal stdout print the
final answer; otherwise interactive. Piped stdin is read, trimmed and put before the first
message; ``@file`` arguments are inlined as ``<file name="...">`` blocks, as pi does.

Sessions live where pi keeps them (see :mod:`pi_context.session_dirs`): a new one per run unless
``-c/--continue`` (the newest), ``-r/--resume`` (pick one), ``--session <path|id>`` or
``--no-session`` (in memory) says otherwise.

Trust boundaries: the ``sessionDir`` setting is taken from the project's ``.pi/settings.json``
only when the project is trusted (pi reads it before deciding trust), and an untrusted
project's settings file is not read at all, so a broken one cannot stop pictx either. A session
recorded in another directory runs its tools there, so opening one asks first (interactive)
or needs :data:`USE_SESSION_CWD_FLAG` (print and json modes).
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

import click
from msgspec import Struct

from pi_context import session_dirs
from pi_context.agent.tool_selection import (
    ToolSelection,
    ToolSelectionError,
    parse_tool_selection,
)
from pi_context.cli import collector
from pi_context.cli.app.agent_api import AgentApi, no_model_help
from pi_context.cli.app.app import AppConfig, RunningAgent, resolve_cli_model
from pi_context.cli.app.file_args import PromptPlan, plan_prompts
from pi_context.cli.app.model_scope import ScopeEntry, resolve_scope
from pi_context.cli.app.session_list import pick_session, session_rows
from pi_context.cli.command_line import typed_spelling
from pi_context.cli.terminal_text import echo
from pi_context.errors import PiContextError, SessionError
from pi_context.model.thinking import THINKING_LEVELS, parse_thinking_level
from pi_context.resources import paths
from pi_context.resources.settings import Settings, apply_http_proxy, load_settings
from pi_context.resources.trust import (
    TRUST_FILE_NAME,
    TrustDecision,
    TrustStore,
    canonical_dir,
    resolve_project_trust,
)

if TYPE_CHECKING:
    from pi_context.store.binding import StoreBinding

__all__ = [
    "USE_SESSION_CWD_FLAG",
    "build_prompts",
    "chat_command",
    "startup_settings",
]

USE_SESSION_CWD_FLAG = "--use-session-cwd"
"""The flag that lets print and json modes open a session recorded in another directory."""


def build_prompts(args: Sequence[str], stdin_text: str | None, cwd: str) -> list[str]:
    """pi's rule: first prompt = stdin + ``@file`` blocks + first message, no separators
    (the texts only; :func:`~pi_context.cli.app.file_args.plan_prompts` also has the images)."""
    return plan_prompts(args, stdin_text, cwd).prompts


def _pick_session(directory: Path) -> Path | None:
    sessions = session_dirs.list_sessions(directory)
    if not sessions:
        click.echo("No saved sessions in this project; starting a new one.", err=True)
        return None
    for row in session_rows(sessions):
        echo(row, err=True)
    choice = click.prompt("Resume #", default="1", err=True, show_default=True)
    picked = pick_session(sessions, str(choice))
    if picked is None:
        raise click.ClickException(f"no session number {choice}")
    return picked.path


def startup_settings(cwd: str, agent_dir: Path, *, trusted: bool | None = None) -> Settings:
    """The settings the command line itself reads (``sessionDir``), decided by trust; the
    global file's ``httpProxy`` is applied to the environment here, as pi does at start-up.

    The project file is read only when the project is trusted (saved decision, nothing that
    needs trust, or ``defaultProjectTrust: "always"``). Otherwise it is left unread, and when
    nobody decided yet the user is told, naming the file, that it was ignored.
    """
    global_settings = load_settings(agent_dir)
    apply_http_proxy(global_settings)
    if trusted is not None:  # -a / -na decide for this run
        return load_settings(agent_dir, cwd, trusted=True) if trusted else global_settings
    trust = resolve_project_trust(
        cwd,
        TrustStore(agent_dir / TRUST_FILE_NAME),
        default=global_settings.default_project_trust,
    )
    if trust.trusted:
        return load_settings(agent_dir, cwd, trusted=True)
    project_file = paths.project_config_dir(cwd) / "settings.json"
    if trust.source == "default" and project_file.exists():
        echo(
            f"pictx: warning: {project_file}: not read, the project is not trusted "
            "(its sessionDir and other settings are ignored; `pictx trust` trusts it)",
            err=True,
        )
    return global_settings


def _session_cwd_elsewhere(path: Path | StoreBinding, cwd: str) -> str | None:
    """The directory ``path`` (a session file or a stored session) was recorded in when it
    is not ``cwd`` (else ``None``)."""
    if isinstance(path, Path):
        header = session_dirs.read_header(path) if path.is_file() else None
    else:
        header = path.session.header
    recorded = header.get("cwd") if header else None
    if not isinstance(recorded, str) or canonical_dir(recorded) == canonical_dir(cwd):
        return None
    return recorded


def _may_run_in(
    path: Path | StoreBinding, config: AppConfig, *, interactive: bool, allowed: bool
) -> bool:
    """Whether the session at ``path`` (a file, or a stored session) may run its tools in
    the directory it records.

    The same directory needs nothing; another one needs ``allowed`` (the flag), or a yes to
    a question in interactive mode (Ctrl-C and anything but yes mean no). Print and json
    modes refuse with an error naming the flag.
    """
    recorded = _session_cwd_elsewhere(path, config.cwd)
    if recorded is None or allowed:
        return True
    if not interactive:
        where = path if isinstance(path, Path) else f"stored session {path.ref}"
        raise PiContextError(
            f"{where}: this session was recorded in {recorded}, not in {config.cwd}; its tools "
            f"would run there and that directory's AGENTS.md would load. Pass "
            f"{USE_SESSION_CWD_FLAG} to allow it"
        )
    echo(f"This session was recorded in {recorded} (you are in {config.cwd}).", err=True)
    return _ask_yes_no("Run its tools in that directory and load its AGENTS.md?")


def _ask_yes_no(question: str) -> bool:
    """A yes/no question on the terminal; no by default, and Ctrl-C or end of input mean no.

    ``asyncio.run`` turns the first Ctrl-C into a task cancellation that a blocking read never
    sees, so Python's own handler is put back while the question waits.
    """
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        return click.confirm(question, default=False, err=True)
    except click.Abort:
        click.echo("", err=True)
        return False
    finally:
        signal.signal(signal.SIGINT, previous)


async def _start(
    config: AppConfig,
    *,
    cont: bool,
    resume: bool,
    session_arg: str | None,
    model_spec: str | None,
    interactive: bool,
    session_id: str | None = None,
    use_session_cwd: bool = False,
    fork_arg: str | None = None,
    stored: tuple[str, str] | None = None,
    tenant: str = "",
) -> RunningAgent | None:
    # a named model is resolved first, so that a bad --model fails before any picker
    named = config.model_resolver(model_spec, None) if model_spec is not None else None
    directory = config.session_dir
    path: Path | StoreBinding | None = None
    if stored is not None:  # --session URL#ID: resumed by the rules of a session file
        store = await config.open_store(stored[0])
        path = await config.find_stored(store, tenant, stored[1])
        if path is None:  # the tenant holds no such id: a new stored session with it
            model = named or config.model_resolver(None, None)
            agent = await config.create_stored(store, tenant, model, session_id=stored[1])
            return RunningAgent(agent, config)
    if fork_arg is not None:
        forked = _fork_into_cwd(fork_arg, config, session_id)
        model = named or config.model_resolver(None, forked)
        return _warn_session_problems(RunningAgent(await config.open(forked, model), config))
    if session_id is not None:
        found = _session_with_id(directory, session_id)
        if found is None:
            if directory is not None:
                echo(
                    f"Warning: No project session found with id '{session_id}'; "
                    "creating a new session with that id.",
                    err=True,
                )
            model = named or config.model_resolver(None, None)
            return RunningAgent(await config.create(model, session_id=session_id), config)
        path = found
    elif session_arg is not None and stored is None:
        local = directory or session_dirs.default_session_dir(config.cwd, config.agent_dir)
        match = session_dirs.resolve_session_arg(
            session_arg, cwd=config.cwd, directory=local, agent=config.agent_dir
        )
        if match.other_project:
            echo(f"Session found in different project: {match.cwd}", err=True)
            confirmed = interactive and click.confirm(
                "Fork this session into current directory?", default=False, err=True
            )
            if not confirmed:
                return None
            target = directory or session_dirs.default_session_dir(config.cwd, config.agent_dir)
            forked = session_dirs.fork_from(match.path, target, cwd=config.cwd)
            model = named or config.model_resolver(None, forked)
            return _warn_session_problems(RunningAgent(await config.open(forked, model), config))
        path = match.path
    elif cont and directory is not None:
        custom = directory != session_dirs.default_session_dir(config.cwd, config.agent_dir)
        path = session_dirs.find_latest_session(directory, cwd=config.cwd if custom else None)
        _say_skipped(directory, path)
    elif resume and directory is not None:
        path = _pick_session(directory)
    if path is not None and not _may_run_in(
        path, config, interactive=interactive, allowed=use_session_cwd
    ):
        where = path if isinstance(path, Path) else f"stored session {path.ref}"
        echo(f"Session not opened: {where}", err=True)
        return None
    resumed = path if isinstance(path, Path) or path is None else path.session
    model = named or config.model_resolver(None, resumed)
    if path is not None:
        return _warn_session_problems(RunningAgent(await config.open(path, model), config))
    return RunningAgent(await config.create(model), config)


def _fork_into_cwd(arg: str, config: AppConfig, session_id: str | None) -> Path:
    """``--fork PATH|ID``: copy the session ``arg`` names into a new session of this
    directory (``session_id`` = ``--session-id``, which must not exist here yet)."""
    target = config.session_dir or session_dirs.default_session_dir(config.cwd, config.agent_dir)
    if session_id is not None and _session_with_id(target, session_id) is not None:
        raise click.ClickException(f"Session already exists with id '{session_id}'")
    if session_dirs.looks_like_path(arg):
        source = Path(os.path.abspath(os.path.join(config.cwd, paths.expand_home(arg))))
    else:
        source = session_dirs.resolve_session_arg(
            arg, cwd=config.cwd, directory=target, agent=config.agent_dir
        ).path
    try:
        return session_dirs.fork_from(source, target, cwd=config.cwd, session_id=session_id)
    except SessionError as exc:
        raise click.ClickException(str(exc)) from exc


def _model_scope(models_list: str | None, setting: object, agent_dir: Path) -> list[ScopeEntry]:
    """``--models`` (else the ``enabledModels`` setting) resolved; warnings on stderr."""
    if models_list is not None:
        patterns = [p.strip() for p in models_list.split(",") if p.strip()]
    else:
        patterns = [p for p in setting if isinstance(p, str)] if isinstance(setting, list) else []
    if not patterns:
        return []
    from pi_context.providers import registry as model_registry

    scope, warnings = resolve_scope(patterns, model_registry.load_registry(agent_dir))
    for warning in warnings:
        echo(f"Warning: {warning}", err=True)
    return scope


def _check_session_id(session_id: str, *, cont: bool, resume: bool, session: str | None) -> None:
    """pi's ``--session-id`` rules: its shape, and no other way of choosing the session."""
    if not session_dirs.SESSION_ID_PATTERN.match(session_id):
        raise click.ClickException(
            "Session id must be non-empty, contain only alphanumeric characters, '-', '_', "
            "and '.', and start and end with an alphanumeric character"
        )
    others = [
        flag
        for flag, on in (
            ("--session", session is not None),
            ("--continue", cont),
            ("--resume", resume),
        )
        if on
    ]
    if others:
        raise click.ClickException(f"--session-id cannot be combined with {', '.join(others)}")


def _check_fork(*, cont: bool, resume: bool, session: str | None, no_session: bool) -> None:
    """pi's ``--fork`` rule: it chooses the session itself, and writes one."""
    others = [
        flag
        for flag, on in (
            ("--session", session is not None),
            ("--continue", cont),
            ("--resume", resume),
            ("--no-session", no_session),
        )
        if on
    ]
    if others:
        raise click.ClickException(f"--fork cannot be combined with {', '.join(others)}")


def _session_with_id(directory: Path | None, session_id: str) -> Path | None:
    """The project's session file whose header id is exactly ``session_id``."""
    if directory is None or not directory.is_dir():
        return None
    return next((s.path for s in session_dirs.list_sessions(directory) if s.id == session_id), None)


def _list_models(search: str | None) -> int:
    from pi_context.cli.commands.model_list import model_table
    from pi_context.providers import registry as model_registry

    registry = model_registry.load_registry(paths.agent_dir())
    if registry.errors:
        echo("Warning: errors loading models.json:\n" + "\n".join(registry.errors), err=True)
    for problem in registry.auth.warnings if registry.auth is not None else ():
        echo(f"Warning: {problem}", err=True)
    available = [entry.info for entry in registry.available()]
    if not available:
        echo(
            "No models available. Set an API key (e.g. ANTHROPIC_API_KEY or OPENAI_API_KEY) "
            "or add a provider to models.json."
        )
        return 0
    lines = model_table(available, search)
    if not lines:
        echo(f'No models matching "{search}"')
        return 0
    for line in lines:
        echo(line)
    return 0


def _say_skipped(directory: Path, chosen: Path | None) -> None:
    """``-c`` passes over session files whose header cannot be read: never silently."""
    try:
        floor = chosen.stat().st_mtime if chosen is not None else None
        newer = [
            p
            for p in directory.glob("*.jsonl")
            if (floor is None or p.stat().st_mtime > floor) and session_dirs.read_header(p) is None
        ]
    except OSError:
        return
    for skipped in sorted(newer):
        then = f"continuing {chosen.name}" if chosen is not None else "starting a new session"
        click.echo(
            f"pictx: warning: {skipped}: not a readable session file (no valid header); {then}",
            err=True,
        )


_PROBLEMS_SHOWN = 5


def _warn_session_problems(app: RunningAgent) -> RunningAgent:
    """Say once, on stderr, what was wrong with the resumed file (skipped torn or malformed
    lines, fields of the wrong type), a few lines at most. The context is projected first, so
    the entries it reads have been checked."""
    app.session.stored_projection()
    problems = app.session.problems
    for problem in problems[:_PROBLEMS_SHOWN]:
        echo(f"pictx: warning: {problem}", err=True)
    if len(problems) > _PROBLEMS_SHOWN:
        more = len(problems) - _PROBLEMS_SHOWN
        where = app.session.file_path or "URL#ID"  # a stored session has no file
        echo(
            f"pictx: warning: … and {more} more problem(s); `pictx session info {where}` "
            "lists them",
            err=True,
        )
    return app


class RunOptions(Struct, frozen=True, kw_only=True):
    """What of the command line a run needs beyond :class:`AppConfig`: which session to open
    (``cont``, ``resume``, ``session``, ``session_id``, ``fork``, ``use_session_cwd``), the
    ``model`` asked for, a session ``name`` to record and ``verbose`` start-up output."""

    cont: bool = False
    resume: bool = False
    session: str | None = None
    model: str | None = None
    name: str | None = None
    session_id: str | None = None
    use_session_cwd: bool = False
    fork: str | None = None
    verbose: bool = False
    stored: tuple[str, str] | None = None
    """``--session URL#ID``: the store's URL and the session id."""
    tenant: str = ""
    """``--tenant``: the stored session's tenant."""


async def _run(
    config: AppConfig,
    options: RunOptions,
    plan: PromptPlan,
    mode: str,
    notes: Sequence[str] = (),
) -> int:
    interactive = mode == "interactive"
    prompts = plan.prompts
    protocol_out = None
    if mode == "rpc":  # before anything (extensions included) can write to stdout
        from pi_context.cli.rpc import take_over_stdout

        protocol_out = take_over_stdout()
    app = await _start(
        config,
        cont=options.cont,
        resume=options.resume,
        session_arg=options.session,
        model_spec=options.model,
        interactive=interactive,
        session_id=options.session_id,
        use_session_cwd=options.use_session_cwd,
        fork_arg=options.fork,
        stored=options.stored,
        tenant=options.tenant,
    )
    collector.resume()  # the agent is built: the start-up is over
    if app is None:
        return 0
    host: AgentApi = app
    _warn_if_untrusted(app.agent.resources.trust, app.agent.cwd)
    for problem in app.agent.resources.packages.diagnostics:  # once, at start-up
        echo(f"pictx: warning: {problem.message}", err=True)
    _warn_unknown_tools(config.tool_selection, app.agent.get_all_tools())
    model = app.agent.model_or_none
    if model is not None and (prompts or interactive):
        from pi_context.cli.app.model_check import unlisted_model_warning

        unlisted = await unlisted_model_warning(model)
        if unlisted is not None:
            click.echo(f"pictx: warning: {unlisted}", err=True)
    try:
        if options.name is not None:
            app.session.append_session_info(options.name)
        if interactive:
            from pi_context.cli.interactive.mode import InteractiveShell, history_for

            shell = InteractiveShell(
                host,
                history=history_for(config.agent_dir),
                notes=notes[-1:],
                verbose=options.verbose,
            )
            try:
                return await shell.run(prompts, images=plan.images)
            finally:
                if shell.agent is not host:
                    await shell.agent.aclose()  # extensions get session_shutdown
        if protocol_out is not None:
            return await _serve_rpc(app, protocol_out)
        from pi_context.cli.print_mode import run_print

        if app.model_info() is None:
            raise PiContextError(no_model_help(app.agent_dir))
        if notes and mode != "json":
            click.echo(f"pictx: {notes[-1]}", err=True)
        if not prompts:
            raise click.ClickException("no prompt given (pass a message, @file or pipe stdin)")
        code = await run_print(
            app,
            prompts,
            mode="json" if mode == "json" else "text",
            out=sys.stdout,
            err=sys.stderr,
            header=app.session.header,
            images=plan.images,
        )
        if code < 128 and app.agent.mcp is not None:  # not a signal: exit without waiting
            app.agent.mcp.leave_servers_at_close()  # for the MCP servers to stop
        return code
    finally:
        # the run settles (its abort is stored) before the file closes, and the embedded
        # model stops and is freed here, not during interpreter shutdown
        try:
            await app.agent.aclose()
        finally:
            await config.close_stores()  # a --session URL#ID store's connections
        close = getattr(app.agent.model_or_none, "aclose", None)
        if close is not None:
            await close()  # the adapter's HTTP connections, before the loop closes
        await _release_local_models()


async def _release_local_models() -> None:
    """Stop and free the embedded model if this process loaded it (never imports it)."""
    local = sys.modules.get("pi_context.providers.local_cache")
    if local is not None:
        await asyncio.to_thread(local.release_all)


@click.command(
    "chat",
    context_settings={"help_option_names": ["-h", "--help"], "ignore_unknown_options": False},
)
@click.option("-p", "--print", "print_mode", is_flag=True, help="One-shot: print the final answer.")
@click.option(
    "--mode",
    type=click.Choice(["text", "json", "rpc"]),
    default=None,
    help="json: every event as a JSON line; rpc: pi's JSON-lines protocol on stdin/stdout.",
)
@click.option(
    "-c", "--continue", "cont", is_flag=True, help="Continue the newest session of this project."
)
@click.option("-r", "--resume", is_flag=True, help="Pick a session of this project to resume.")
@click.option(
    "--session",
    default=None,
    metavar="PATH|ID",
    help="Open a session file or id (prefix), or URL#ID: a session of a store.",
)
@click.option(
    "--tenant",
    default=None,
    metavar="T",
    help="The tenant of a --session URL#ID stored session (default: none).",
)
@click.option("--session-dir", default=None, metavar="DIR", help="Keep sessions in DIR.")
@click.option("--no-session", is_flag=True, help="Do not save the session.")
@click.option(
    USE_SESSION_CWD_FLAG,
    "use_session_cwd",
    is_flag=True,
    help="Open a session recorded in another directory without asking (its tools run there).",
)
@click.option(
    "--model", default=None, metavar="SPEC", help="provider/model (or scripted:<file> for tests)."
)
@click.option(
    "--models",
    "models_list",
    default=None,
    metavar="LIST",
    help="Models Ctrl+P cycles through (patterns, globs, :level); overrides enabledModels.",
)
@click.option(
    "--provider", default=None, metavar="NAME", help="Look the --model name up in this provider."
)
@click.option(
    "--api-key",
    default=None,
    metavar="KEY",
    help="API key for the model's provider (this run only, never saved).",
)
@click.option(
    "--session-id",
    default=None,
    metavar="ID",
    help="Open the project's session with this id, or start a new one with it.",
)
@click.option(
    "--fork",
    "fork_arg",
    default=None,
    metavar="PATH|ID",
    help="Copy a session (file or id prefix) into a new session of this directory.",
)
@click.option(
    "--list-models",
    "list_models",
    is_flag=False,
    flag_value="",
    default=None,
    metavar="[SEARCH]",
    help="List the models with a key (fuzzy SEARCH over provider and id) and exit.",
)
@click.option(
    "--offline",
    is_flag=True,
    help="No network at startup (also PI_OFFLINE=1); model requests still go out.",
)
@click.option(
    "--verbose",
    is_flag=True,
    help="Interactive: show the startup details (context files, skills, extensions, scope).",
)
@click.option(
    "-t",
    "--tools",
    default=None,
    metavar="LIST",
    help="Only these tools (names, a* patterns), or +x,-y.",
)
@click.option(
    "-nt", "--no-tools", is_flag=True, help="No tools at all (unless --tools lists them)."
)
@click.option("-nbt", "--no-builtin-tools", is_flag=True, help="None of the default tools.")
@click.option(
    "-xt", "--exclude-tools", default=None, metavar="LIST", help="Never register these tools."
)
@click.option("--no-mcp", is_flag=True, help="Do not connect the MCP servers of mcp.json this run.")
@click.option(
    "--thinking",
    default=None,
    metavar="LEVEL",
    help="Thinking level: off, minimal, low, medium, high, xhigh, max (clamped to the model).",
)
@click.option("-nc", "--no-context-files", is_flag=True, help="Do not load AGENTS.md / CLAUDE.md.")
@click.option(
    "-e",
    "--extension",
    "extension_paths",
    multiple=True,
    metavar="PATH",
    help="Load an extension (.py file or package; repeatable), also with --no-extensions.",
)
@click.option(
    "-ne", "--no-extensions", is_flag=True, help="Do not load discovered or installed extensions."
)
@click.option(
    "--skill",
    "skill_paths",
    multiple=True,
    metavar="PATH",
    help="Load a skill file or directory (repeatable), also with -ns.",
)
@click.option(
    "-ns", "--no-skills", is_flag=True, help="Do not load discovered or configured skills."
)
@click.option(
    "--prompt-template",
    "prompt_template_paths",
    multiple=True,
    metavar="PATH",
    help="Load a prompt-template file or directory (repeatable), also with -np.",
)
@click.option(
    "-np",
    "--no-prompt-templates",
    is_flag=True,
    help="Do not load discovered or configured prompt templates.",
)
@click.option(
    "-a/-na",
    "--approve/--no-approve",
    "approve",
    default=None,
    help="Trust / do not trust this project for this run (default: the saved decision).",
)
@click.option(
    "--system-prompt", default=None, metavar="TEXT|FILE", help="Replace the default prompt."
)
@click.option(
    "--append-system-prompt",
    multiple=True,
    metavar="TEXT|FILE",
    help="Add to the prompt (repeatable).",
)
@click.option("-n", "--name", default=None, help="Name the session.")
@click.option(
    "--export",
    "export_path",
    default=None,
    metavar="SESSION.jsonl",
    help="Write SESSION as HTML and exit.",
)
@click.argument("messages", nargs=-1)
def chat_command(
    print_mode: bool,
    mode: str | None,
    cont: bool,
    resume: bool,
    session: str | None,
    tenant: str | None,
    session_dir: str | None,
    no_session: bool,
    use_session_cwd: bool,
    model: str | None,
    models_list: str | None,
    provider: str | None,
    api_key: str | None,
    session_id: str | None,
    fork_arg: str | None,
    list_models: str | None,
    offline: bool,
    verbose: bool,
    tools: str | None,
    no_tools: bool,
    no_builtin_tools: bool,
    exclude_tools: str | None,
    no_mcp: bool,
    thinking: str | None,
    no_context_files: bool,
    extension_paths: tuple[str, ...],
    no_extensions: bool,
    skill_paths: tuple[str, ...],
    no_skills: bool,
    prompt_template_paths: tuple[str, ...],
    no_prompt_templates: bool,
    approve: bool | None,
    system_prompt: str | None,
    append_system_prompt: tuple[str, ...],
    name: str | None,
    export_path: str | None,
    messages: tuple[str, ...],
) -> int:
    """Talk to the agent: interactive in a terminal, or one-shot with -p / --mode json."""
    cwd = os.getcwd()
    if export_path is not None:
        from pi_context.export import SessionDocument, export_file

        doc = SessionDocument.load(export_path)
        for problem in doc.problems:
            echo(f"pictx: warning: {problem}", err=True)
        # HTML, or the active branch as a session for a .jsonl name (as /export does)
        written = export_file(doc, messages[0] if messages else None, cwd=Path(cwd))
        echo(f"Exported to: {written}")
        return 0
    if offline or os.environ.get("PI_OFFLINE", "").lower() in ("1", "true", "yes"):
        os.environ["PI_OFFLINE"] = "1"
        os.environ["PI_SKIP_VERSION_CHECK"] = "1"
    if list_models is not None:
        return _list_models(list_models or None)
    agent_dir = paths.agent_dir()
    settings = startup_settings(cwd, agent_dir, trusted=approve)  # warns about an untrusted file
    scope = _model_scope(models_list, settings.get("enabledModels"), agent_dir)
    if scope and model is None and not (cont or resume or session or session_id or fork_arg):
        # A new session starts on the saved default model when the scope holds it, else on
        # the scope's first model (pi's rule); the entry's level comes with it.
        saved = f"{settings.get('defaultProvider')}/{settings.get('defaultModel')}"
        start = next((e for e in scope if e.key == saved), scope[0])
        model = start.key
        thinking = thinking or start.level
    if provider is not None and model is None:
        raise click.ClickException(
            f"--provider requires --model (for example: --provider {provider} --model <pattern>)"
        )
    if api_key is not None and model is None:
        raise click.ClickException(
            "--api-key requires a model to be specified via --model, --provider/--model, "
            "or --models"
        )
    selection = None
    if tools is not None or no_tools or no_builtin_tools or exclude_tools is not None:
        try:
            selection = parse_tool_selection(
                tools,
                no_tools=no_tools,
                no_builtin_tools=no_builtin_tools,
                exclude=exclude_tools,
                flag=typed_spelling(click.get_current_context(), "-t", "--tools"),
            )
        except ToolSelectionError as exc:
            raise click.ClickException(str(exc)) from exc
    stored = None
    if session is not None:
        from pi_context.cli.commands.store import stored_session_url

        stored = stored_session_url(session)  # URL#ID: a session of a store
    if tenant is not None and stored is None:
        raise click.ClickException("--tenant needs --session URL#ID (a stored session)")
    if fork_arg is not None:
        _check_fork(cont=cont, resume=resume, session=session, no_session=no_session)
    if session_id is not None:
        _check_session_id(session_id, cont=cont, resume=resume, session=session)
    if model is not None and thinking is None:  # a ":<level>" suffix counts without --thinking
        suffix = model.rpartition(":")[2]
        thinking = suffix if ":" in model and parse_thinking_level(suffix) else None
    if thinking is not None and parse_thinking_level(thinking) is None:
        echo(
            f'Warning: Invalid thinking level "{thinking}". '
            f"Valid values: {', '.join(THINKING_LEVELS)}",
            err=True,
        )
        thinking = None
    if name is not None:
        name = name.strip()
        if not name:
            raise click.ClickException("--name requires a non-empty value")
    exclusive = [
        flag
        for flag, on in (("--continue", cont), ("--resume", resume), ("--session", session))
        if on
    ]
    if len(exclusive) > 1:
        raise click.ClickException(f"{' and '.join(exclusive)} cannot be combined")
    if mode == "rpc" and any(m.startswith("@") for m in messages):
        click.echo("pictx: error: @file arguments are not supported in RPC mode", err=True)
        return 1
    stdin_text = None
    if mode != "rpc" and not sys.stdin.isatty():
        stdin_text = sys.stdin.read().strip()
    if mode in ("json", "rpc"):
        run_mode = mode
    elif print_mode or stdin_text is not None or not sys.stdout.isatty():
        run_mode = "print"
    else:
        run_mode = "interactive"
    directory: Path | None = None
    if not no_session:
        # pi reads the project's sessionDir before deciding trust; here only a trusted one
        setting = settings.get("sessionDir")
        directory = session_dirs.session_dir(
            cwd,
            agent=agent_dir,
            cli_dir=session_dir,
            setting=setting if isinstance(setting, str) else None,
        )
    notes: list[str] = []  # which model was chosen without --model, and why
    config = AppConfig(
        extension_paths=tuple(os.path.abspath(p) for p in extension_paths),
        discover_extensions=not no_extensions,
        trusted=approve,
        cwd=cwd,
        agent_dir=agent_dir,
        session_dir=directory,
        no_context_files=no_context_files,
        skill_paths=skill_paths,
        no_skills=no_skills,
        prompt_template_paths=prompt_template_paths,
        no_prompt_templates=no_prompt_templates,
        system_prompt=system_prompt,
        append_system_prompt=append_system_prompt,
        model_resolver=lambda spec, resumed: resolve_cli_model(
            spec,
            agent_dir=agent_dir,
            resumed=resumed,
            # --provider and --api-key belong to the --model of the command line
            provider=provider if spec is not None and spec == model else None,
            api_key=api_key if spec is not None and spec == model else None,
            why=notes.append,
            settings=settings,
        ),
        thinking=thinking,
        tool_selection=selection,
        scope=tuple(scope),
        mcp=not no_mcp,
    )
    # RPC mode ignores positional messages, as pi does: prompts arrive as commands
    plan = PromptPlan([]) if run_mode == "rpc" else plan_prompts(messages, stdin_text, cwd)
    options = RunOptions(
        cont=cont,
        resume=resume,
        session=session,
        model=model,
        name=name,
        session_id=session_id,
        use_session_cwd=use_session_cwd,
        fork=fork_arg,
        verbose=verbose,
        stored=stored,
        tenant=tenant or "",
    )
    return asyncio.run(_run(config, options, plan, run_mode, notes))


def _warn_unknown_tools(selection: ToolSelection | None, registered: list[str]) -> None:
    """A ``--tools`` entry no tool answers to is named on stderr (pi drops it silently)."""
    for entry in selection.unknown_names(registered) if selection is not None else []:
        echo(f"pictx: warning: --tools: no tool is called {entry!r}; it is ignored", err=True)


async def _serve_rpc(app: RunningAgent, out: BinaryIO) -> int:
    from pi_context.cli.rpc import run_rpc

    if app.agent.model_or_none is None:
        raise PiContextError(no_model_help(app.agent_dir))
    try:
        return await run_rpc(app, stdin_fd=sys.stdin.fileno(), out=out)
    finally:
        out.close()


def _warn_if_untrusted(trust: TrustDecision, cwd: str | os.PathLike[str]) -> None:
    """Say so when project resources are being ignored for want of a trust decision.

    pi asks in its interactive mode; pictx never blocks on a question, so it tells the user
    what is left out and how to change that (``pictx trust``), once, on stderr.
    """
    if trust.trusted or trust.source != "default":
        return
    echo(
        f"pictx: note: {cwd} is not trusted, so its .pi/SYSTEM.md, APPEND_SYSTEM.md, "
        "skills, settings and extensions are ignored (context files still apply). "
        "Run `pictx trust` to trust it.",
        err=True,
    )
