from __future__ import annotations

import copy
from pathlib import Path
from unittest import mock

from hypothesis import given, settings

from pi_context.session import Entry, Session, build_projection, convert_to_llm, projection_of_path
from pi_context.session.projection import (
    bash_execution_text,
    context_edits_by_target,
    js_date_ms,
    stream_context,
)
from pi_context.testing import FixedClock, SequentialIds
from tests.jsonview import as_json
from tests.session.helpers import (
    SESSION_OPS,
    apply_op,
    assistant,
    reference_projection,
    tool_result,
    user,
)


def new() -> Session:
    return Session.in_memory("/", ids=SequentialIds(), clock=FixedClock())


def roles(s: Session) -> list[str]:
    return [m["role"] for m in s.projection().messages]


def test_compaction_keeps_snapshot_summary_kept_non_system_and_after() -> None:
    s = new()
    s.append_message(
        {"role": "system", "content": "", "sections": {"preamble": "p"}, "timestamp": 1}
    )
    s.append_message(user("old"))
    s.append_message(assistant("old reply"))
    kept = s.append_message(user("kept"))
    s.append_message({"role": "system", "content": "", "sections": {"cwd": "c"}, "timestamp": 2})
    s.append_message(assistant("kept reply"))
    snapshot = {
        "role": "system",
        "content": "",
        "sections": {"preamble": "p", "cwd": "c"},
        "timestamp": 3,
    }
    c = s.append_compaction("summary", kept.id, 100, system_message=snapshot)
    s.append_message(user("new"))
    projection = s.projection()
    assert roles(s) == ["system", "compactionSummary", "user", "assistant", "user"]
    assert projection.messages[0] == snapshot
    assert projection.entries[0].entry is c
    summary = projection.messages[1]
    assert summary == {
        "role": "compactionSummary",
        "summary": "summary",
        "tokensBefore": 100,
        "timestamp": projection.messages[1]["timestamp"],
    }


def test_only_newest_compaction_contributes() -> None:
    s = new()
    a = s.append_message(user("a"))
    s.append_compaction("first", a.id, 10)
    s.append_message(user("b"))
    c2 = s.append_compaction("second", a.id, 20)
    projection = s.projection()
    assert projection.entries[0].entry is c2
    texts = [m.get("summary") for m in projection.messages if m["role"] == "compactionSummary"]
    assert texts == ["second"]
    older = [p for p in projection.entries if p.entry.type == "compaction" and p.entry is not c2]
    assert older
    assert older[0].messages == []


def test_context_edit_latest_wins_and_null_omits() -> None:
    s = new()
    u = s.append_message(user("question"))
    a = s.append_message(assistant("long answer", calls=[("read", {"path": "x"})]))
    s.append_context_edit(a.id, {"content": "v1"})
    s.append_context_edit(a.id, {"content": "v2"})
    edited = as_json(s.projection().messages[1])
    assert edited["content"] == [{"type": "text", "text": "v2"}]
    assert edited["role"] == "assistant"
    assert edited["model"] == "claude-x"  # metadata kept
    assert a.data["message"]["content"][0]["text"] == "long answer"  # raw entry untouched
    s.append_context_edit(u.id, None)
    assert roles(s) == ["assistant"]
    # the edit is branch-relative: another branch does not see it
    s.move_leaf(a.id)
    assert roles(s) == ["user", "assistant"]
    assert as_json(s.projection().messages[1])["content"][0]["text"] == "long answer"


def test_thinking_level_and_model_from_full_path() -> None:
    s = new()
    s.append_thinking_level_change("high")
    s.append_model_change("openai", "gpt-x")
    u = s.append_message(user("q"))
    assert s.projection().model == {"provider": "openai", "modelId": "gpt-x"}
    s.append_message(assistant("r", provider="anthropic", model="claude-y"))
    s.append_compaction("sum", None, 1)
    projection = s.projection()
    assert projection.thinking_level == "high"
    assert projection.model == {"provider": "anthropic", "modelId": "claude-y"}
    assert s.projection(u.id).model == {"provider": "openai", "modelId": "gpt-x"}
    assert build_projection(list(s.entries), None).messages == []


def test_custom_message_and_branch_summary_messages() -> None:
    s = new()
    s.append_message(user("q"))
    s.append_custom_message("note", "see this", display=False, details={"hidden": True})
    s.append_branch_summary("x", "", parent_id=s.leaf_id)  # empty summary contributes nothing
    s.append_branch_summary("y", "went elsewhere", parent_id=s.leaf_id)
    messages = s.projection().messages
    assert [m["role"] for m in messages] == ["user", "custom", "branchSummary"]
    assert as_json(messages[1])["details"] == {"hidden": True}
    llm = convert_to_llm(messages)
    assert [m["role"] for m in llm] == ["user", "user", "user"]
    assert llm[1]["content"] == [{"type": "text", "text": "see this"}]
    text = as_json(llm[2])["content"][0]["text"]
    assert text.endswith("<summary>\nwent elsewhere</summary>")


def test_bash_execution_text_layout() -> None:
    base = {
        "role": "bashExecution",
        "command": "ls",
        "output": "a\n",
        "cancelled": False,
        "truncated": True,
        "exitCode": 2,
        "fullOutputPath": "/tmp/o",
        "timestamp": 1,
    }
    assert bash_execution_text(base) == (
        "Ran `ls`\n```\na\n\n```\n\nCommand exited with code 2\n\n[Output truncated. Full output: /tmp/o]"
    )
    quiet = {**base, "output": "", "cancelled": True, "truncated": False}
    assert bash_execution_text(quiet) == "Ran `ls`\n(no output)\n\n(command cancelled)"
    assert convert_to_llm([{**base, "excludeFromContext": True}]) == []


def test_js_date_ms() -> None:
    assert js_date_ms("2025-01-15T10:00:00.000Z") == 1736935200000
    assert js_date_ms("2025-01-15T10:00:00.5-0530") == 1736955000500
    assert js_date_ms("garbage") is None
    assert js_date_ms(None) == 0


# -- property: the incremental projection equals the from-scratch one -------------------------


@settings(max_examples=60, deadline=None)
@given(SESSION_OPS)
def test_live_projection_matches_projection_of_path(ops: list[tuple[str, int]]) -> None:
    s = new()
    for op, n in ops:
        apply_op(s, op, n)
        live = s.stored_projection()
        scratch = projection_of_path(s.branch_entries())
        assert live.messages == scratch.messages
        assert [p.entry for p in live.entries] == [p.entry for p in scratch.entries]
        assert (live.thinking_level, live.model) == (scratch.thinking_level, scratch.model)
        # both read the package's one statement of the rules: hold it to the plain one
        ids, messages, level, model = reference_projection(s.branch_entries())
        assert [p.entry.id for p in live.entries] == ids
        assert list(live.messages) == messages
        assert (live.thinking_level, live.model) == (level, model)


def test_projection_is_a_copy() -> None:
    s = new()
    s.append_message(user("q"))
    first = s.projection()
    assert first.messages == s.stored_projection().messages
    assert first.messages[0] is first.messages[0]  # one copy per message and view
    assert first.messages[0] is not s.stored_projection().messages[0]
    assert len(s.projection().messages) == 1


def test_entry_messages_normalize_null_content() -> None:
    e = Entry.from_data(
        {
            "type": "message",
            "id": "a",
            "parentId": None,
            "timestamp": "t",
            "message": {"role": "user", "content": None, "timestamp": 1},
        }
    )
    s = new()
    assert projection_of_path([e]).messages == [{"role": "user", "content": [], "timestamp": 1}]
    assert s.projection().messages == []


def test_summary_wrappers_differ_from_pi_only_in_sentences() -> None:
    from pi_context.session import projection
    from tests.conformance.conftest import pi_summary_wrappers

    pi = pi_summary_wrappers()
    ours = projection.SUMMARY_WRAPPERS
    assert ours.compaction_intro != pi.compaction_intro
    assert ours.branch_intro != pi.branch_intro
    for wrappers in (pi, ours):
        summary = {"role": "compactionSummary", "summary": "S", "tokensBefore": 1, "timestamp": 0}
        branch = {"role": "branchSummary", "summary": "B", "fromId": "x", "timestamp": 0}
        projection.SUMMARY_WRAPPERS = wrappers
        try:
            (c,) = convert_to_llm([summary])
            (b,) = convert_to_llm([branch])
        finally:
            projection.SUMMARY_WRAPPERS = ours
        assert (
            as_json(c)["content"][0]["text"]
            == wrappers.compaction_intro + "\n\n<summary>\nS\n</summary>"
        )
        assert (
            as_json(b)["content"][0]["text"] == wrappers.branch_intro + "\n\n<summary>\nB</summary>"
        )


def test_context_edits_by_target_keeps_the_last_edit_per_target() -> None:
    s = new()
    a = s.append_message(user("a"))
    b = s.append_message(assistant("b"))
    first = s.append_context_edit(a.id, {"content": "first"})
    s.append_context_edit(b.id, None)
    last = s.append_context_edit(a.id, None)
    edits = context_edits_by_target(s.branch_entries())
    assert set(edits) == {a.id, b.id}
    assert edits[a.id] is last
    assert edits[a.id] is not first
    assert context_edits_by_target([a, b]) == {}


def test_nothing_the_projection_hands_out_changes_the_session() -> None:
    s = new()
    s.append_message(user("q"))
    s.append_message(assistant("a"))
    other = s.leaf_id
    s.append_message(user("r"))
    stored = copy.deepcopy(as_json(list(s.stored_projection().messages)))
    for projection in (s.projection(), s.projection(other)):
        for message in [*projection.messages, *(m for p in projection.entries for m in p.messages)]:
            data = as_json(message)
            if isinstance(data["content"], list):
                data["content"].append({"type": "text", "text": "injected"})
            data["role"] = "mutated"
        if projection.model is not None:
            projection.model["provider"] = "mutated"
    for message in s.messages():
        as_json(message)["role"] = "mutated"
    assert as_json(list(s.stored_projection().messages)) == stored
    assert as_json(list(s.projection().messages)) == stored
    assert as_json(projection_of_path(s.branch_entries()).messages) == stored


def test_streaming_the_context_keeps_no_entry_decoded(tmp_path: Path) -> None:
    """What lets ``pictx session context`` and ``info`` pass a 1M-entry context in the memory
    of its lines: each entry's decoded mapping is dropped once its messages are handed on."""
    s = Session.create(tmp_path / "s.jsonl", cwd="/", ids=SequentialIds(), clock=FixedClock())
    s.append_message(user("old"))
    s.append_message(assistant("old reply", calls=[("read", {"path": "a"})]))
    kept = s.append_message(tool_result("a's text"))
    s.append_compaction("summary", kept.id, 100)
    s.append_message(user("new"))
    s.append_message(assistant("new reply"))
    s.append_context_edit(kept.id, {"content": [{"type": "text", "text": "edited"}]})
    s.append_message(user("last"))
    s.close()
    reopened = Session.open(tmp_path / "s.jsonl")
    path = reopened.branch_view()
    expected = as_json(projection_of_path(list(path)).messages)
    for entry in path:
        entry.forget()
    streamed = [(entry.id, as_json(message)) for entry, message in stream_context(path)]
    assert [message for _, message in streamed] == expected
    # the lines stay, their decoded mappings do not (but for the compaction, which leads the
    # context and was read to find it, and the edit and its target, read to apply it)
    still = {e.id for e in path if e.is_decoded}
    edit = path[-2]
    assert still <= {path[3].id, kept.id, edit.id}
    assert not any(e.is_decoded for e in path if e.type == "message" and e.id != kept.id)


def test_handed_out_views_keep_only_the_latest_copies() -> None:
    """A pass over every message of a huge context through ``projection()`` does not keep a
    copy of each: the copies of the latest reads are kept, older ones made again."""
    from pi_context.session import projection

    s = new()
    for n in range(4):
        s.append_message(user(f"u{n}"))
    with mock.patch.object(projection, "HANDED_OUT_KEPT", 2):
        messages = s.projection().messages
        first = messages[0]
        assert messages[0] is first
        _ = (messages[1], messages[2])
        assert messages[2] is messages[2]
        again = messages[0]
        assert again is not first
        assert again == first
        entries = s.projection().entries
        item = entries[0]
        _ = (entries[1], entries[2])
        assert entries[0] is not item
        assert entries[0] == item
