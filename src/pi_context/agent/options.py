"""How an :class:`~pi_context.agent.session.AgentSession` is put together from its options.

:class:`AgentOptions` are the keyword options of ``AgentSession.create`` / ``open``;
:func:`assemble` loads the resources (and, when asked, the extensions) and returns the shared
:class:`~.state.AgentState` and the tools the session starts with.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, Literal, TypedDict, cast

from pi_context.extensions import ExtensionRunner, load_extensions
from pi_context.extensions.events import SessionReason
from pi_context.model import Model
from pi_context.resources.loader import ResourceLoader
from pi_context.resources.settings import bash_settings_for
from pi_context.session import Session
from pi_context.tools import RecallTool, Tool, default_tools

from .state import AgentState, Sleep
from .tool_selection import ToolSelection

__all__ = [
    "DEFAULT_RECALL_MODE",
    "RECALL_MODES",
    "AgentOptions",
    "RecallMode",
    "assemble",
    "recall_mode",
]


class AgentOptions(TypedDict, total=False):
    """Options of :meth:`AgentSession.create` and :meth:`AgentSession.open` (all optional).

    ``model``: the model (``None``: prompting raises until one is set). ``agent_dir``: pi's
    ``~/.pi/agent`` (settings, skills, extensions). ``settings``: merged over the loaded settings
    files. ``tools``: replaces the four built-ins. ``extensions``: a ready runner, or
    ``load_extensions=True`` discovers them (agent dir, trusted project, entry points).
    ``trusted``: the project's trust decision (``None``: decided as pi does without asking). ``no_context_files``,
    ``system_prompt``, ``append_system_prompt``: pi's ``-nc``, ``--system-prompt`` and
    ``--append-system-prompt``. ``session_id``, ``timestamp``: the new session's header id and
    ISO-8601 time (``create`` only; pi names a session file after both); ``parent_session``:
    the ``parentSession`` path stored in the new header (``create`` only). ``ids``, ``clock``,
    ``sleep``: injectable for tests. ``tool_selection``: pi's ``--tools`` / ``--no-tools`` /
    ``--no-builtin-tools`` / ``--exclude-tools`` (:mod:`.tool_selection`). ``start_reason``,
    ``previous_session_file``: what extensions' ``session_start`` is told (default ``startup``
    for ``create``, ``resume`` for ``open``; ``new`` / ``fork`` when a session replaces
    another). ``recall``: when the ``recall`` tool is offered (:data:`RecallMode`; default the
    ``recall`` setting, else ``off``); it is added to the built-ins, not to ``tools``.
    """

    model: Model | None
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
    recall: str | None


def assemble(session: Session, cwd: str, options: AgentOptions) -> tuple[AgentState, list[Tool]]:
    """The shared state of a session in ``cwd`` and its starting tools."""
    loader = ResourceLoader(
        cwd,
        agent_dir=options.get("agent_dir"),
        trusted=options.get("trusted"),
        no_context_files=options.get("no_context_files", False),
        system_prompt=options.get("system_prompt"),
        append_system_prompt=options.get("append_system_prompt"),
    )
    resources = loader.load()
    extensions = options.get("extensions")
    if extensions is None and options.get("load_extensions", False):
        extensions = load_extensions(cwd=cwd, agent_dir=loader.agent_dir, trusted=resources.trusted)
    state = AgentState(
        session,
        cwd=cwd,
        model=options.get("model"),
        loader=loader,
        resources=resources,
        extensions=extensions,
        settings_override=options.get("settings"),
        sleep=options.get("sleep"),
        tool_selection=options.get("tool_selection"),
    )
    tools = options.get("tools")
    if tools is not None:
        return state, list(tools)
    # the settings files themselves unless the caller's override sets the section, so that a
    # bad value is reported with the file it came from
    bash_source = state.settings_data if "bash" in state.settings_override else resources.settings
    timeout = bash_settings_for(bash_source).default_timeout_seconds
    tools = default_tools(cwd, default_timeout=timeout)
    mode = recall_mode(options.get("recall"), state.settings_data)
    if mode != "off":
        tools.append(RecallTool(lambda: state.session, offer=mode))
    return state, tools


RecallMode = Literal["auto", "always", "off"]
"""When the ``recall`` tool is offered: ``auto`` once the branch holds a compaction (a session
without one sends pi's exact prompt and tools; the tool arrives by a system-prompt patch, so
the cached prefix stays), ``always`` from the start, ``off`` never.

The default is ``off``, pi's behaviour, until the retention benchmark has measured what the
tool's declaration costs against the probes it answers."""

RECALL_MODES: Final = ("auto", "always", "off")
DEFAULT_RECALL_MODE: Final[RecallMode] = "off"


def recall_mode(option: str | None, settings: Mapping[str, Any]) -> RecallMode:
    """The ``recall`` option, else the ``recall`` setting, else :data:`DEFAULT_RECALL_MODE`
    (an unknown value counts as unset)."""
    for value in (option, settings.get("recall")):
        if value in RECALL_MODES:
            return cast(RecallMode, value)
    return DEFAULT_RECALL_MODE
