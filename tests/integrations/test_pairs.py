"""The pair invariant: any message list, once repaired, breaks it nowhere."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pi_context.integrations.pairs import PairLedger, pair_violations, repair_pairs

IDS = st.sampled_from(["a", "b", "c"])
MESSAGE = st.one_of(
    st.just({"role": "user", "content": "u"}),
    st.lists(IDS, max_size=2).map(
        lambda ids: {
            "role": "assistant",
            "content": [
                {"type": "toolCall", "id": i, "name": "read", "arguments": {}} for i in ids
            ],
        }
    ),
    IDS.map(lambda i: {"role": "toolResult", "toolCallId": i, "toolName": "read", "content": []}),
)


def _unique_calls(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Call ids are unique in a conversation (a result may still name a missing or used one)."""
    seen: set[str] = set()
    for message in messages:
        for block in message.get("content") or []:
            if isinstance(block, dict) and block.get("type") == "toolCall":
                while block["id"] in seen:
                    block["id"] += "'"
                seen.add(block["id"])
    return messages


@settings(max_examples=400, deadline=None)
@given(st.lists(MESSAGE, max_size=10).map(_unique_calls))
def test_a_repaired_list_has_no_violation(messages: list[dict[str, Any]]) -> None:
    repair = repair_pairs(messages)
    assert pair_violations(repair.messages) == []
    if not pair_violations(messages):
        assert not repair.changed  # a valid list goes out as it came
        assert repair.messages == messages


def test_parallel_calls_split_over_messages_are_valid_and_kept() -> None:
    split: list[dict[str, Any]] = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "toolCall", "id": "a", "name": "read"}]},
        {"role": "assistant", "content": [{"type": "toolCall", "id": "b", "name": "read"}]},
        {"role": "toolResult", "toolCallId": "a", "content": []},
        {"role": "toolResult", "toolCallId": "b", "content": []},
    ]
    assert pair_violations(split) == []
    assert not repair_pairs(split).changed


def test_the_newest_turn_may_still_be_waiting_for_its_results() -> None:
    pending: list[dict[str, Any]] = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "toolCall", "id": "a", "name": "read"}]},
    ]
    assert pair_violations(pending) == []
    closed = [*pending, {"role": "user", "content": "stop"}]
    assert pair_violations(closed) == ["message 1: call a has no result"]
    repair = repair_pairs(closed)
    assert repair.answered_calls == ["a"]
    assert repair.messages[2]["isError"] is True


@settings(max_examples=400, deadline=None)
@given(st.lists(MESSAGE, max_size=14), st.integers(min_value=0, max_value=14))
def test_the_ledger_finds_what_a_repair_of_the_whole_list_changes(
    messages: list[dict[str, Any]], split: int
) -> None:
    """Taken in at once or in two parts (call ids repeated too), the ledger reports the
    results a repair leaves out and the calls it answers."""
    repair = repair_pairs(messages)
    at_once = PairLedger(messages)
    in_two = PairLedger(messages[:split])
    in_two.add(messages[split:])
    for ledger in (at_once, in_two):
        assert ledger.dropped_results == set(repair.dropped_results)
        assert ledger.answered_calls == set(repair.answered_calls)
