"""BranchPositions answers as a full scan would, however the branch grows, compacts or moves."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pi_context.agent._state import BranchPositions
from pi_context.messages import user_message
from pi_context.session import Session
from pi_context.session.entries import Entry
from pi_context.testing import SequentialIds

OPS = st.lists(
    st.tuples(
        st.sampled_from(["message", "message", "edit", "compaction", "move", "check"]),
        st.integers(min_value=0, max_value=1000),
    ),
    max_size=40,
)


def expected_compaction(branch: list[Entry]) -> int:
    return max((i for i, e in enumerate(branch) if e.type == "compaction"), default=-1)


@settings(max_examples=60, deadline=None)
@given(OPS)
def test_matches_a_full_scan(ops: list[tuple[str, int]]) -> None:
    session = Session.in_memory("/tmp", ids=SequentialIds())
    facts = BranchPositions()
    for op, n in ops:
        branch = session.branch_entries()
        if op == "message":
            session.append_message(user_message(f"m{n}", timestamp=n))
        elif op == "edit" and (targets := [e for e in branch if e.role == "user"]):
            session.append_context_edit(targets[n % len(targets)].id, None)
        elif op == "compaction" and branch:
            session.append_compaction("summary", branch[n % len(branch)].id, 10)
        elif op == "move" and session.entries:
            session.move_leaf(session.entries[n % len(session.entries)].id)
        branch = session.branch_entries()
        projection = session.projection()
        assert facts.last_compaction(branch) == expected_compaction(branch)
        for entry in session.entries[:: max(1, len(session.entries) // 5)]:
            first = next((i for i, e in enumerate(branch) if e.id == entry.id), None)
            assert facts.position(branch, entry.id) == first
        has_edit = any(p.entry.type == "context_edit" for p in projection.entries)
        assert facts.has_context_edit(projection.entries) is has_edit


def test_a_fresh_instance_scans_everything() -> None:
    session = Session.in_memory("/tmp", ids=SequentialIds())
    first = session.append_message(user_message("a", timestamp=1))
    session.append_context_edit(first.id, None)
    compaction = session.append_compaction("s", first.id, 5)
    session.append_message(user_message("b", timestamp=2))
    branch = session.branch_entries()
    assert BranchPositions().last_compaction(branch) == branch.index(compaction)
    assert BranchPositions().has_context_edit(session.projection().entries) is True
