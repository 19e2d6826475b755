"""Replacing the running session: ``/new``, ``/resume``, ``/fork`` and ``/clone`` (and the RPC
commands ``new_session``, ``switch_session``, ``fork`` and ``clone``), as pi 1.6.0 does it.

Every replacement asks the extensions first (``session_before_switch`` for new/resume,
``session_before_fork`` for fork/clone; a ``cancel`` raises :class:`SwitchCancelledError` and
leaves everything as it was), then ends the old session (its run aborted, extensions told
``session_shutdown`` with the reason, its file closed) and starts the new one
(``session_start`` with the reason and the old file).

- **fork** (:func:`fork_before`): a new session holding the path up to the *parent* of a user
  message; the message's text is returned for the editor. A message without a parent gives
  an empty new session whose header names the old file as ``parentSession``.
- **clone** (:func:`clone`): a new session holding the whole root→leaf path.

On a stored session (``pictx --session URL#ID``) every replacement stays in its store and
tenant: ``/new`` and an empty fork create a stored session, a fork or clone stores its copy at
once, ``/resume`` opens another stored session of the tenant. A stored session's
``parentSession`` is the parent's session id (the parent is in the same store and tenant; a
URL would name a host and could carry credentials).

Both copy the path with :meth:`pi_context.session.Session.fork` (label entries dropped and
re-created after the path, compaction ``firstKeptEntryId`` remapped); the new file is written
at once only when the path holds a conversation, and an in-memory session is replaced by an
in-memory copy. The functions take and return :class:`~pi_context.agent.session.AgentSession`
objects; :class:`pi_context.cli.app.app.RunningAgent` wraps them.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from msgspec import Struct

from pi_context import session_dirs
from pi_context.agent.session import AgentSession
from pi_context.errors import PiContextError
from pi_context.extensions.reasons import SessionReason
from pi_context.model import Model
from pi_context.session.store import Session

if TYPE_CHECKING:
    from pi_context.store import SessionRef, SessionStore
    from pi_context.store.binding import StoreBinding

__all__ = [
    "CLONED",
    "FORKED",
    "INVALID_FORK_ENTRY",
    "NOTHING_TO_CLONE",
    "NO_FORK_MESSAGES",
    "STORED_RESUMES_STORED",
    "ForkMessage",
    "SessionFactory",
    "SwitchCancelledError",
    "clone",
    "fork_before",
    "fork_messages",
    "new_session",
    "open_session",
    "user_text",
]

CLONED = "Cloned to new session"
STORED_RESUMES_STORED = (
    "A stored session resumes only sessions of its store and tenant (/resume lists them)"
)
FORKED = "Forked to new session"
NOTHING_TO_CLONE = "Nothing to clone yet"
NO_FORK_MESSAGES = "No messages to fork from"
INVALID_FORK_ENTRY = "Invalid entry ID for forking"


class SessionFactory(Protocol):
    """How new sessions of this process are made (:class:`pi_context.cli.app.app.AppConfig`)."""

    @property
    def session_dir(self) -> Path | None: ...

    def session_options(self) -> dict[str, Any]: ...

    async def create(
        self,
        model: Model | None,
        *,
        cwd: str | None = None,
        parent_session: str | None = None,
        session_id: str | None = None,
        start_reason: SessionReason = "startup",
        previous_session_file: str | None = None,
    ) -> AgentSession: ...

    async def create_stored(
        self,
        store: SessionStore,
        tenant: str,
        model: Model | None,
        *,
        session_id: str | None = None,
        cwd: str | None = None,
        parent_session: str | None = None,
        start_reason: SessionReason = "startup",
        previous_session_file: str | None = None,
    ) -> AgentSession: ...

    async def open(
        self,
        path: Path | StoreBinding,
        model: Model | None,
        *,
        start_reason: SessionReason | None = None,
        previous_session_file: str | None = None,
        cwd: str | None = None,
    ) -> AgentSession: ...


class SwitchCancelledError(PiContextError):
    """An extension cancelled the replacement; the current session goes on unchanged."""


class ForkMessage(Struct, frozen=True):
    """A user message ``/fork`` can start before (pi's ``get_fork_messages`` row)."""

    entry_id: str
    text: str


def user_text(message: Mapping[str, Any]) -> str:
    """A user message's text as pi hands it to the editor: text blocks joined with ``""``."""
    from pi_context.export.document import text_of_content  # /fork only

    return text_of_content(message.get("content"))


def fork_messages(session: Session) -> list[ForkMessage]:
    """Every user message of the whole file (not only the current branch) with non-empty
    text, in append order; ``/fork`` offers them, the last one selected first."""
    out = []
    for entry in session.entries:
        if entry.type == "message" and entry.role == "user":
            text = user_text(entry.data.get("message") or {})
            if text:
                out.append(ForkMessage(entry.id, text))
    return out


def _file(agent: AgentSession) -> str | None:
    path = agent.session.file_path
    return str(path) if path is not None else None


async def _create_like(
    agent: AgentSession,
    config: SessionFactory,
    *,
    parent_session: str | None,
    start_reason: SessionReason,
    previous: str | None,
) -> AgentSession:
    """A new empty session beside ``agent`` (already closed): in its store and tenant when it
    is a stored session, else where new sessions of this process go."""
    if agent.store is not None and agent.ref is not None:
        return await config.create_stored(
            agent.store,
            agent.ref.tenant,
            agent.model_or_none,
            cwd=agent.cwd,
            parent_session=parent_session,
            start_reason=start_reason,
            previous_session_file=previous,
        )
    return await config.create(
        agent.model_or_none,
        cwd=agent.cwd,
        parent_session=parent_session,
        start_reason=start_reason,
        previous_session_file=previous,
    )


def _parent_name(agent: AgentSession) -> str | None:
    """What a session forked from ``agent`` names as ``parentSession``: the file, or for a
    stored session its id."""
    if agent.ref is not None:
        return agent.ref.id
    return _file(agent)


async def new_session(
    agent: AgentSession, config: SessionFactory, *, parent_session: str | None = None
) -> AgentSession:
    """``/new``: a fresh session in the same directory and with the same model (a stored
    session's in its store and tenant)."""
    if await agent.before_switch("new"):
        raise SwitchCancelledError("New session cancelled by an extension")
    previous = _file(agent)
    await agent.aclose("new")
    return await _create_like(
        agent, config, parent_session=parent_session, start_reason="new", previous=previous
    )


async def open_session(
    agent: AgentSession,
    config: SessionFactory,
    path: Path | StoreBinding,
    *,
    cwd: str | None = None,
) -> AgentSession:
    """``/resume``: the session file ``path``, or a stored session as loaded (it runs in the
    directory its header names, or in ``cwd`` when given: the ``/resume`` choice for a
    session whose folder is gone). A session file is refused from a stored session: a
    stored session resumes only the sessions of its store and tenant."""
    if isinstance(path, Path) and agent.ref is not None:
        raise PiContextError(STORED_RESUMES_STORED)
    target = str(path) if isinstance(path, Path) else None
    if await agent.before_switch("resume", target):
        raise SwitchCancelledError("Session switch cancelled by an extension")
    previous = _file(agent)
    await agent.aclose("resume", target)
    return await config.open(
        path, agent.model_or_none, start_reason="resume", previous_session_file=previous, cwd=cwd
    )


async def fork_before(
    agent: AgentSession, config: SessionFactory, entry_id: str
) -> tuple[AgentSession, str]:
    """``/fork``: a new session holding the path before the user message ``entry_id``, and
    that message's text (for the editor). Raises :class:`PiContextError` (``Invalid entry ID
    for forking``) when ``entry_id`` is not a user message of this session."""
    entry = agent.session.get(entry_id)
    if entry is None or entry.type != "message" or entry.role != "user":
        raise PiContextError(INVALID_FORK_ENTRY)
    if await agent.before_fork(entry_id, "before"):
        raise SwitchCancelledError("Fork cancelled by an extension")
    text = user_text(entry.data.get("message") or {})
    if entry.parent_id is None:  # nothing before it: an empty session that names its parent
        previous = _file(agent)
        parent = _parent_name(agent)
        await agent.aclose("fork")
        forked = await _create_like(
            agent, config, parent_session=parent, start_reason="fork", previous=previous
        )
        return forked, text
    return await _replace_with_copy(agent, config, entry.parent_id), text


async def clone(agent: AgentSession, config: SessionFactory) -> AgentSession:
    """``/clone``: a new session holding the whole current path. Raises
    :class:`PiContextError` (``Nothing to clone yet``) when the session has no entry."""
    leaf = agent.session.leaf_id
    if leaf is None:
        raise PiContextError(NOTHING_TO_CLONE)
    if await agent.before_fork(leaf, "at"):
        raise SwitchCancelledError("Clone cancelled by an extension")
    return await _replace_with_copy(agent, config, leaf)


async def _replace_with_copy(
    agent: AgentSession, config: SessionFactory, leaf_id: str
) -> AgentSession:
    """End ``agent`` and run on a copy of its root→``leaf_id`` path (same directory, or the
    same store and tenant)."""
    session = agent.session
    previous = _file(agent)
    if agent.store is not None and agent.ref is not None:
        return await _replace_with_stored_copy(agent, agent.store, agent.ref, config, leaf_id)
    directory = session.file_path.parent if session.file_path is not None else config.session_dir
    if directory is None:
        copy = session.fork(None, leaf_id)
    else:
        directory.mkdir(parents=True, exist_ok=True)
        path, sid, stamp = session_dirs.new_session_path(directory)
        copy = session.fork(path, leaf_id, session_id=sid, timestamp=stamp)
    target = str(copy.file_path) if copy.file_path is not None else None
    model = agent.model_or_none
    await agent.aclose("fork", target)
    try:
        forked = await AgentSession.adopt(
            copy,
            cwd=agent.cwd,
            model=model,
            start_reason="fork",
            previous_session_file=previous,
            **config.session_options(),
        )
    except BaseException:
        copy.close()
        raise
    forked.apply_startup_thinking_level(None, resumed=True)
    return forked


async def _replace_with_stored_copy(
    agent: AgentSession,
    store: SessionStore,
    ref: SessionRef,
    config: SessionFactory,
    leaf_id: str,
) -> AgentSession:
    """End the stored ``agent`` and run on a copy of its root→``leaf_id`` path, stored at
    once in the same store and tenant (``parentSession``: the parent's id)."""
    from pi_context import _json

    copy = agent.session.fork(None, leaf_id)
    header = {**copy.header, "parentSession": ref.id}
    data = _json.dumps(header) + b"\n" + b"".join(e.raw + b"\n" for e in copy.entries)
    copy.close()
    model = agent.model_or_none
    await agent.aclose("fork")  # its last entries are stored before the copy is
    forked = await store.import_bytes(data, tenant=ref.tenant, where=f"fork of {ref}")
    opened = await AgentSession.open(
        store=store,
        ref=forked,
        cwd=agent.cwd,
        model=model,
        start_reason="fork",
        **config.session_options(),
    )
    opened.apply_startup_thinking_level(None, resumed=True)
    return opened
