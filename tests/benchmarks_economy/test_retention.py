"""Retention probes: facts planted early, asked late, answered only from the request."""

from __future__ import annotations

from benchmarks.economy.report import retention_table
from benchmarks.economy.responder import RECALL_STEP, REREAD_STEP, Responder, tool_call_id
from benchmarks.economy.wire import Conversation
from benchmarks.economy.workload import PROBE_KINDS, generate_workload, ticket

WORKLOAD = generate_workload(3, prompts=160, retention=True)
PROBES = [p for p in WORKLOAD.prompts if p.probe is not None]


def test_twelve_facts_three_of_each_kind_are_planted_before_the_side_session_and_probed_after_it() -> (
    None
):
    assert [p.probe.kind for p in PROBES if p.probe] == list(PROBE_KINDS) * 3
    assert len({p.probe.fact for p in PROBES if p.probe}) == 12
    for prompt in PROBES:
        assert prompt.probe is not None
        assert prompt.probe.planted_at < 0.52 * 160 < 0.6 * 160 < prompt.index
        # asked well after it was planted: more than half the session later
        assert prompt.index - prompt.probe.planted_at > 0.5 * 160
        planted = WORKLOAD.prompts[prompt.probe.planted_at]
        assert prompt.probe.fact in str([planted.text, [s.arguments for s in planted.steps]])
        assert prompt.probe.fact not in prompt.text
        # no other planted fact answers this probe's question
        others = [q.probe.fact for q in PROBES if q.probe and q is not prompt]
        assert not any(fact in str([planted.text, planted.steps]) for fact in others)
    # the three questions of a kind ask about three different subjects
    for kind in PROBE_KINDS:
        assert len({p.text for p in PROBES if p.probe and p.probe.kind == kind}) == 3


def test_without_retention_the_workload_is_unchanged() -> None:
    plain = generate_workload(3, prompts=160)
    assert all(p.probe is None for p in plain.prompts)
    assert len(plain.prompts) == 160


def _conv(index: int, text: str, tools: list[str], calls: list[int]) -> Conversation:
    return Conversation(
        user_texts=[f"question ({ticket(index)})"],
        tool_call_ids=[tool_call_id(index, step) for step in calls],
        has_tools=bool(tools),
        last_user_text=f"question ({ticket(index)})",
        tool_names=tools,
        text=text,
    )


def test_probe_answers_from_context_recall_reread_or_not_at_all() -> None:
    responder = Responder(WORKLOAD)
    decision_probe = PROBES[0]
    file_probe = PROBES[3]
    assert decision_probe.probe is not None
    assert file_probe.probe is not None
    fact = decision_probe.probe.fact

    def decide(conv: Conversation) -> tuple[str, str, list[str]]:
        d = responder.decide(conv, input_text="", input_tokens=0)
        return d.probe, d.reply.text, [c.name for c in d.reply.calls]

    i = decision_probe.index
    assert decide(_conv(i, f"... {fact} ...", ["read"], [])) == ("context", f"It was {fact}.", [])
    assert decide(_conv(i, "summary only", ["read", "recall"], []))[2] == ["recall"]
    assert decide(_conv(i, f"recalled {fact}", ["recall"], [RECALL_STEP]))[0] == "recall"
    assert decide(_conv(i, "nothing", ["recall"], [RECALL_STEP]))[0] == "unknown"
    assert decide(_conv(i, "nothing", ["read"], []))[0] == "unknown"  # no file to read
    j = file_probe.index
    assert decide(_conv(j, "nothing", ["read"], []))[2] == ["read"]
    assert decide(_conv(j, file_probe.probe.fact, ["read"], [REREAD_STEP]))[0] == "reread"


def test_retention_table_counts_each_probe_once() -> None:
    records = [
        {"prompt": PROBES[0].index, "probe": "", "cost": 0.01},
        {"prompt": PROBES[0].index, "probe": "recall", "cost": 0.02},
        {"prompt": PROBES[1].index, "probe": "unknown", "cost": 0.01},
        {"prompt": 0, "probe": "", "cost": 1.0},
    ]
    table = retention_table([{"contender": "x", "records": records}], WORKLOAD)
    assert "| x | 1 / 12 | 0 | 1 | 0 | 1 | $0.040 | $1.04 |" in table
