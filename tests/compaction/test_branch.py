"""Branch summaries: collection between leaves, budget fitting, summary entry placement."""

from __future__ import annotations

import pytest

from pi_context.compaction import summarize_branch
from pi_context.compaction.branch import (
    NO_CONTENT_SUMMARY,
    collect_branch_entries,
    prepare_branch_entries,
)
from pi_context.compaction.prompts import BRANCH_PREAMBLE
from pi_context.errors import CompactionError
from pi_context.messages import user_message
from pi_context.session import Session
from pi_context.testing import ScriptedModel, failure, reply
from tests.compaction.helpers import build_session


def _leaf(session: Session) -> str | None:
    """The leaf id, read through a call so mypy does not keep an earlier narrowing."""
    return session.leaf_id


def forked_session() -> tuple[Session, str, str | None]:
    """Two turns, then the leaf goes back to the first reply and a second branch grows."""
    session = build_session(2)
    fork_point = session.entries[3].id  # the reply of turn 0
    old_leaf = session.leaf_id
    return session, fork_point, old_leaf


def test_collect_entries_between_old_leaf_and_common_ancestor() -> None:
    session, fork_point, old_leaf = forked_session()
    session.move_leaf(fork_point)
    session.append_message(user_message("another idea", timestamp=1))
    target = session.leaf_id
    assert target is not None
    collected = collect_branch_entries(session, old_leaf, target)
    assert collected.common_ancestor_id == fork_point
    assert [e.id for e in collected.entries] == [e.id for e in session.entries[4:8]]
    assert collect_branch_entries(session, None, target).entries == []


def test_budget_keeps_newest_and_skips_tool_results() -> None:
    session = build_session(3)
    entries = list(session.entries)
    prepared = prepare_branch_entries(entries, 0)
    assert all(m["role"] != "toolResult" for m in prepared.messages)
    assert len(prepared.messages) == 9
    small = prepare_branch_entries(entries, 20)
    assert 0 < len(small.messages) < 9
    assert small.messages[-1] is prepared.messages[-1]
    assert small.total_tokens <= 20
    # file ops are recorded for the overflowing message too
    assert small.file_ops.lists()[0]


async def test_summarize_branch_appends_summary_at_the_target_parent() -> None:
    session, fork_point, old_leaf = forked_session()
    user_target = session.entries[4]  # the user message of turn 1
    model = ScriptedModel([reply("## Goal\nexplored", input_tokens=3, output_tokens=2)])
    entry = await summarize_branch(session, user_target.id, model)
    assert entry is not None
    data = entry.data
    assert data["parentId"] == fork_point  # a user target moves the leaf to its parent
    assert data["fromId"] == old_leaf
    assert data["fromHook"] is False
    assert data["summary"].startswith(BRANCH_PREAMBLE + "## Goal\nexplored\n\n<read-files>\n")
    assert data["details"] == {"readFiles": ["src/file1.py"], "modifiedFiles": []}
    assert session.leaf_id == entry.id
    request = model.requests[0]
    assert request.options.cache == "none"
    assert request.tools == ()
    messages = session.projection().messages
    assert messages[-1]["role"] == "branchSummary"


async def test_branch_summary_failure_changes_nothing() -> None:
    session, fork_point, old_leaf = forked_session()
    before = len(session.entries)
    with pytest.raises(CompactionError, match="Branch summarization failed: nope"):
        await summarize_branch(session, fork_point, ScriptedModel([failure("nope")]))
    assert len(session.entries) == before
    assert session.leaf_id == old_leaf


async def test_offline_branch_summary_and_no_content() -> None:
    session, fork_point, _old_leaf = forked_session()
    entry = await summarize_branch(session, fork_point, None)
    assert entry is not None
    assert "## Goal" in entry.data["summary"]
    assert "Critical Context" not in entry.data["summary"]
    assert "usage" not in entry.data
    # only metadata on the abandoned branch: pi's literal
    session.move_leaf(fork_point)
    session.append_label(fork_point, "mark")
    label_leaf = session.leaf_id
    assert label_leaf is not None
    entry2 = await summarize_branch(session, fork_point, None)
    assert entry2 is not None
    assert entry2.data["summary"] == NO_CONTENT_SUMMARY


async def test_moving_forward_or_without_summary_just_moves_the_leaf() -> None:
    session = build_session(2)
    count = len(session.entries)
    first, reply_0 = session.entries[0].id, session.entries[3].id
    last = session.leaf_id
    # moving forward (target is a descendant): nothing to summarize, no entry
    session.move_leaf(reply_0)
    assert last is not None
    assert await summarize_branch(session, last, None) is None
    assert _leaf(session) == last
    # no summary requested: a user target moves the leaf to its parent (here: no parent)
    assert await summarize_branch(session, first, None, summarize=False) is None
    assert _leaf(session) is None
    assert len(session.entries) == count


async def test_label_is_attached_to_the_summary_and_becomes_the_leaf() -> None:
    session, fork_point, _old_leaf = forked_session()
    entry = await summarize_branch(session, fork_point, None, label="tried B")
    assert entry is not None
    assert session.label_of(entry.id) == "tried B"
    leaf = session.leaf
    assert leaf is not None
    assert leaf.type == "label"
    assert leaf.parent_id == entry.id
