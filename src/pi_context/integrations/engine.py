"""The framework-free engine the adapters share: a pi session as the record, pi's compaction.

An agent framework keeps its own message list; :class:`ContextEngine` keeps the same
conversation as a pi JSONL session (append-only, readable by ``pictx`` and by pi itself) and
decides, as pi does, when and how to compact it:

* the trigger is pi's: the provider-reported usage of the last response plus an estimate of
  what follows, over ``context_window - reserve_tokens``; when no usage is known the system
  prompt and tool schemas the framework sends (``overhead``) are estimated too;
* the cut point, split turns with their turn-prefix summary, the iterative summary (the
  previous one in the update slot) and the file lists are pi's compaction's, through
  :class:`~pi_context.compaction.Compactor`;
* framework tools are rarely named ``read``/``write``/``edit``: ``file_tools`` maps a tool name
  to the pi operation and the argument holding the path, so file lists come from the calls'
  arguments whatever the summarizer writes;
* a failing, empty or useless summary is never written: the session is left as it was and the
  outcome says why.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, replace
from pathlib import Path
from typing import (
    TYPE_CHECKING,
    Any,
    Literal,
    ParamSpec,
    Required,
    TypedDict,
    TypeVar,
    Unpack,
    cast,
)

from pi_context.compaction import (
    CompactionEvent,
    CompactionFailed,
    CompactionResult,
    CompactionSettings,
    Compactor,
    TokenCache,
    estimate_projected_context_tokens,
    should_compact,
)
from pi_context.errors import CompactionError
from pi_context.integrations.pairs import PairRepair, repair_pairs
from pi_context.model import Model
from pi_context.session import Entry, Session
from pi_context.tokens import estimate_tokens

if TYPE_CHECKING:
    from pi_context.store import SessionStore
    from pi_context.store.binding import StoreBinding

__all__ = [
    "CompactionOutcome",
    "ContextEngine",
    "EngineOptions",
    "FileTools",
    "Summarizer",
    "log",
    "overhead_tokens",
    "pi_file_operation",
]

log = logging.getLogger("pi_context.integrations")
"""The one logger of the adapters (warnings about repaired histories and failed summaries)."""

_T = TypeVar("_T")
_P = ParamSpec("_P")

_POOL = ThreadPoolExecutor(thread_name_prefix="pi-context-session")
"""The worker threads of every engine's :meth:`ContextEngine.call` (started on first use)."""

FileTools = Mapping[str, tuple[str, str]]
"""A framework tool's name → (pi's operation ``read``/``write``/``edit``, its path argument)."""

Summarizer = Model | Literal["offline"]
"""A pi-context model that writes summaries, or ``"offline"``: the deterministic summarizer."""

LEAF_MARKER = "pi-context.leaf"
"""``customType`` of the entry that records a leaf move (pi reopens a file at its last entry)."""

_OPERATIONS = ("read", "write", "edit")


def pi_file_operation(file_tools: FileTools, name: Any, arguments: Any) -> tuple[str, str] | None:
    """``(operation, path)`` of one framework tool call, or ``None`` when it touches no file."""
    mapped = file_tools.get(name) if isinstance(name, str) else None
    if mapped is None or not isinstance(arguments, Mapping):
        return None
    operation, argument = mapped
    path = arguments.get(argument)
    if operation not in _OPERATIONS or not isinstance(path, str) or not path:
        return None
    return operation, path


class _FileToolCache(TokenCache):
    """pi's per-entry cache, counting the mapped framework tools as file operations too."""

    __slots__ = ("file_tools",)

    def __init__(self, file_tools: FileTools) -> None:
        super().__init__()
        self.file_tools = dict(file_tools)

    def item_file_ops(self, item: Any) -> tuple[tuple[str, str], ...]:
        found = super().item_file_ops(item)
        if not self.file_tools:
            return found
        extra: list[tuple[str, str]] = []
        for message in item.messages:
            if message.get("role") != "assistant" or not isinstance(message.get("content"), list):
                continue
            for block in message["content"]:
                if isinstance(block, Mapping) and block.get("type") == "toolCall":
                    op = pi_file_operation(
                        self.file_tools, block.get("name"), block.get("arguments")
                    )
                    if op is not None:
                        extra.append(op)
        return found + tuple(extra) if extra else found


@dataclass(frozen=True, slots=True)
class CompactionOutcome:
    """What one compaction attempt did: ``result`` when it compacted, ``reason`` when not."""

    result: CompactionResult | None
    reason: str | None = None

    @property
    def compacted(self) -> bool:
        return self.result is not None


class EngineOptions(TypedDict, total=False):
    """The keywords every adapter takes and hands to :class:`ContextEngine` as they are."""

    session_file: str | os.PathLike[str] | None
    """The pi JSONL record: opened when it exists, created (with its first message) when not."""
    context_window: Required[int]
    """The model's window in tokens (required: scripted, fake and local models report none)."""
    keep_recent_tokens: int | None
    """Tokens kept after a compaction; pi's default fitted to the window unless given."""
    reserve_tokens: int | None
    """Tokens kept free for the reply; pi's default fitted to the window unless given."""
    summarizer: Summarizer
    """A pi-context model that writes summaries, or ``"offline"`` (the default)."""
    file_tools: FileTools | None
    """Tool name → (pi operation, path argument), e.g. ``{"read_file": ("read", "path")}``."""
    session: Session | None
    """An open session instead of ``session_file`` (tests inject ids and a clock that way)."""
    cwd: str | None
    """The working directory a new session file records (default: the process's)."""
    on_event: Callable[[CompactionEvent], None] | None
    """Receives pi's compaction events."""
    store: SessionStore | None
    """A session store (``open_store(...)``) instead of a file: each conversation is the
    stored session whose id is the framework's conversation/thread id (an adapter's keyword;
    see :mod:`pi_context.integrations.stored`)."""
    tenant: str | None
    """The store's tenant the conversations belong to (default ``""``; only with ``store``)."""


def overhead_tokens(instructions: str, tools: Iterable[Any]) -> int:
    """The system prompt and tool schemas a request declares, in pi's estimate: counted as pi
    counts a system message (its text plus ``JSON.stringify`` of the tools, UTF-16 lengths,
    ``ceil(chars / 4)``)."""
    return estimate_tokens({"role": "system", "content": instructions, "toolsAdded": list(tools)})


def _settings(
    context_window: int,
    keep_recent_tokens: int | None,
    reserve_tokens: int | None,
    offline: bool,
) -> CompactionSettings:
    """pi's defaults fitted to the window (as ``pictx`` does); sizes given are kept as given."""
    settings = CompactionSettings(
        summarizer="offline" if offline else "model", keep_tool_pairs=True
    )
    if keep_recent_tokens is not None:
        settings = settings.with_keep_recent(keep_recent_tokens)
    if reserve_tokens is not None:
        settings = replace(
            settings,
            reserve_tokens=reserve_tokens,
            explicit=settings.explicit | {"reserveTokens"},
        )
    return settings.fit_to_window(context_window)


def _positive(name: str, value: int | None) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value <= 0):
        raise ValueError(f"{name} must be a positive number of tokens, not {value!r}")


class ContextEngine:
    """pi's context engine over one session file, for a framework adapter.

    The keywords are :class:`EngineOptions` (``session_file`` may also come first, by
    position); exactly one of ``session_file`` and ``session`` is given.

    The adapters' async hooks touch the session through :meth:`call` (a worker thread of its
    own, so a locked, fsynced append never holds the caller's event loop) or inside
    :meth:`exclusive`; either way one thread at a time uses it, in the order the calls came.
    """

    def __init__(
        self,
        session_file: str | os.PathLike[str] | None = None,
        /,
        **options: Unpack[EngineOptions],
    ) -> None:
        if session_file is not None and "session_file" in options:
            raise TypeError("session_file given twice")
        if session_file is None:
            session_file = options.get("session_file")
        if options.get("store") is not None or options.get("tenant") is not None:
            raise ValueError(
                "a stored conversation is opened by an adapter (store=, tenant= and its "
                "conversation id) or by ContextEngine.bound(binding, ...), not by ContextEngine()"
            )
        context_window = options["context_window"]
        keep_recent_tokens = options.get("keep_recent_tokens")
        reserve_tokens = options.get("reserve_tokens")
        summarizer = options.get("summarizer", "offline")
        file_tools = options.get("file_tools")
        session = options.get("session")
        cwd = options.get("cwd")
        on_event = options.get("on_event")
        if (session_file is None) == (session is None):
            raise ValueError("pass exactly one of session_file= and session=")
        self.check_options(**options)
        if session is None:
            assert session_file is not None
            path = Path(session_file)
            if path.exists():
                session = Session.open(path)
            else:
                session = Session.create(path, cwd=cwd or os.getcwd())
        self.session = session
        self.context_window = context_window
        self.file_tools: dict[str, tuple[str, str]] = dict(file_tools or {})
        self.settings = _settings(
            context_window, keep_recent_tokens, reserve_tokens, summarizer == "offline"
        )
        self._on_event = on_event
        self.last_failure: str | None = None
        """Why the last compaction attempt wrote nothing (``None`` after a success)."""
        model = summarizer if isinstance(summarizer, Model) else None
        self.compactor = Compactor(session, model, self.settings, on_event=self._event)
        self.compactor.cache = _FileToolCache(self.file_tools)
        self._lock = threading.Lock()
        self._last_call: Future[Any] | None = None
        self.last_repair: PairRepair | None = None
        """What :meth:`deliverable` last changed to keep the pairs."""
        self.binding: StoreBinding | None = None
        """The store binding of a stored conversation (:meth:`bound`); ``None`` for a file."""

    @staticmethod
    def check_options(**options: Unpack[EngineOptions]) -> None:
        """The errors the engine's sizes, summarizer and file tools would raise, without a
        session (an adapter over a store checks them when it is built)."""
        _positive("context_window", options["context_window"])
        _positive("keep_recent_tokens", options.get("keep_recent_tokens"))
        _positive("reserve_tokens", options.get("reserve_tokens"))
        summarizer = options.get("summarizer", "offline")
        if summarizer != "offline" and not isinstance(summarizer, Model):
            raise TypeError(
                f"summarizer must be a pi_context Model or 'offline', not {summarizer!r}"
            )
        for name, mapped in (options.get("file_tools") or {}).items():
            if not (isinstance(mapped, tuple) and len(mapped) == 2 and mapped[0] in _OPERATIONS):
                raise ValueError(
                    f"file_tools[{name!r}] must be (operation, path argument) with operation "
                    f"one of read/write/edit, not {mapped!r}"
                )

    @classmethod
    def bound(cls, binding: StoreBinding, **options: Unpack[EngineOptions]) -> ContextEngine:
        """The engine of a stored session open in ``binding``: its writes are committed to the
        store after each :meth:`call` and each compaction (on the caller's event loop)."""
        given = EngineOptions(**options)
        given["session"] = binding.session
        engine = cls(**given)
        engine.binding = binding
        return engine

    async def commit(self) -> None:
        """Store what the session queued (a stored conversation; a file writes as it goes).
        A failure raises the store's typed error and keeps the entries for the next commit."""
        if self.binding is not None:
            await self.binding.commit()

    # -- one thread at a time --------------------------------------------------------------

    def locked(self, fn: Callable[_P, _T], *args: _P.args, **kwargs: _P.kwargs) -> _T:
        """``fn(*args, **kwargs)`` holding the session (from a synchronous hook)."""
        with self._lock:
            return fn(*args, **kwargs)

    async def call(self, fn: Callable[_P, _T], *args: _P.args, **kwargs: _P.kwargs) -> _T:
        """``fn(*args, **kwargs)`` on a worker thread, holding the session; the caller's event
        loop runs on meanwhile.

        The calls of one engine run in the order they were made (each waits for the one
        before it), so appends keep their order. The threads are those of one pool that
        every engine shares: a service with thousands of conversations has a few threads,
        not one per conversation. A stored conversation's entries are committed once ``fn``
        has returned (:meth:`commit`, on the caller's loop).
        """
        previous = self._last_call

        def in_turn() -> _T:
            if previous is not None:
                wait([previous])  # submitted before this one, so already running or done
            return self.locked(fn, *args, **kwargs)

        future = _POOL.submit(in_turn)
        self._last_call = future
        result = await asyncio.wrap_future(future)
        await self.commit()
        return result

    async def exclusive_compact(
        self, *, force: bool = False, overhead: int = 0
    ) -> CompactionOutcome:
        """:meth:`compact` holding the session: it runs on the caller's loop (the summarizer's
        client belongs to it) once the worker's earlier calls are done."""
        if not self._lock.acquire(blocking=False):
            await asyncio.get_running_loop().run_in_executor(None, self._lock.acquire)
        try:
            outcome = await self.compact(force=force, overhead=overhead)
        finally:
            self._lock.release()
        await self.commit()
        return outcome

    # -- the record ------------------------------------------------------------------------

    def deliverable(self) -> list[dict[str, Any]]:
        """The projected messages as a request may carry them: pi's pair rule applied (a result
        whose call is gone is left out, a call that never got its result is answered with an
        error result), with a logged warning when that changed anything. The file keeps what
        arrived; every adapter hands its framework this list."""
        messages = [message for _, message in self.projected()]
        repair = repair_pairs(messages, timestamp=self.session.now_ms())
        self.last_repair = repair
        if repair.changed:
            log.warning(
                "pi-context: left out tool results without their call (%s) and answered calls "
                "without a result with an error result (%s); the originals stay in the session",
                ", ".join(repair.dropped_results) or "none",
                ", ".join(repair.answered_calls) or "none",
            )
        return repair.messages

    def projected(self) -> list[tuple[Entry, dict[str, Any]]]:
        """The current branch as the model sees it: each message with the entry it comes from.

        A compaction entry gives its ``compactionSummary``; the messages are the session's own
        objects, so callers copy before changing anything.
        """
        out: list[tuple[Entry, dict[str, Any]]] = []
        for item in self.session.stored_projection().entries:
            for message in item.messages:
                if message.get("role") != "system":
                    out.append((item.entry, cast(dict[str, Any], message)))
        return out

    def inside_compacted(self, entry_id: str) -> bool:
        """Whether ``entry_id`` is among the entries the latest compaction on the branch kept:
        on the path, before that compaction. Such an entry cannot become the leaf without
        undoing the compaction. Walks back from the leaf only as far as that compaction."""
        session = self.session
        if not session.on_branch(entry_id):
            return False
        path = session.branch_view()
        for index in range(len(path) - 1, -1, -1):
            entry = path[index]
            if entry.id == entry_id:
                return False
            if entry.type == "compaction":
                return True
        return False

    def append(self, messages: Sequence[Mapping[str, Any]]) -> list[Entry]:
        """Append pi messages under the current leaf."""
        return [self.session.append_message(message) for message in messages]

    def move_to(self, entry_id: str | None) -> None:
        """Make ``entry_id`` the leaf (``None``: the next message starts a new root), as pi's
        branch does: nothing is removed, and a marker entry records the move in the file."""
        if entry_id == self.session.leaf_id:
            return
        self.session.move_leaf(entry_id)
        if self.session.is_persisted or entry_id is not None:
            self.session.append_custom(LEAF_MARKER, {"leaf": entry_id})

    # -- the trigger -----------------------------------------------------------------------

    def context_tokens(self, overhead: int = 0) -> int:
        """pi's estimate of the context now; ``overhead`` (system prompt, tool schemas) counts
        only when no reported usage covers it."""
        estimate = estimate_projected_context_tokens(
            self.session.stored_projection(), self.session.branch_view(), self.compactor.cache
        )
        return estimate.tokens + (overhead if estimate.usage_tokens == 0 else 0)

    def needs_compaction(self, overhead: int = 0) -> bool:
        """Whether the context is past pi's threshold (``window - reserve``)."""
        return should_compact(self.context_tokens(overhead), self.context_window, self.settings)

    # -- compaction ------------------------------------------------------------------------

    def _event(self, event: CompactionEvent) -> None:
        if isinstance(event, CompactionFailed) and event.error_message:
            self.last_failure = event.error_message
        if self._on_event is not None:
            self._on_event(event)

    async def compact(
        self,
        *,
        force: bool = False,
        overhead: int = 0,
        custom_instructions: str | None = None,
    ) -> CompactionOutcome:
        """Compact when past the threshold (always with ``force``); never raises for a failed
        summary: the outcome's ``reason`` says why nothing was written."""
        if not force and not self.needs_compaction(overhead):
            return CompactionOutcome(None, "below the compaction threshold")
        self.last_failure = None
        try:
            result = await self.compactor.compact(
                custom_instructions, reason="manual" if force else "threshold"
            )
        except CompactionError as exc:
            reason = str(exc)
            failed = True
        else:
            if result is not None:
                return CompactionOutcome(result)
            failure = self.last_failure
            failed = failure is not None
            reason = failure or "nothing to compact"
        if failed:
            log.warning("pi-context compaction wrote nothing: %s", reason)
        return CompactionOutcome(None, reason)
