"""The simulated assistant: prompt and step from the request, summaries sized by the input."""

from __future__ import annotations

from benchmarks.economy.responder import (
    SUMMARY_MAX,
    SUMMARY_MIN,
    Responder,
    is_summary_request,
    summary_text,
    tool_call_id,
)
from benchmarks.economy.wire import Conversation
from benchmarks.economy.workload import generate_workload, ticket

WORKLOAD = generate_workload(7, prompts=30)


def test_workload_is_deterministic_per_seed_and_differs_across_seeds() -> None:
    again = generate_workload(7, prompts=30)
    assert [p.text for p in again.prompts] == [p.text for p in WORKLOAD.prompts]
    assert again.project.files == WORKLOAD.project.files
    other = generate_workload(8, prompts=30)
    assert [p.text for p in other.prompts] != [p.text for p in WORKLOAD.prompts]


def test_workload_has_every_kind_of_event() -> None:
    kinds = {e.kind for p in WORKLOAD.prompts for e in p.events}
    assert kinds == {"agents_md", "skill", "tools", "thinking", "side_session", "resume_main"}


def test_first_request_of_a_prompt_gets_its_first_tool_call() -> None:
    prompt = next(p for p in WORKLOAD.prompts if len(p.steps) >= 2)
    conv = Conversation(user_texts=[prompt.text], has_tools=True, last_user_text=prompt.text)
    decision = Responder(WORKLOAD).decide(conv, input_text=prompt.text, input_tokens=10)
    assert decision.prompt == prompt.index
    assert [c.id for c in decision.reply.calls] == [tool_call_id(prompt.index, 0)]
    assert decision.reply.calls[0].name == prompt.steps[0].name


def test_the_next_step_follows_the_tool_calls_present() -> None:
    prompt = next(p for p in WORKLOAD.prompts if len(p.steps) >= 2)
    earlier = [tool_call_id(prompt.index - 1, 0)] if prompt.index else []
    conv = Conversation(
        user_texts=[prompt.text],
        tool_call_ids=[*earlier, tool_call_id(prompt.index, 0)],
        has_tools=True,
        last_user_text=prompt.text,
    )
    decision = Responder(WORKLOAD).decide(conv, input_text="", input_tokens=10)
    assert [c.id for c in decision.reply.calls] == [tool_call_id(prompt.index, 1)]
    done = Conversation(
        user_texts=[prompt.text],
        tool_call_ids=[tool_call_id(prompt.index, s) for s in range(len(prompt.steps))],
        has_tools=True,
    )
    final = Responder(WORKLOAD).decide(done, input_text="", input_tokens=10)
    assert final.reply.calls == ()
    assert final.reply.text == prompt.answer


def test_tool_call_ids_find_the_prompt_when_its_text_was_compacted_away() -> None:
    prompt = next(p for p in WORKLOAD.prompts[5:] if len(p.steps) >= 2)
    conv = Conversation(
        user_texts=[f"summary mentions {ticket(1)}"],
        tool_call_ids=[tool_call_id(prompt.index, 0)],
        has_tools=True,
    )
    decision = Responder(WORKLOAD).decide(conv, input_text="", input_tokens=10)
    assert decision.prompt == prompt.index
    assert decision.reply.calls[0].id == tool_call_id(prompt.index, 1)


def test_summary_requests_are_recognised_and_sized_by_the_input() -> None:
    text = "<conversation>\n[User]: fix inventory/orders.py\n</conversation>\n\nSummarize."
    conv = Conversation(user_texts=[text], has_tools=False, last_user_text=text)
    assert is_summary_request(conv)
    assert not is_summary_request(
        Conversation(user_texts=[text], has_tools=True, last_user_text=text)
    )
    decision = Responder(WORKLOAD).decide(conv, input_text=text, input_tokens=24_000)
    assert decision.kind == "summary"
    assert "inventory/orders.py" in decision.reply.text
    small = len(summary_text(text, 100).split())
    large = len(summary_text(text, 24_000).split())
    huge = len(summary_text(text, 10_000_000).split())
    assert small >= SUMMARY_MIN * 0.7
    assert large > small
    assert huge <= SUMMARY_MAX
    assert summary_text(text, 24_000) == summary_text(text, 24_000)


def test_a_shared_summary_request_is_recognised_with_its_tools() -> None:
    from pi_context.compaction.prompts import shared_summary_prompt

    instructions = shared_summary_prompt()
    conv = Conversation(
        user_texts=[f"{ticket(1000)} fix it", instructions],
        has_tools=True,
        last_user_text=instructions,
    )
    assert is_summary_request(conv)
    decision = Responder(WORKLOAD).decide(conv, input_text=instructions, input_tokens=30_000)
    assert decision.kind == "summary"
    ordinary = Conversation(user_texts=["## Goal\nfix"], has_tools=True, last_user_text="## Goal")
    assert not is_summary_request(ordinary)
