"""The cached preparation (TokenCache kept across calls) equals a fresh one after any change."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pi_context.compaction import CompactionSettings, TokenCache, prepare_compaction
from pi_context.compaction.prepare import CompactionPreparation
from tests.compaction.helpers import add_turn, new_session


def summary(prep: CompactionPreparation | None) -> object:
    if prep is None:
        return None
    return (
        prep.first_kept_entry_id,
        prep.tokens_before,
        prep.is_split_turn,
        prep.summarize_entry_ids,
        [id(m) for m in prep.messages_to_summarize],
        prep.turn_prefix_entry_ids,
        prep.file_ops.to_json(),
        prep.previous_summary,
    )


actions = st.lists(
    st.one_of(
        st.tuples(
            st.just("turn"), st.integers(100, 5000), st.sampled_from(["read", "edit", "write"])
        ),
        st.tuples(st.just("edit"), st.integers(0, 40), st.booleans()),
        st.tuples(st.just("compact"), st.integers(0, 3), st.just("")),
    ),
    min_size=1,
    max_size=25,
)


@settings(deadline=None, max_examples=40)
@given(actions, st.sampled_from([1, 500, 3000]))
def test_cached_preparation_equals_fresh_preparation(
    plan: list[tuple[str, int, Any]], keep: int
) -> None:
    session = new_session()
    cache = TokenCache()
    config = CompactionSettings(keep_recent_tokens=keep)
    turn = 0
    for kind, a, b in plan:
        if kind == "turn":
            add_turn(session, turn, result_chars=int(a), tool=str(b), path=f"f{turn % 4}.py")
            turn += 1
        elif kind == "edit":
            targets = [
                e
                for e in session.branch_entries()
                if e.type == "message" and e.role == "toolResult"
            ]
            if targets:
                target = targets[int(a) % len(targets)]
                session.append_context_edit(target.id, None if b else {"content": "masked"})
        else:
            prep = prepare_compaction(
                session.branch_entries(),
                config,
                projection=session.stored_projection(),
                cache=cache,
            )
            if prep is not None:
                session.append_compaction(
                    "summary",
                    prep.first_kept_entry_id,
                    prep.tokens_before,
                    details={"readFiles": prep.read_files, "modifiedFiles": prep.modified_files},
                )
        cached = prepare_compaction(
            session.branch_entries(), config, projection=session.stored_projection(), cache=cache
        )
        fresh = prepare_compaction(
            session.branch_entries(), config, projection=session.stored_projection()
        )
        assert summary(cached) == summary(fresh)
