"""Context estimates around a compaction: the guard's prediction matches the real result."""

from __future__ import annotations

from typing import Any

from pi_context.compaction import CompactionSettings, Compactor, TokenCache, prepare_compaction
from pi_context.compaction.accounting import (
    estimate_kept_context_tokens,
    estimate_projected_context_tokens,
)
from pi_context.prompt import get_current_system_message
from pi_context.session import Session, projection_of_path
from pi_context.tokens import estimate_tokens
from tests.compaction.helpers import add_turn, new_session

TURN = 527


def _session_with_system_messages() -> Session:
    session = new_session()
    session.append_message(
        {"role": "system", "content": "", "sections": {"preamble": "You help."}, "timestamp": 5}
    )
    for n in range(4):
        add_turn(session, n)
    session.append_message(
        {"role": "system", "content": "", "sections": {"cwd": "<cwd>\n/x\n</cwd>"}, "timestamp": 6}
    )
    add_turn(session, 4)
    return session


async def test_kept_estimate_predicts_the_context_after_compaction() -> None:
    session = _session_with_system_messages()
    settings = CompactionSettings(keep_recent_tokens=TURN)
    before = session.projection()
    prep = prepare_compaction(session.branch_entries(), settings)
    assert prep is not None
    assert prep.cut is not None
    without_summary = estimate_kept_context_tokens(before, prep.cut.first_kept_index)
    result = await Compactor(session, None, settings).compact()
    assert result is not None
    predicted = estimate_kept_context_tokens(
        before, prep.cut.first_kept_index, summary=result.summary
    )
    assert predicted == result.estimated_tokens_after
    summary_tokens = estimate_tokens({"role": "compactionSummary", "summary": result.summary})
    assert without_summary == predicted - summary_tokens


def test_pure_estimate_counts_the_system_state_once() -> None:
    session = _session_with_system_messages()
    projection = session.projection()
    messages = projection.messages
    systems = [m for m in messages if m["role"] == "system"]
    assert len(systems) == 2
    # no assistant reported usage, so the estimate is pure: newest system state + the rest
    rest = sum(estimate_tokens(m) for m in messages if m["role"] != "system")
    cache = TokenCache()
    estimate = estimate_projected_context_tokens(
        projection,
        session.branch_entries(),
        cache,
    )
    assert estimate.last_usage_index is None
    current = get_current_system_message(messages)
    assert current is not None
    assert estimate.tokens == rest + estimate_tokens(current)
    # cached estimates give the same answer
    assert (
        estimate_projected_context_tokens(projection, session.branch_entries(), cache) == estimate
    )


def test_token_cache_is_keyed_by_entry_id_and_edit_generation(monkeypatch: Any) -> None:
    import pi_context.compaction.accounting as accounting

    measured: list[object] = []

    def counting(message: Any) -> int:
        measured.append(message.get("role"))
        return estimate_tokens(message)

    monkeypatch.setattr(accounting, "estimate_tokens", counting)
    session = new_session()
    for turn in range(3):
        add_turn(session, turn)
    cache = TokenCache()
    items = session.stored_projection().entries
    first = sum(cache.item_tokens(item) for item in items)
    measured.clear()
    # another projection of the same path: new items, same keys, nothing measured again
    rebuilt = projection_of_path(session.branch_entries()).entries
    assert rebuilt[1] is not items[1]
    assert sum(cache.item_tokens(item) for item in rebuilt) == first
    assert measured == []
    # an edit starts a new generation of its target: that entry alone is measured again
    target = next(p for p in rebuilt if p.entry.role == "toolResult")
    session.append_context_edit(target.entry.id, {"content": "masked"})
    edited = session.stored_projection().entries
    sum(cache.item_tokens(item) for item in edited)
    assert measured == ["toolResult"]
    # an entry of another session that shares the id is not taken for this one
    other = new_session()
    add_turn(other, 0, result_chars=5000)
    measured.clear()
    foreign = other.stored_projection().entries
    result = next(p for p in foreign if p.entry.role == "toolResult")
    assert result.key in {q.key for q in items}  # same id, same (no) edit, other content
    fresh = sum(estimate_tokens(m) for m in result.messages)
    assert cache.item_tokens(result) == fresh
    assert measured == ["toolResult"]
    original = next(p for p in items if p.key == result.key)
    assert cache.item_tokens(original) != fresh
