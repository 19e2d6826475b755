"""Cut-point invariants on random conversations."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pi_context.compaction import CompactionSettings, prepare_compaction
from pi_context.compaction.cut_points import CUT_POINT_ROLES, find_cut_point
from pi_context.session.entries import Entry
from pi_context.session.projection import ProjectedEntry, entry_messages
from pi_context.tokens import estimate_tokens

ROLES = ["user", "assistant", "toolResult", "system", "bashExecution", "custom", "meta"]


def make(kinds: list[tuple[str, int]]) -> list[Entry]:
    entries = []
    parent = None
    for n, (kind, size) in enumerate(kinds):
        eid = f"e{n:03d}"
        data: dict[str, Any]
        if kind == "meta":
            data = {"type": "label", "id": eid, "parentId": parent, "targetId": "e000"}
        elif kind == "custom":
            data = {
                "type": "custom_message",
                "customType": "c",
                "content": "c" * size,
                "display": True,
                "id": eid,
                "parentId": parent,
                "timestamp": "2025-01-01T00:00:00.000Z",
            }
        else:
            message: dict[str, Any] = {"role": kind, "timestamp": 1}
            if kind == "assistant":
                message["content"] = [{"type": "text", "text": "a" * size}]
            elif kind == "bashExecution":
                message.update(command="ls", output="o" * size, cancelled=False, truncated=False)
            else:
                message["content"] = (
                    "t" * size if kind != "toolResult" else [{"type": "text", "text": "t" * size}]
                )
            data = {"type": "message", "id": eid, "parentId": parent, "message": message}
        entries.append(Entry.from_data(data))
        parent = eid
    return entries


conversations = st.lists(
    st.tuples(st.sampled_from(ROLES), st.integers(0, 4000)), min_size=1, max_size=30
)


@settings(deadline=None)
@given(conversations, st.integers(0, 20000))
def test_cut_is_never_a_tool_result_or_system_and_split_has_a_turn_start(
    kinds: list[tuple[str, int]], keep: int
) -> None:
    entries = make(kinds)
    items = [ProjectedEntry(e, entry_messages(e)) for e in entries]
    cp = find_cut_point(
        items, 0, len(items), keep, lambda i: sum(estimate_tokens(m) for m in i.messages)
    )
    kept = items[cp.first_kept_index]
    if any(k in CUT_POINT_ROLES for k, _ in kinds):
        roles = {m.get("role") for m in kept.messages}
        assert roles & CUT_POINT_ROLES or not kept.messages
        assert "toolResult" not in roles
        assert "system" not in roles
    if cp.is_split_turn:
        assert cp.turn_start_index < cp.first_kept_index


@settings(deadline=None)
@given(conversations, st.integers(1, 20000))
def test_preparation_summarizes_everything_before_the_kept_range(
    kinds: list[tuple[str, int]], keep: int
) -> None:
    entries = make(kinds)
    prep = prepare_compaction(entries, CompactionSettings(keep_recent_tokens=keep))
    if prep is None:
        return
    ids = [e.id for e in entries]
    first = ids.index(prep.first_kept_entry_id)
    covered = set(prep.summarize_entry_ids) | set(prep.turn_prefix_entry_ids)
    for entry, (kind, _) in zip(entries[:first], kinds[:first], strict=True):
        if kind not in ("meta", "system"):
            assert entry.id in covered
    assert all(ids.index(i) < first for i in covered)
    assert all(m.get("role") != "system" for m in prep.messages_to_summarize)


def test_recovery_omission_moves_the_cut_onto_the_omitted_attempt() -> None:
    from pi_context.messages import user_message
    from tests.compaction.helpers import assistant_with_usage, new_session

    session = new_session()
    big = session.append_message(user_message("x" * 40000, timestamp=1))
    attempt = session.append_message(assistant_with_usage("partial"))
    session.append_context_edit(attempt.id, None)
    prep = prepare_compaction(
        session.branch_entries(),
        CompactionSettings(keep_recent_tokens=1000),
        projection=session.projection(),
    )
    assert prep is not None
    assert prep.first_kept_entry_id == attempt.id
    assert prep.is_split_turn
    assert prep.turn_prefix_entry_ids == [big.id]
    assert prep.messages_to_summarize == []
    # an unrelated replacement edit after the cut blocks the rule: nothing to summarize
    session.append_context_edit(big.id, {"content": "y" * 40000})
    assert (
        prepare_compaction(session.branch_entries(), CompactionSettings(keep_recent_tokens=1000))
        is None
    )
