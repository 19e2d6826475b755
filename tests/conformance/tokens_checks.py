"""Conformance checks for per-message token estimates and entry→message timestamps.

``units/estimate_tokens``: ``estimateTokens(message)`` per case (messages given as JSON text so
number spelling survives). ``units/timestamps``: the timestamp pi gives the messages it
synthesizes from ``branch_summary``, ``compaction`` and ``custom_message`` entries.
"""

from __future__ import annotations

from typing import Any

from pi_context import _json
from pi_context.session.entries import Entry
from pi_context.session.projection import entry_messages
from pi_context.tokens import estimate_tokens
from tests.conformance import registry

registry.claim("units", "cases", "tz", "rows")

_ENTRY_FOR_ROLE: dict[str, dict[str, Any]] = {
    "branchSummary": {"type": "branch_summary", "fromId": "root", "summary": "s"},
    "compactionSummary": {
        "type": "compaction",
        "summary": "s",
        "firstKeptEntryId": "a",
        "tokensBefore": 1,
    },
    "custom": {"type": "custom_message", "customType": "t", "content": "c", "display": True},
}


def check_estimate_tokens(golden: dict[str, Any]) -> list[str]:
    problems = []
    for name, case in golden["cases"].items():
        message = _json.loads(case["inputJson"].encode("utf-8", errors="surrogatepass"))
        got = estimate_tokens(message)
        if got != case["estimateTokens"]:
            problems.append(f"{name}: {got} != {case['estimateTokens']}")
    return problems


def check_timestamps(golden: dict[str, Any]) -> list[str]:
    problems = []
    for row in golden["rows"]:
        for role, base in _ENTRY_FOR_ROLE.items():
            data = {**base, "id": "e1", "parentId": None, "timestamp": row["input"]}
            messages = entry_messages(Entry.from_data(data))
            got = messages[-1]["timestamp"]
            if got != row[role]:
                problems.append(f"{row['input']!r} → {role}: {got} != {row[role]}")
    return problems
