"""What the simulated summaries keep of the planted facts (``--summary-keep``)."""

from __future__ import annotations

import json
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from benchmarks.economy.__main__ import saved_units
from benchmarks.economy.contenders import Contender
from benchmarks.economy.report import KEEP_SETTINGS, sensitivity_table
from benchmarks.economy.responder import (
    SUMMARY_KEEP,
    KeepRates,
    Responder,
    kept_facts,
    summary_text,
)
from benchmarks.economy.units import Unit
from benchmarks.economy.wire import Conversation
from benchmarks.economy.workload import PROBE_KINDS, Probe, generate_workload

WORKLOAD = generate_workload(3, prompts=160, retention=True)
PROBES = [p.probe for p in WORKLOAD.prompts if p.probe is not None]
ALL_FACTS = " ".join(f"[{p.kind}] {p.fact}" for p in PROBES)


def _kept(text: str, setting: str, request: int, seed: int = 3) -> list[Probe]:
    return kept_facts(text, PROBES, SUMMARY_KEEP[setting], seed=seed, request=request)


def test_the_settings_are_ordered_and_none_keeps_nothing() -> None:
    assert list(SUMMARY_KEEP) == list(KEEP_SETTINGS)
    fields = (*PROBE_KINDS, "carry")
    for lower, higher in pairwise(KEEP_SETTINGS):
        for name in fields:
            assert getattr(SUMMARY_KEEP[lower], name) <= getattr(SUMMARY_KEEP[higher], name)
    assert all(getattr(SUMMARY_KEEP["none"], name) == 0.0 for name in fields)
    for setting in KEEP_SETTINGS:
        assert _kept(ALL_FACTS, "none", 1) == []
        assert _kept("no fact in here", setting, 1) == []  # only what the input holds


def test_the_draw_is_deterministic_per_seed_fact_and_request() -> None:
    first = _kept(ALL_FACTS, "plausible", 5)
    assert _kept(ALL_FACTS, "plausible", 5) == first
    assert [_kept(ALL_FACTS, "plausible", r) for r in range(1, 30)] != [first] * 29
    assert [_kept(ALL_FACTS, "plausible", r, seed=4) for r in range(1, 30)] != [
        _kept(ALL_FACTS, "plausible", r) for r in range(1, 30)
    ]


def test_a_more_generous_setting_keeps_a_superset_at_the_same_request() -> None:
    for request in range(1, 40):
        kept = [set(map(id, _kept(ALL_FACTS, s, request))) for s in KEEP_SETTINGS]
        for lower, higher in pairwise(kept):
            assert lower <= higher


def test_rates_by_kind_match_the_setting_over_many_summaries() -> None:
    rates = SUMMARY_KEEP["plausible"]
    requests = 400
    counts = dict.fromkeys(PROBE_KINDS, 0)
    for request in range(requests):
        for probe in _kept(ALL_FACTS, "plausible", request):
            counts[probe.kind] += 1
    for kind in PROBE_KINDS:
        observed = counts[kind] / (3 * requests)
        assert abs(observed - rates.of(kind)) < 0.06, (kind, observed)


def test_a_fact_in_the_previous_summary_is_carried_at_its_own_rate() -> None:
    only_carry = KeepRates(decision=0.0, error=0.0, number=0.0, file=0.0, carry=1.0)
    only_new = KeepRates(decision=1.0, error=1.0, number=1.0, file=1.0, carry=0.0)
    previous = f"<previous-summary>\n{ALL_FACTS}\n</previous-summary>"
    shared = f"The conversation was compacted:\n\n<summary>\n{ALL_FACTS}\n</summary>"
    for text in (previous, shared):
        assert kept_facts(text, PROBES, only_carry, seed=1, request=1) == PROBES
        assert kept_facts(text, PROBES, only_new, seed=1, request=1) == []
    fresh = f"<conversation>{ALL_FACTS}</conversation>"
    assert kept_facts(fresh, PROBES, only_carry, seed=1, request=1) == []
    assert kept_facts(fresh, PROBES, only_new, seed=1, request=1) == PROBES


def test_a_summary_states_each_kept_fact_once_and_no_other() -> None:
    kept = PROBES[:5]
    text = summary_text("<conversation>x</conversation>", 3000, kept)
    for probe in PROBES:
        assert text.count(probe.fact) == (1 if probe in kept else 0)
    assert summary_text("<conversation>x</conversation>", 3000).endswith(
        "## Critical Context\n(none)"
    )


def _summary_conv(text: str) -> Conversation:
    return Conversation(
        user_texts=[text],
        has_tools=False,
        last_user_text=text,
        text=json.dumps([{"role": "user", "content": text}]),
    )


def test_the_responder_applies_its_setting_to_summary_requests() -> None:
    request = f"<conversation>\n{ALL_FACTS}\n</conversation>\n\nSummarize."
    kept_by = {}
    for setting in KEEP_SETTINGS:
        responder = Responder(WORKLOAD, setting)
        decision = responder.decide(_summary_conv(request), input_text=request, input_tokens=5000)
        assert decision.kind == "summary"
        kept_by[setting] = [p.fact for p in PROBES if p.fact in decision.reply.text]
    assert kept_by["none"] == []
    assert kept_by["optimistic"], "the optimistic setting keeps some of 12 facts"
    assert set(kept_by["plausible"]) <= set(kept_by["optimistic"])


def _saved(contender: str, keep: str, answered: int, tmp: Path) -> None:
    unit = Unit(Contender(contender, ["x"]), "anthropic", 3, 160, 48_000, "rpc", True, keep)
    probes = [p for p in WORKLOAD.prompts if p.probe is not None]
    records: list[dict[str, Any]] = [
        {"prompt": p.index, "probe": "context" if i < answered else "unknown", "cost": 0.0}
        for i, p in enumerate(probes)
    ]
    unit.save(tmp, {"contender": contender, "records": records, "failures": []})


def test_units_of_each_setting_are_kept_apart_and_fill_the_sensitivity_table(
    tmp_path: Path,
) -> None:
    _saved("pi 1.6.0", "none", 1, tmp_path)
    _saved("pi 1.6.0", "plausible", 7, tmp_path)
    _saved("pictx default", "plausible", 9, tmp_path)
    saved = saved_units(tmp_path, api="anthropic", seed=3, prompts=160, window=48_000)
    assert len(saved) == 3
    assert saved_units(tmp_path, api="anthropic", seed=3, prompts=160, window=200_000) == []
    table = sensitivity_table(saved, WORKLOAD)
    assert "| pi 1.6.0 | 1 / 12 (1 in context) | - | 7 / 12 (7 in context) | - |" in table
    assert "| pictx default | - | - | 9 / 12 (9 in context) | - |" in table
    assert "| pictx lean | - | - | - | - |" in table


@pytest.mark.parametrize("keep", KEEP_SETTINGS)
def test_a_retention_unit_is_named_and_saved_by_its_setting(keep: str) -> None:
    unit = Unit(Contender("pi 1.6.0", ["x"]), "openai", 1, 160, 48_000, "rpc", True, keep)
    assert unit.name.endswith(f"-keep-{keep}")
    assert unit.inputs()["summary_keep"] == keep
    plain = Unit(Contender("pi 1.6.0", ["x"]), "openai", 1, 160, 48_000, "rpc")
    assert "keep" not in plain.name
    assert "summary_keep" not in plain.inputs()
