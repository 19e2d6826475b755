"""``keep_tool_pairs``: a cut never keeps a tool result without its call (framework histories)."""

from __future__ import annotations

from pi_context.compaction import CompactionSettings, prepare_compaction
from pi_context.messages import (
    assistant_message,
    text_block,
    tool_call,
    tool_result_message,
    user_message,
)
from pi_context.session import Session


def _split_parallel_calls() -> Session:
    """``[H, AI(a), AI(b), Tool(a), Tool(b), AI]``: parallel calls a framework split in two."""
    session = Session.in_memory("/tmp")
    session.append_message(user_message("read both", timestamp=1))
    for call_id in ("a", "b"):
        session.append_message(
            assistant_message(
                [tool_call(call_id, "read", {"path": f"{call_id}.py"})],
                api="x",
                provider="x",
                model="x",
                stop_reason="toolUse",
                timestamp=1,
            )
        )
    for call_id in ("a", "b"):
        session.append_message(
            tool_result_message(call_id, "read", [text_block("line\n" * 400)], timestamp=1)
        )
    session.append_message(
        assistant_message([text_block("both read")], api="x", provider="x", model="x", timestamp=1)
    )
    return session


def _kept_roles(settings: CompactionSettings) -> list[str]:
    session = _split_parallel_calls()
    prep = prepare_compaction(session.branch_entries(), settings)
    assert prep is not None
    kept = session.branch_entries()[prep.first_kept_path_index :]
    return [str(e.get("message", {}).get("role")) for e in kept]


def test_pi_cut_keeps_the_second_call_and_both_results() -> None:
    # pi's rule: the cut may fall on AI(b), keeping Tool(a) whose call AI(a) is summarized
    roles = _kept_roles(CompactionSettings(keep_recent_tokens=1_005))
    assert roles == ["assistant", "toolResult", "toolResult", "assistant"]


def test_with_keep_tool_pairs_the_cut_moves_back_to_the_first_call() -> None:
    roles = _kept_roles(CompactionSettings(keep_recent_tokens=1_005, keep_tool_pairs=True))
    assert roles == ["assistant", "assistant", "toolResult", "toolResult", "assistant"]
