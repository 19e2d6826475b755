"""How an :class:`~pi_context.agent.session.AgentSession` is put together from its options.

:class:`AgentOptions` are the keyword options of ``AgentSession.create`` / ``open``;
:func:`assemble` loads the resources (and, when asked, the extensions) and returns the shared
:class:`~._state.AgentState` and the tools the session starts with.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal, TypedDict, cast, get_args

from pi_context._keywords import check_keywords
from pi_context.extensions.discovery import has_extensions_to_load, settings_extension_paths
from pi_context.extensions.reasons import SessionReason
from pi_context.mcp import McpManager
from pi_context.model import Model
from pi_context.resources.loader import ResourceLoader
from pi_context.resources.settings import bash_settings_for
from pi_context.session import Session
from pi_context.tools import BUILTIN_TOOL_NAMES, RecallTool, Tool, default_tools
from pi_context.tools.registry import optional_tools

from ._state import AgentState, Sleep
from .tool_selection import ToolSelection

if TYPE_CHECKING:
    from pi_context.extensions.runner import ExtensionRunner

__all__ = [
    "DEFAULT_RECALL_MODE",
    "RECALL_MODES",
    "AgentOptions",
    "RecallMode",
    "assemble",
    "checked_options",
    "recall_mode",
    "session_environment",
]


class AgentOptions(TypedDict, total=False):
    """Options of :meth:`AgentSession.create` and :meth:`AgentSession.open` (all optional).

    ``model``: the model, or a ``"provider/id"`` text resolved through the model registry
    (built-ins plus ``<agent_dir>/models.json``) when the session is created; a missing key
    for it raises :class:`~pi_context.errors.ProviderError` then (``None``: prompting raises
    until one is set). ``agent_dir``: pi's
    ``~/.pi/agent`` (settings, skills, extensions). ``settings``: merged over the loaded settings
    files. ``tools``: replaces the built-in tools (the ``recall`` tool is still added as ``recall``
    says, unless ``tools`` holds a tool of that name). ``extensions``: a ready runner, or
    ``load_extensions=True`` discovers them (agent dir, trusted project, entry points);
    ``extension_paths`` are loaded as well, with or without discovery (pi's ``-e``).
    ``prompt_template_paths``, ``no_prompt_templates``: pi's ``--prompt-template`` and ``-np``;
    ``skill_paths``, ``no_skills``: pi's ``--skill`` and ``-ns`` (explicit paths load either way).
    ``trusted``: the project's trust decision (``None``: decided as pi does without asking). ``no_context_files``,
    ``system_prompt``, ``append_system_prompt``: pi's ``-nc``, ``--system-prompt`` and
    ``--append-system-prompt``. ``session_id``, ``timestamp``: the new session's header id and
    ISO-8601 time (``create`` only; pi names a session file after both); ``parent_session``:
    the ``parentSession`` path stored in the new header (``create`` only). ``ids``, ``clock``,
    ``sleep``: injectable for tests. ``tool_selection``: pi's ``--tools`` / ``--no-tools`` /
    ``--no-builtin-tools`` / ``--exclude-tools`` (:mod:`.tool_selection`). ``start_reason``,
    ``previous_session_file``: what extensions' ``session_start`` is told (default ``startup``
    for ``create``, ``resume`` for ``open``; ``new`` / ``fork`` when a session replaces
    another). ``mcp``: connect the servers of ``mcp.json`` (global, and the project's when
    trusted) in the background and offer their tools (off by default; the CLI turns it on
    unless ``--no-mcp``). ``recall``: when the ``recall`` tool is offered (:data:`RecallMode`;
    default the ``recall`` setting, else ``auto``); it is added to the built-ins or to
    ``tools`` alike.

    Every option is checked at the call (:func:`checked_options`): an unknown keyword or a
    value of the wrong type raises :class:`TypeError` there, never later.
    """

    model: Model | str | None
    agent_dir: str | os.PathLike[str] | None
    settings: Mapping[str, Any] | None
    tools: Sequence[Tool] | None
    extensions: ExtensionRunner | None
    trusted: bool | None
    no_context_files: bool
    system_prompt: str | None
    append_system_prompt: Sequence[str] | None
    load_extensions: bool
    ids: Callable[[], str] | None
    clock: Callable[[], int] | None
    sleep: Sleep | None
    session_id: str | None
    timestamp: str | None
    parent_session: str | None
    tool_selection: ToolSelection | None
    start_reason: SessionReason
    previous_session_file: str | None
    mcp: bool
    recall: str | None
    extension_paths: Sequence[str] | None
    skill_paths: Sequence[str] | None
    no_skills: bool
    prompt_template_paths: Sequence[str] | None
    no_prompt_templates: bool


def _optional(*types: type) -> Callable[[Any], bool]:
    return lambda value: value is None or isinstance(value, types)


def _text_sequence(value: Any) -> bool:
    return value is None or (
        isinstance(value, Sequence)
        and not isinstance(value, str | bytes)
        and all(isinstance(item, str) for item in value)
    )


def _tool_sequence(value: Any) -> bool:
    return value is None or (
        isinstance(value, Sequence)
        and not isinstance(value, str | bytes)
        and all(isinstance(item, Tool) for item in value)
    )


def _callable_or_none(value: Any) -> bool:
    return value is None or callable(value)


def _extension_runner(value: Any) -> bool:
    if value is None:
        return True
    from pi_context.extensions.runner import ExtensionRunner

    return isinstance(value, ExtensionRunner)


def _start_reason(value: Any) -> bool:
    return value in get_args(SessionReason)


def _session_store(value: Any) -> bool:
    return value is None or all(
        callable(getattr(value, name, None)) for name in ("load", "append", "lease")
    )


def _session_ref(value: Any) -> bool:
    if value is None:
        return True
    from pi_context.store.base import SessionRef  # the store package, only when one is used

    return isinstance(value, SessionRef)


_PATH = (str, os.PathLike)

_CHECKS: Final[Mapping[str, tuple[Callable[[Any], bool], str]]] = {
    "cwd": (_optional(*_PATH), "a path or None"),
    "session_file": (_optional(*_PATH), "a path or None"),
    "model": (_optional(Model, str), 'a Model, a "provider/id" text or None'),
    "agent_dir": (_optional(*_PATH), "a path or None"),
    "settings": (_optional(Mapping), "a mapping or None"),
    "tools": (_tool_sequence, "a sequence of pi_context.Tool or None"),
    "extensions": (_extension_runner, "an ExtensionRunner or None"),
    "trusted": (_optional(bool), "True, False or None"),
    "no_context_files": (_optional(bool), "a bool"),
    "skill_paths": (_text_sequence, "a sequence of paths (not one text) or None"),
    "no_skills": (_optional(bool), "a bool"),
    "prompt_template_paths": (_text_sequence, "a sequence of paths (not one text) or None"),
    "no_prompt_templates": (_optional(bool), "a bool"),
    "system_prompt": (_optional(str), "a text or None"),
    "append_system_prompt": (_text_sequence, "a sequence of texts (not one text) or None"),
    "load_extensions": (_optional(bool), "a bool"),
    "ids": (_callable_or_none, "a callable returning ids, or None"),
    "clock": (_callable_or_none, "a callable returning milliseconds, or None"),
    "sleep": (_callable_or_none, "an async sleep function, or None"),
    "session_id": (_optional(str), "a text or None"),
    "timestamp": (_optional(str), "an ISO-8601 text or None"),
    "parent_session": (_optional(str), "a path text or None"),
    "tool_selection": (_optional(ToolSelection), "a ToolSelection or None"),
    "start_reason": (_start_reason, " or ".join(repr(r) for r in get_args(SessionReason))),
    "previous_session_file": (_optional(str), "a path text or None"),
    "extension_paths": (_text_sequence, "a sequence of paths (not one text) or None"),
    "mcp": (_optional(bool), "a bool"),
    "store": (_session_store, "a session store (pi_context.store.open_store) or None"),
    "tenant": (_optional(str), "a text or None"),
    "ref": (_session_ref, "a pi_context.store.SessionRef or None"),
    "recall": (
        lambda v: v is None or v in ("auto", "always", "off"),
        "'auto', 'always', 'off' or None",
    ),
}
_CALL_KEYWORDS: Final[Mapping[str, tuple[str, ...]]] = {
    "create": ("cwd", "session_file", "store", "tenant"),
    "open": ("cwd", "store", "ref"),
    "adopt": ("cwd",),
}


def _check_tool_names(where: str, tools: Sequence[Tool] | None) -> None:
    """Two tools of one name: the later one must ask to replace a built-in, and only that."""
    seen: set[str] = set()
    for tool in tools or ():
        if tool.name in seen and not (tool.name in BUILTIN_TOOL_NAMES and tool.replaces_builtin):
            hint = (
                " (pass replaces_builtin=True to replace the built-in)"
                if tool.name in BUILTIN_TOOL_NAMES
                else ""
            )
            raise ValueError(
                f"AgentSession.{where}(): tools has two tools named {tool.name!r}{hint}"
            )
        seen.add(tool.name)


def checked_options(where: str, options: Mapping[str, Any]) -> AgentOptions:
    """``options`` of ``AgentSession.<where>`` checked: an unknown keyword raises
    :class:`TypeError` naming it and the closest known one, a value of the wrong type raises
    :class:`TypeError` naming the option, and a ``model`` text is resolved through the model
    registry (:class:`~pi_context.errors.ModelNotFoundError` for an unknown model,
    :class:`~pi_context.errors.ProviderError` when its key is missing)."""
    known = [*_CALL_KEYWORDS.get(where, ()), *AgentOptions.__annotations__]
    check_keywords(f"AgentSession.{where}", options, known)
    for name, value in options.items():
        check, wanted = _CHECKS[name]
        if not check(value):
            raise TypeError(
                f"AgentSession.{where}(): {name} must be {wanted}, not {type(value).__name__}"
            )
    _check_tool_names(where, options.get("tools"))
    checked = cast(
        AgentOptions, {k: v for k, v in options.items() if k not in _CALL_KEYWORDS[where]}
    )
    model = options.get("model")
    if isinstance(model, str):
        from pi_context.providers import load_registry, resolve_model

        agent_dir = options.get("agent_dir")
        registry = load_registry(Path(agent_dir) if agent_dir is not None else None)
        checked["model"] = resolve_model(model, registry=registry, require_credentials=True)
    return checked


def assemble(session: Session, cwd: str, options: AgentOptions) -> tuple[AgentState, list[Tool]]:
    """The shared state of a session in ``cwd`` and its starting tools."""
    loader = ResourceLoader(
        cwd,
        agent_dir=options.get("agent_dir"),
        trusted=options.get("trusted"),
        no_context_files=options.get("no_context_files", False),
        skill_paths=options.get("skill_paths") or (),
        no_skills=options.get("no_skills") or False,
        prompt_template_paths=options.get("prompt_template_paths") or (),
        no_prompt_templates=options.get("no_prompt_templates") or False,
        system_prompt=options.get("system_prompt"),
        append_system_prompt=options.get("append_system_prompt"),
    )
    resources = loader.load()
    model = options.get("model")
    if isinstance(model, str):
        raise TypeError("assemble() needs checked_options(): the model text is not resolved")
    extensions = options.get("extensions")
    paths = options.get("extension_paths") or ()
    discover = options.get("load_extensions", False)
    listed: tuple[list[Path], list[str]] = ([], [])
    if extensions is None and discover:
        files = resources.settings
        listed = settings_extension_paths(
            [(files.global_data, files.global_path), (files.project_data, files.project_path)]
        )
    if extensions is None and (
        paths
        or (
            discover
            and (
                listed[1]
                or has_extensions_to_load(
                    cwd,
                    loader.agent_dir,
                    trusted=resources.trusted,
                    entry_points=True,
                    settings_paths=listed[0],
                )
            )
        )
    ):
        # explicit paths load even without discovery (pi's -e with -ne); with nothing to
        # load there is no runner, and the extension machinery is never imported
        from pi_context.extensions.loader import load_extensions

        extensions = load_extensions(
            cwd=cwd,
            agent_dir=loader.agent_dir,
            trusted=resources.trusted,
            paths=paths,
            entry_points=discover,
            include_discovered=discover,
            settings_paths=listed[0],
            settings_problems=listed[1],
        )
    mcp = (
        McpManager(cwd=cwd, agent_dir=Path(loader.agent_dir), trusted=resources.trusted)
        if options.get("mcp", False)
        else None
    )
    state = AgentState(
        session,
        cwd=cwd,
        model=model,
        loader=loader,
        resources=resources,
        extensions=extensions,
        settings_override=options.get("settings"),
        sleep=options.get("sleep"),
        tool_selection=options.get("tool_selection"),
        mcp=mcp,
    )
    given = options.get("tools")
    if given is not None:
        tools = list(given)
    else:
        settings = state.settings_data
        # the settings files themselves unless the caller's override sets the section, so that
        # a bad value is reported with the file it came from
        bash_source = settings if "bash" in state.settings_override else resources.settings
        shell = settings.get("shellPath")
        prefix = settings.get("shellCommandPrefix")
        tools = default_tools(
            cwd,
            shell_path=shell if isinstance(shell, str) else None,
            command_prefix=prefix if isinstance(prefix, str) else None,
            agent_dir=Path(loader.agent_dir),
            session_env=lambda: session_environment(state),
            default_timeout=bash_settings_for(bash_source).default_timeout_seconds,
        )
        tools += optional_tools()
    mode = recall_mode(options.get("recall"), state.settings_data)
    # a caller's own list keeps the recall tool too (under the same rules), unless it brings
    # a tool of that name itself
    if mode != "off" and all(t.name != RecallTool.name for t in tools):
        tools.append(RecallTool(lambda: state.session, offer=mode))
    return state, tools


def session_environment(state: AgentState) -> dict[str, str]:
    """The ``PI_*`` variables a ``bash`` command gets, read from the live session when the
    command starts: the session id, its file (only for a session kept on disk), the model's
    provider and id (when a model is set) and the thinking level in effect."""
    session = state.session
    env = {"PI_SESSION_ID": session.id}
    if session.file_path is not None:
        env["PI_SESSION_FILE"] = str(session.file_path)
    if state.model is not None:
        env["PI_PROVIDER"] = state.model.info.provider
        env["PI_MODEL"] = state.model.info.id
    env["PI_REASONING_LEVEL"] = session.stored_projection().thinking_level
    return env


RecallMode = Literal["auto", "always", "off"]
"""When the ``recall`` tool is offered: ``auto`` once the branch holds a compaction (a session
without one sends pi's exact prompt and tools; the tool arrives by a system-prompt patch, so
the cached prefix stays), ``always`` from the start, ``off`` never.

The default is ``auto``: on the economy benchmark's retention probes (facts planted early,
asked after compactions) pictx with it answered 4 of 4 against pi's and pictx's 1 of 4 (a
file read again), for -0.3% to +1.6% of the session's cost on a 48k window (+2.3% on 200k)."""

RECALL_MODES: Final = ("auto", "always", "off")
DEFAULT_RECALL_MODE: Final[RecallMode] = "auto"


def recall_mode(option: str | None, settings: Mapping[str, Any]) -> RecallMode:
    """The ``recall`` option, else the ``recall`` setting, else :data:`DEFAULT_RECALL_MODE`
    (an unknown value counts as unset)."""
    for value in (option, settings.get("recall")):
        if value in RECALL_MODES:
            return cast(RecallMode, value)
    return DEFAULT_RECALL_MODE
