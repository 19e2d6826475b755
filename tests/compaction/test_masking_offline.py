"""Observation masking and the offline summarizer."""

from __future__ import annotations

from pi_context.compaction import (
    CompactionSettings,
    Compactor,
    ObservationsMasked,
    restore_observations,
)
from pi_context.compaction.masking import MASK_MARKER, mask_observations
from pi_context.compaction.offline import offline_history_summary
from tests.compaction.helpers import build_session, orphan_tool_results
from tests.jsonview import as_json


def test_masking_hides_old_results_and_restores_them() -> None:
    session = build_session(6)
    raw_before = [e.raw for e in session.entries]
    edits = mask_observations(session, keep_turns=2)
    assert len(edits) == 4
    assert [e.raw for e in session.entries[: len(raw_before)]] == raw_before  # file only grows
    messages = session.projection().messages
    results = [as_json(m) for m in messages if m["role"] == "toolResult"]
    assert [m["content"][0]["text"].startswith(MASK_MARKER) for m in results] == [True] * 4 + [
        False
    ] * 2
    assert orphan_tool_results(messages) == []
    assert mask_observations(session, keep_turns=2) == []  # idempotent
    restored = restore_observations(session)
    assert len(restored) == 4
    assert all(
        not as_json(m)["content"][0]["text"].startswith(MASK_MARKER)
        for m in session.projection().messages
        if m["role"] == "toolResult"
    )


async def test_threshold_check_masks_before_summarizing() -> None:
    session = build_session(8)
    events: list[object] = []
    settings = CompactionSettings(mask_observations=True, mask_keep_turns=2, reserve_tokens=1000)
    compactor = Compactor(session, None, settings, on_event=events.append)
    tokens = compactor.context_tokens()
    # a window where masking alone brings the context under the threshold
    result = await compactor.maybe_compact(tokens + 500)
    assert result is None
    assert any(isinstance(e, ObservationsMasked) for e in events)
    assert all(e.type != "compaction" for e in session.entries)
    assert compactor.context_tokens() < tokens


async def test_threshold_check_summarizes_when_masking_is_not_enough() -> None:
    session = build_session(8)
    events: list[object] = []
    settings = CompactionSettings(
        mask_observations=True, mask_keep_turns=2, reserve_tokens=1000, keep_recent_tokens=527
    )
    compactor = Compactor(session, None, settings, on_event=events.append)
    tokens = compactor.context_tokens()
    result = await compactor.maybe_compact(1200)  # over the threshold even after masking
    assert result is not None
    assert session.entries[-1].type == "compaction"
    (masked,) = [e for e in events if isinstance(e, ObservationsMasked)]
    assert masked.tokens_before == tokens
    assert masked.tokens_after < tokens
    assert len(masked.target_ids) == 6


def test_offline_summary_content_and_merge() -> None:
    messages = [
        {
            "role": "user",
            "content": "Fix the login bug. Never touch the database schema.",
            "timestamp": 1,
        },
        {
            "role": "assistant",
            "content": [
                {"type": "toolCall", "id": "1", "name": "bash", "arguments": {"command": "pytest"}}
            ],
            "timestamp": 1,
        },
        {
            "role": "toolResult",
            "toolCallId": "1",
            "toolName": "bash",
            "isError": True,
            "content": [{"type": "text", "text": "AssertionError: expected 200\nmore"}],
            "timestamp": 1,
        },
    ]
    text = offline_history_summary(messages, None, ["src/a.py"], ["src/login.py"])
    assert "## Goal\n- Fix the login bug. Never touch the database schema." in text
    assert "- Never touch the database schema." in text
    assert "- [x] Modified `src/login.py`" in text
    assert "`bash` failed: AssertionError: expected 200" in text
    assert "### In Progress\n- [ ] Fix the login bug." in text
    assert "Files read: `src/a.py`" in text
    later = [
        {"role": "user", "content": "Now add a test.", "timestamp": 1},
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "Added tests/test_login.py"}],
            "timestamp": 1,
        },
    ]
    merged = offline_history_summary(
        later, text + "\n\n<read-files>\nsrc/a.py\n</read-files>", [], []
    )
    assert "- Fix the login bug." in merged
    assert "- Now add a test." in merged
    assert "<read-files>" not in merged
    assert "### In Progress\n(none)" in merged
    assert "- [x] Fix the login bug." in merged
    assert "Wait for the user's next request." in merged


def test_offline_merge_replaces_state_lines_instead_of_repeating_them() -> None:
    def turn(n: int, tool: str) -> list[dict[str, object]]:
        return [
            {"role": "user", "content": f"task {n}", "timestamp": 1},
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "toolCall",
                        "id": f"c{n}",
                        "name": tool,
                        "arguments": {"path": f"f{n}"},
                    },
                    {"type": "text", "text": f"finished {n}"},
                ],
                "timestamp": 1,
            },
        ]

    first = offline_history_summary(turn(1, "read"), None, ["f1"], [])
    second = offline_history_summary(turn(2, "read") + turn(3, "bash"), first, ["f1", "f2"], [])
    assert second.count("Tool calls so far") == 1
    assert "- [x] Tool calls so far: bash ×1, read ×2" in second
    assert second.count("Files read:") == 1
    assert second.count("Latest assistant conclusion") == 1
    assert "finished 3" in second
