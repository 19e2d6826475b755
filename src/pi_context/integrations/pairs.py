"""The pair invariant: every tool result follows its call, every call gets its result.

Providers reject a tool result whose call is not in the request, and a call (other than in the
newest turn, still running) without a result. pi's cut points never separate the two, but a
framework's history can arrive already broken (a trimmer that cut a call and kept its result;
a crashed tool), and the frameworks differ in what they do about it: some send it and get a
400, some drop the result silently. The adapters run every list they emit through
:func:`repair_pairs`, which applies pi's delivery rule (an orphaned result is left out of the
request, an unanswered call gets an error result) and *says* what it changed; the originals
stay in the session file, so nothing is lost from the record.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["MISSING_RESULT_TEXT", "PairLedger", "PairRepair", "pair_violations", "repair_pairs"]

MISSING_RESULT_TEXT = "No result provided"
"""The text of the error result that answers a call whose result never came (pi's wording)."""


@dataclass(frozen=True, slots=True)
class PairRepair:
    """A repaired message list and what was changed to make it valid."""

    messages: list[dict[str, Any]]
    dropped_results: list[str]
    """Call ids of results left out: their call is not earlier in the list."""
    answered_calls: list[str]
    """Call ids answered with an error result: the conversation moved on without one."""

    @property
    def changed(self) -> bool:
        return bool(self.dropped_results or self.answered_calls)


def _calls(message: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    if message.get("role") != "assistant":
        return []
    content = message.get("content")
    if not isinstance(content, list):
        return []
    return [b for b in content if isinstance(b, Mapping) and b.get("type") == "toolCall"]


class _LaterResults:
    """Whether a result for a call id comes at or after an index (``later.has(id, index)``),
    from each call id's last result: one pass, however many calls the list holds."""

    __slots__ = ("_last",)

    def __init__(self, messages: Sequence[Mapping[str, Any]]) -> None:
        self._last = {
            str(message.get("toolCallId")): index
            for index, message in enumerate(messages)
            if message.get("role") == "toolResult"
        }

    def has(self, call_id: str, index: int) -> bool:
        return self._last.get(call_id, -1) >= index


_TURN_ROLES = ("user", "assistant", "compactionSummary", "branchSummary", "custom")


def _last_assistant(messages: Sequence[Mapping[str, Any]]) -> int:
    """The newest assistant message when its turn may still be running (only tool results
    follow it), else -1."""
    for index in range(len(messages) - 1, -1, -1):
        role = messages[index].get("role")
        if role == "assistant":
            return index
        if role in _TURN_ROLES:
            return -1
    return -1


def repair_pairs(messages: Sequence[Mapping[str, Any]], *, timestamp: int = 0) -> PairRepair:
    """``messages`` (pi messages) made to satisfy the pair invariant.

    A result may come after other assistant messages (parallel calls a framework split over
    several messages); a call is unanswered only when no result for it follows at all. Its
    error result goes where its turn's results end. Calls of the last assistant message stay
    open: that turn is still running.
    """
    out: list[dict[str, Any]] = []
    dropped: list[str] = []
    answered_late: list[str] = []
    called: set[str] = set()
    answered: set[str] = set()
    later = _LaterResults(messages)
    last = _last_assistant(messages)
    pending: list[Mapping[str, Any]] = []

    def close(index: int) -> None:
        for call in pending:
            call_id = str(call.get("id"))
            if call_id in answered or later.has(call_id, index):
                continue
            answered.add(call_id)
            answered_late.append(call_id)
            out.append(
                {
                    "role": "toolResult",
                    "toolCallId": call_id,
                    "toolName": call.get("name"),
                    "content": [{"type": "text", "text": MISSING_RESULT_TEXT}],
                    "isError": True,
                    "timestamp": timestamp,
                }
            )
        pending.clear()

    for index, message in enumerate(messages):
        role = message.get("role")
        if role == "toolResult":
            call_id = str(message.get("toolCallId"))
            if call_id not in called or call_id in answered:
                dropped.append(call_id)
                continue
            answered.add(call_id)
            out.append(dict(message))
            continue
        if role in _TURN_ROLES:
            close(index)
        calls = _calls(message)
        called.update(str(call.get("id")) for call in calls)
        if index != last:
            pending.extend(calls)
        out.append(dict(message))
    close(len(messages))
    return PairRepair(out, dropped, answered_late)


def pair_violations(messages: Sequence[Mapping[str, Any]]) -> list[str]:
    """What breaks the pair invariant in ``messages`` (pi messages); empty when it holds."""
    problems: list[str] = []
    called: set[str] = set()
    answered: set[str] = set()
    later = _LaterResults(messages)
    last = _last_assistant(messages)
    for index, message in enumerate(messages):
        if message.get("role") == "toolResult":
            call_id = str(message.get("toolCallId"))
            if call_id not in called:
                problems.append(f"message {index}: result for {call_id} without an earlier call")
            elif call_id in answered:
                problems.append(f"message {index}: second result for {call_id}")
            answered.add(call_id)
            continue
        for call in _calls(message):
            call_id = str(call.get("id"))
            called.add(call_id)
            if index != last and not later.has(call_id, index):
                problems.append(f"message {index}: call {call_id} has no result")
    return problems


class PairLedger:
    """What :func:`repair_pairs` would change in a list, kept up to date as messages are added
    to its end: the same findings as a repair of the whole list, at the cost of the new
    messages only."""

    __slots__ = ("_answered", "_called", "_closed", "_dropped", "_last", "_last_open")

    def __init__(self, messages: Sequence[Mapping[str, Any]] = ()) -> None:
        self._called: set[str] = set()
        self._answered: set[str] = set()
        self._dropped: set[str] = set()
        self._closed: set[str] = set()
        """Unanswered calls of assistant messages an assistant message followed."""
        self._last: set[str] = set()
        """Unanswered calls of the newest assistant message."""
        self._last_open = False
        """Only results (or messages outside the turn) follow the newest assistant message."""
        self.add(messages)

    def add(self, messages: Sequence[Mapping[str, Any]]) -> None:
        """Take ``messages`` in as the list's new end."""
        for message in messages:
            role = message.get("role")
            if role == "toolResult":
                call_id = str(message.get("toolCallId"))
                if call_id not in self._called or call_id in self._answered:
                    self._dropped.add(call_id)
                else:
                    self._answered.add(call_id)
                    self._closed.discard(call_id)
                    self._last.discard(call_id)
                continue
            if role in _TURN_ROLES:
                self._last_open = False
            if role != "assistant":
                continue
            self._closed |= self._last
            ids = {str(call.get("id")) for call in _calls(message)}
            self._called |= ids
            self._last = ids - self._answered
            self._last_open = True

    @property
    def dropped_results(self) -> set[str]:
        """Call ids whose results a repair leaves out (no earlier call, or a second result)."""
        return set(self._dropped)

    @property
    def answered_calls(self) -> set[str]:
        """Call ids a repair answers with an error result (no result follows; the newest
        assistant's calls, while only results follow it, are still running)."""
        return self._closed | (set() if self._last_open else self._last)
