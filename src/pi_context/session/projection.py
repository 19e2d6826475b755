"""Projection: the messages the model sees for one leaf of the session tree.

Raw entries stay in the file; each request is rebuilt from them. The rules are
pi 1.6.0's:

* **Context entries** (``buildContextEntries``): the root→leaf path; if it holds a compaction,
  the newest one comes first, then the path entries from its ``firstKeptEntryId`` up to it
  (minus ``system`` messages, whose state the compaction's ``systemMessage`` snapshot carries),
  then everything after it.
* **Context edits**: the latest ``context_edit`` per target among those entries wins; a ``null``
  replacement omits the target, otherwise only its ``content`` is replaced.
* **Entry → messages** (``sessionEntryToContextMessages``): messages as stored (null content
  normalized), ``custom_message``/``branch_summary``/``compaction`` as synthesized messages.
* Thinking level and model come from the whole path, not the compacted range.

Each rule is written once, here, over positions in an
:class:`~pi_context.session.entry_store.EntryStore` (:func:`context_positions`,
:func:`context_edits_at`, :func:`path_settings`): a loaded session's live projection, the lean
file index of the inspection commands and a plain list of entries (:func:`projection_of_path`)
all call these.

:func:`convert_to_llm` then maps the agent roles to the four a provider understands.
"""

from __future__ import annotations

import copy
import itertools
import re
from array import array
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Final, TypedDict, TypeVar, cast

from msgspec import Struct, field
from msgspec.structs import force_setattr

from pi_context import _json
from pi_context.messages import AgentMessage, Message
from pi_context.session.entries import Entry
from pi_context.session.entry_store import EntryStore, IndexedView, PathEntries

if TYPE_CHECKING:
    from pi_context.session.tree import TreeIndex

__all__ = [
    "BRANCH_SUMMARY_SUFFIX",
    "COMPACTION_SUMMARY_SUFFIX",
    "SUMMARY_WRAPPERS",
    "EntryKey",
    "HandedOutEntries",
    "HandedOutMessages",
    "ModelRef",
    "ProjectedEntry",
    "Projection",
    "SummaryWrappers",
    "bash_execution_text",
    "build_context_entries",
    "build_projection",
    "context_edits_at",
    "context_edits_by_target",
    "context_item",
    "context_positions",
    "convert_to_llm",
    "entry_messages",
    "handed_out",
    "is_system_message",
    "js_date_ms",
    "path_settings",
    "project_entry",
    "projection_of_path",
    "stream_context",
    "stream_positions",
]

_M = TypeVar("_M", bound=Mapping[str, Any])

# Wrappers around summaries as the model sees them. The tags and separators are pi's (they
# decide token counts and transcript layout); the sentence before each tag is our own wording.
# The conformance suite swaps in pi's sentences (``SUMMARY_WRAPPERS``) to compare byte for byte.
COMPACTION_SUMMARY_SUFFIX: Final = "\n</summary>"
BRANCH_SUMMARY_SUFFIX: Final = "</summary>"


class SummaryWrappers(Struct, frozen=True):
    """The sentences that introduce a compaction summary and a branch summary."""

    compaction_intro: str = (
        "Earlier turns of this conversation were condensed to save context; their summary follows."
    )
    branch_intro: str = (
        "The user explored another branch of this session and came back; "
        "a summary of that branch follows."
    )

    @property
    def compaction_prefix(self) -> str:
        return self.compaction_intro + "\n\n<summary>\n"

    @property
    def branch_prefix(self) -> str:
        return self.branch_intro + "\n\n<summary>\n"


SUMMARY_WRAPPERS = SummaryWrappers()
"""The wrappers :func:`convert_to_llm` uses (module-level so a host can replace them)."""

_EDITABLE_ROLES: Final = frozenset({"user", "assistant", "toolResult", "custom"})
_BLOCK_ROLES: Final = frozenset({"assistant", "toolResult"})


class ModelRef(TypedDict):
    """The model selected on a path: ``{"provider", "modelId"}``."""

    provider: str
    modelId: str


# -- JavaScript Date parsing (entry timestamp → message timestamp) ---------------------------

_ISO = re.compile(
    r"^([+-]\d{6}|\d{4})-(\d{2})-(\d{2})"
    r"(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?)?"
    r"\s*(Z|[+-]\d{2}(?::?\d{2})?)?$"
)


def js_date_ms(value: Any) -> int | float | None:
    """``new Date(value).getTime()`` for entry timestamps; ``None`` where JavaScript gives NaN.

    ISO date-times with optional fraction and zone; a zone-less date-time is read as UTC
    (JavaScript reads it in local time; pi's goldens ran with TZ=UTC). ``null`` gives 0.
    """
    if value is None:
        return 0
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int | float):
        return value
    if not isinstance(value, str):
        return None
    m = _ISO.match(value.strip())
    if m is None:
        return None
    year_text, month, day, hour, minute, second, fraction, zone = m.groups()
    try:
        year = int(year_text)
        base = datetime(2000, int(month), int(day), tzinfo=UTC)
        moment = base.replace(year=year) if 1 <= year <= 9999 else None
    except ValueError:
        return None
    if moment is None:
        return None
    if hour is not None:
        if int(hour) > 24 or int(minute) > 59 or (second is not None and int(second) > 59):
            return None
        moment += timedelta(hours=int(hour), minutes=int(minute), seconds=int(second or 0))
    ms = int(moment.timestamp()) * 1000
    if fraction:
        ms += int((fraction + "00")[:3])
    if zone and zone != "Z":
        sign = -1 if zone[0] == "+" else 1
        digits = zone[1:].replace(":", "")
        offset = int(digits[:2]) * 60 + (int(digits[2:4]) if len(digits) >= 4 else 0)
        ms += sign * offset * 60_000
    return ms


# -- entry → messages -------------------------------------------------------------------------


def _with_content(message: Mapping[str, Any], content: Any) -> dict[str, Any]:
    out = dict(message)
    out["content"] = content
    return out


def entry_messages(entry: Entry) -> list[AgentMessage]:
    """The messages one entry contributes (pi's ``sessionEntryToContextMessages``)."""
    kind = entry.type
    if kind == "message":
        message = entry.data.get("message")
        if not isinstance(message, dict):
            return []
        if message.get("content") is None:
            role = message.get("role")
            if role == "system":
                message = _with_content(message, "")
            elif role in ("user", "assistant", "toolResult"):
                message = _with_content(message, [])
        return [cast(AgentMessage, message)]
    if kind == "custom_message":
        data = entry.data
        custom: dict[str, Any] = {"role": "custom", "customType": data.get("customType")}
        content = data.get("content")
        custom["content"] = [] if content is None else content
        for key in ("display", "details"):
            if key in data:
                custom[key] = data[key]
        custom["timestamp"] = js_date_ms(data.get("timestamp")) if "timestamp" in data else None
        return [cast(AgentMessage, custom)]
    if kind == "branch_summary":
        data = entry.data
        summary = data.get("summary")
        if not summary:
            return []
        return [
            cast(
                AgentMessage,
                {
                    "role": "branchSummary",
                    "summary": summary,
                    "fromId": data.get("fromId"),
                    "timestamp": _entry_ms(data),
                },
            )
        ]
    if kind == "compaction":
        data = entry.data
        out: list[AgentMessage] = []
        system = data.get("systemMessage")
        if isinstance(system, dict):
            out.append(cast(AgentMessage, system))
        summary_message: dict[str, Any] = {
            "role": "compactionSummary",
            "summary": data.get("summary"),
        }
        if "tokensBefore" in data:
            summary_message["tokensBefore"] = data["tokensBefore"]
        summary_message["timestamp"] = _entry_ms(data)
        out.append(cast(AgentMessage, summary_message))
        return out
    return []


def _entry_ms(data: Mapping[str, Any]) -> int | float | None:
    return js_date_ms(data.get("timestamp")) if "timestamp" in data else None


def project_entry(entry: Entry, edit: Entry | None) -> list[AgentMessage]:
    """An entry's messages after its latest context edit (pi's ``projectContextEntry``)."""
    messages = entry_messages(entry)
    if edit is None:
        return messages
    replacement = edit.get("replacement")
    if replacement is None:
        return []
    if not isinstance(replacement, dict):
        replacement = {}  # no content to take: JavaScript reads ``undefined``
    content = replacement.get("content")
    out: list[AgentMessage] = []
    for message in messages:
        role = message.get("role")
        if role not in _EDITABLE_ROLES:
            out.append(message)
            continue
        new_content = content
        if isinstance(content, str) and role in _BLOCK_ROLES:
            new_content = [{"type": "text", "text": content}]
        edited = dict(message)
        if "content" in replacement:
            edited["content"] = new_content
        else:
            edited.pop("content", None)
        out.append(cast(AgentMessage, edited))
    return out


# -- context entries and projection ---------------------------------------------------------


def is_system_message(entry: Entry) -> bool:
    """True for a ``message`` entry holding a ``system`` message (its role read cheaply when the
    loader saw it)."""
    if entry.type != "message":
        return False
    if entry.role is not None:
        return entry.role == "system"
    message = entry.data.get("message")
    return isinstance(message, dict) and message.get("role") == "system"


def build_context_entries(path: Sequence[Entry]) -> list[Entry]:
    """The entries that feed the context of ``path``'s leaf (pi's ``buildContextEntries``;
    :func:`context_positions` over the list)."""
    return [path[i] for i in context_positions(PathEntries(path), range(len(path)))]


def context_positions(
    store: EntryStore,
    path: Sequence[int],
    find: Callable[[str, int], int | None] | None = None,
) -> Sequence[int]:
    """The positions of the context entries of ``path`` (positions in ``store``, root first):
    pi's ``buildContextEntries``, the one statement of the rule.

    Without a (readable) compaction on the path, the path itself. Otherwise the newest
    compaction, then the path entries from the first one with its ``firstKeptEntryId`` up to
    the compaction (without ``system`` messages), then everything after it; when no entry
    before the compaction has that id, nothing before it is kept.

    ``find(entry_id, before)``, when given, is the first index on ``path`` before ``before``
    of an entry with ``entry_id`` (``None``: none), from whatever index its caller keeps; by
    default the path is scanned.
    """
    type_at = store.type_at
    last = -1
    for index in range(len(path) - 1, -1, -1):
        if type_at(path[index]) == "compaction" and store.entry(path[index]).readable:
            last = index
            break
    if last < 0:
        return path
    compaction = path[last]
    first_kept = store.entry(compaction).get("firstKeptEntryId")
    start: int | None = None
    if isinstance(first_kept, str):
        if find is not None:
            start = find(first_kept, last)
        else:
            id_at = store.id_at
            start = next((i for i in range(last) if id_at(path[i]) == first_kept), None)
    out = array("i", [compaction])
    if start is not None:
        role_at = store.role_at
        for position in itertools.islice(path, start, last):
            if type_at(position) == "message":
                role = role_at(position)
                if role == "system" or (role is None and is_system_message(store.entry(position))):
                    continue
            out.append(position)
    out.extend(itertools.islice(path, last + 1, None))
    return out


def context_edits_at(store: EntryStore, positions: Iterable[int]) -> dict[str, Entry]:
    """:func:`context_edits_by_target` of the entries at ``positions`` (only the
    ``context_edit`` entries among them are made)."""
    type_at = store.type_at
    entry = store.entry
    return context_edits_by_target(entry(p) for p in positions if type_at(p) == "context_edit")


EntryKey = tuple[str, str | None, bool]
"""What an entry's projected messages depend on: ``(entry id, edit generation, speaks)``.

The *edit generation* is the id of the ``context_edit`` in effect for the entry (``None``:
unedited); a new edit of the entry is a new generation. ``speaks`` is false only for an older
compaction among the kept entries, which contributes nothing. Entries are append-only, so two
projected entries with the same key hold equal messages: work derived from an entry's messages
(token estimates, file operations, the system-prompt state) is reused by key, whichever
projection the entry comes from.
"""


class ProjectedEntry(Struct, frozen=True):
    """One context entry and the messages it contributes (possibly none)."""

    entry: Entry
    messages: Sequence[AgentMessage]
    edit_id: str | None = None
    """The id of the ``context_edit`` whose replacement these messages carry (its generation)."""
    key: EntryKey = ("", None, True)
    """:data:`EntryKey` of this item (set from ``entry`` and ``edit_id``)."""

    def __post_init__(self) -> None:
        speaks = bool(self.messages) or self.entry.type != "compaction"
        force_setattr(self, "key", (self.entry.id, self.edit_id, speaks))


def handed_out(message: _M) -> _M:
    """A deep copy of a stored message (a JSON round trip, the fastest deep copy of JSON data;
    for anything JSON cannot carry, or nested deeper than the decoder reads, a copy without
    recursion: any depth is copied, never a ``RecursionError``)."""
    try:
        return cast(_M, _json.loads(_json.dumps(message)))
    except (TypeError, ValueError):
        return cast(_M, _deep_copy(message))


def _deep_copy(value: Any) -> Any:
    """A deep copy of dicts and lists (tuples become lists, as in the JSON round trip) at any
    depth, with an explicit stack instead of recursion; other values go to ``copy.deepcopy``
    one by one. A container met twice (shared or cyclic) is copied once, as ``deepcopy`` does."""
    containers = (dict, list, tuple)
    if type(value) not in containers:
        return copy.deepcopy(value)
    memo: dict[int, Any] = {}
    pending: list[tuple[Any, Any]] = []

    def copied(item: Any) -> Any:
        if type(item) not in containers:
            return copy.deepcopy(item)
        made = memo.get(id(item))
        if made is None:
            made = memo[id(item)] = {} if type(item) is dict else []
            pending.append((item, made))
        return made

    root = copied(value)
    while pending:
        original, made = pending.pop()
        if type(original) is dict:
            for key, item in original.items():
                made[key] = copied(item)
        else:
            made.extend(copied(item) for item in original)
    return root


HANDED_OUT_KEPT: Final = 10_000
"""How many copies a handed-out view keeps for reading again (the most recently made)."""


def _keep_recent(copies: dict[int, Any], order: deque[int], position: int) -> None:
    """Note the copy just made for ``position``; forget the oldest beyond the limit."""
    order.append(position)
    if len(order) > HANDED_OUT_KEPT:
        copies.pop(order.popleft(), None)


class HandedOutMessages(IndexedView[AgentMessage]):
    """A projection's messages as the public API hands them out: each message is copied the
    first time it is read (and the same copy returned after, among the last
    :data:`HANDED_OUT_KEPT` read: a pass over a million messages does not keep a million
    copies), so nothing a caller does to what it got reaches the session. Taking the view
    costs nothing; reading costs what is read."""

    __slots__ = ("_copies", "_order", "_stored")
    _what = "message"

    def __init__(self, stored: Sequence[AgentMessage]) -> None:
        self._stored = stored
        self._copies: dict[int, AgentMessage] = {}
        self._order: deque[int] = deque()

    def __len__(self) -> int:
        return len(self._stored)

    def _at(self, position: int) -> AgentMessage:
        copied = self._copies.get(position)
        if copied is None:
            copied = self._copies[position] = handed_out(self._stored[position])
            _keep_recent(self._copies, self._order, position)
        return copied

    def __eq__(self, other: object) -> bool:
        if isinstance(other, HandedOutMessages):
            return list(self) == list(other)
        if isinstance(other, Sequence) and not isinstance(other, str | bytes):
            return len(other) == len(self) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(list(self))


class HandedOutEntries(IndexedView[ProjectedEntry]):
    """A projection's entries as the public API hands them out: each item, read for the first
    time, gets its messages as a :class:`HandedOutMessages` (kept as those are). The
    :class:`Entry` is the session's own, as every accessor of entries hands it out
    (:meth:`Entry.copy` gives one to change)."""

    __slots__ = ("_copies", "_order", "_stored")
    _what = "entry"

    def __init__(self, stored: Sequence[ProjectedEntry]) -> None:
        self._stored = stored
        self._copies: dict[int, ProjectedEntry] = {}
        self._order: deque[int] = deque()

    def __len__(self) -> int:
        return len(self._stored)

    def _at(self, position: int) -> ProjectedEntry:
        copied = self._copies.get(position)
        if copied is None:
            item = self._stored[position]
            copied = ProjectedEntry(item.entry, HandedOutMessages(item.messages), item.edit_id)
            self._copies[position] = copied
            _keep_recent(self._copies, self._order, position)
        return copied

    def __repr__(self) -> str:
        return f"<{len(self)} projected entries>"


class Projection(Struct):
    """The model's view of one leaf: context entries, their messages, thinking level, model.

    :meth:`Session.projection() <pi_context.session.Session.projection>` hands out
    :meth:`copies <handed_out_view>`: changing what it returns never changes the session.
    """

    entries: Sequence[ProjectedEntry] = field(default_factory=list)
    messages: Sequence[AgentMessage] = field(default_factory=list)
    thinking_level: str = "off"
    model: ModelRef | None = None
    leaf_id: str | None = None

    def handed_out_view(self) -> Projection:
        """This projection with its entries and messages copied on first access (the view
        itself is taken in constant time)."""
        model = cast(ModelRef, dict(self.model)) if self.model is not None else None
        return Projection(
            HandedOutEntries(self.entries),
            HandedOutMessages(self.messages),
            self.thinking_level,
            model,
            self.leaf_id,
        )


def context_item(entry: Entry, position: int, edits: Mapping[str, Entry]) -> ProjectedEntry:
    """Context entry number ``position`` and its messages. Only the leading (newest)
    compaction speaks; an older one among the kept entries contributes nothing, as in pi."""
    if entry.type == "compaction" and position > 0:
        return ProjectedEntry(entry, [])
    edit = edits.get(entry.id)
    return ProjectedEntry(entry, project_entry(entry, edit), edit.id if edit is not None else None)


def path_settings(store: EntryStore, path: Sequence[int]) -> tuple[str, ModelRef | None]:
    """Thinking level and model in effect at the end of ``path`` (positions in ``store``).

    Scans backwards and stops once both are found; only the entries that may set the level or
    the model are made.
    """
    level: str | None = None
    model: ModelRef | None = None
    model_found = False
    type_at = store.type_at
    for index in range(len(path) - 1, -1, -1):
        position = path[index]
        kind = type_at(position)
        if level is None and kind == "thinking_level_change":
            value = store.entry(position).get("thinkingLevel")
            if isinstance(value, str) and value:
                level = value
        elif not model_found and (
            kind == "model_change"
            or (kind == "message" and store.role_at(position) in ("assistant", None))
        ):
            _, found = apply_settings(store.entry(position), "off", None)
            if found is not None:
                model, model_found = found, True
        if level is not None and model_found:
            break
    return level or "off", model


def apply_settings(entry: Entry, level: str, model: ModelRef | None) -> tuple[str, ModelRef | None]:
    """Thinking level and model after ``entry``, given those before it."""
    kind = entry.type
    if kind in ("thinking_level_change", "model_change") and not entry.readable:
        return level, model  # an unreadable line changes nothing (pi drops it)
    if kind == "message":
        if entry.role == "assistant" or (entry.role is None and _role_of(entry) == "assistant"):
            message = entry.data.get("message")
            if isinstance(message, dict):
                model = cast(
                    ModelRef, {"provider": message.get("provider"), "modelId": message.get("model")}
                )
    elif kind == "thinking_level_change":
        value = entry.get("thinkingLevel")
        level = value if isinstance(value, str) and value else level
    elif kind == "model_change":
        model = cast(ModelRef, {"provider": entry.get("provider"), "modelId": entry.get("modelId")})
    return level, model


def _role_of(entry: Entry) -> str | None:
    message = entry.data.get("message")
    role = message.get("role") if isinstance(message, dict) else None
    return role if isinstance(role, str) else None


def context_edits_by_target(entries: Iterable[Entry]) -> dict[str, Entry]:
    """Target id → the last ``context_edit`` entry for it among ``entries`` (the one that wins)."""
    edits: dict[str, Entry] = {}
    for entry in entries:
        if entry.type == "context_edit":
            target = entry.get("targetId")
            if isinstance(target, str):
                edits[target] = entry
    return edits


def projection_of_path(path: Sequence[Entry]) -> Projection:
    """The projection of a root→leaf path (pi's ``buildSessionProjection``)."""
    store = PathEntries(path)
    positions = range(len(path))
    ctx = context_positions(store, positions)
    edits = context_edits_at(store, ctx)
    projected = [context_item(path[p], index, edits) for index, p in enumerate(ctx)]
    messages = [m for item in projected for m in item.messages]
    level, model = path_settings(store, positions)
    leaf_id = path[-1].id if path else None
    return Projection(projected, messages, level, model, leaf_id)


def stream_context(path: Sequence[Entry]) -> Iterator[tuple[Entry, AgentMessage]]:
    """:func:`stream_positions` of a list of entries that is one path."""
    return stream_positions(PathEntries(path), range(len(path)))


def stream_positions(
    store: EntryStore, path: Sequence[int]
) -> Iterator[tuple[Entry, AgentMessage]]:
    """``(source entry, message)`` for every message of the projection of ``path`` (positions
    in ``store``), in order, projected entry by entry for a pass over a very long context
    (``pictx session context``).

    An entry that was not decoded before is forgotten again (:meth:`Entry.forget`) once its
    messages were handed on, so the pass keeps only the entries' lines, not their decoded
    mappings; the messages yielded are the entries' own (read them, do not change them). The
    thinking level and model are :func:`path_settings` of the same path.
    """
    context = context_positions(store, path)
    edits = context_edits_at(store, context)
    for index, position in enumerate(context):
        entry = store.entry(position)
        decoded = entry.is_decoded
        for message in context_item(entry, index, edits).messages:
            yield entry, message
        if not decoded and entry.id not in edits:
            entry.forget()


# -- convert_to_llm -------------------------------------------------------------------------


def bash_execution_text(message: Mapping[str, Any]) -> str:
    """The user-visible text of a ``bashExecution`` message (pi's exact layout)."""
    fence = "`" * 3
    text = f"Ran `{message.get('command', '')}`\n"
    output = message.get("output")
    text += f"{fence}\n{output}\n{fence}" if output else "(no output)"
    exit_code = message.get("exitCode")
    if message.get("cancelled"):
        text += "\n\n(command cancelled)"
    elif isinstance(exit_code, int | float) and not isinstance(exit_code, bool) and exit_code != 0:
        text += f"\n\nCommand exited with code {exit_code}"
    path = message.get("fullOutputPath")
    if message.get("truncated") and path:
        text += f"\n\n[Output truncated. Full output: {path}]"
    return text


def _user(content: Any, timestamp: Any) -> Message:
    return cast(Message, {"role": "user", "content": content, "timestamp": timestamp})


def convert_to_llm(messages: Iterable[AgentMessage | Mapping[str, Any]]) -> list[Message]:
    """Map agent messages to provider roles (pi's ``convertToLlm``); unknown roles are dropped."""
    out: list[Message] = []
    for message in messages:
        role = message.get("role")
        timestamp = message.get("timestamp")
        if role in ("system", "user", "assistant", "toolResult"):
            out.append(cast(Message, message))
        elif role == "bashExecution":
            if not message.get("excludeFromContext"):
                text = bash_execution_text(message)
                out.append(_user([{"type": "text", "text": text}], timestamp))
        elif role == "custom":
            content = message.get("content")
            if isinstance(content, str):
                content = [{"type": "text", "text": content}]
            out.append(_user(content, timestamp))
        elif role == "branchSummary":
            prefix = SUMMARY_WRAPPERS.branch_prefix
            text = prefix + str(message.get("summary")) + BRANCH_SUMMARY_SUFFIX
            out.append(_user([{"type": "text", "text": text}], timestamp))
        elif role == "compactionSummary":
            prefix = SUMMARY_WRAPPERS.compaction_prefix
            text = prefix + str(message.get("summary")) + COMPACTION_SUMMARY_SUFFIX
            out.append(_user([{"type": "text", "text": text}], timestamp))
    return out


def build_projection(entries: list[Entry] | TreeIndex, leaf_id: str | None) -> Projection:
    """pi's ``buildSessionProjection(entries, leafId)``: ``None`` gives an empty projection.

    Unlike pi (which falls back to the last entry), an unknown ``leaf_id`` raises
    :class:`~pi_context.errors.TreeError`.
    """
    from pi_context.session.tree import TreeIndex

    tree = entries if isinstance(entries, TreeIndex) else TreeIndex(entries)
    if leaf_id is None:
        return projection_of_path([])
    return projection_of_path(tree.path(tree.require(leaf_id)))
