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

__all__ = ["MISSING_RESULT_TEXT", "PairRepair", "pair_violations", "repair_pairs"]

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


def repair_pairs(messages: Sequence[Mapping[str, Any]], *, timestamp: int = 0) -> PairRepair:
    """``messages`` (pi messages) made to satisfy the pair invariant.

    Calls of the last assistant message stay open when only their results follow it: that turn
    is still running.
    """
    out: list[dict[str, Any]] = []
    dropped: list[str] = []
    answered_late: list[str] = []
    called: set[str] = set()
    answered: set[str] = set()
    open_calls: list[Mapping[str, Any]] = []

    def close_open() -> None:
        for call in open_calls:
            call_id = str(call.get("id"))
            if call_id in answered:
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
        open_calls.clear()

    for message in messages:
        role = message.get("role")
        if role == "toolResult":
            call_id = str(message.get("toolCallId"))
            if call_id not in called or call_id in answered:
                dropped.append(call_id)
                continue
            answered.add(call_id)
            out.append(dict(message))
            continue
        if role in ("user", "assistant", "compactionSummary", "branchSummary", "custom"):
            close_open()
        calls = _calls(message)
        for call in calls:
            called.add(str(call.get("id")))
        open_calls.extend(calls)
        out.append(dict(message))
    return PairRepair(out, dropped, answered_late)


def pair_violations(messages: Sequence[Mapping[str, Any]]) -> list[str]:
    """What breaks the pair invariant in ``messages`` (pi messages); empty when it holds."""
    problems: list[str] = []
    called: set[str] = set()
    answered: set[str] = set()
    open_calls: list[str] = []
    for index, message in enumerate(messages):
        role = message.get("role")
        if role == "toolResult":
            call_id = str(message.get("toolCallId"))
            if call_id not in called:
                problems.append(f"message {index}: result for {call_id} without an earlier call")
            elif call_id in answered:
                problems.append(f"message {index}: second result for {call_id}")
            answered.add(call_id)
            continue
        if role in ("user", "assistant", "compactionSummary", "branchSummary", "custom"):
            problems.extend(
                f"message {index}: call {c} has no result before it"
                for c in open_calls
                if c not in answered
            )
            open_calls = []
        for call in _calls(message):
            called.add(str(call.get("id")))
            open_calls.append(str(call.get("id")))
    return problems
