"""The fast path of the entry check agrees with the full check.

:func:`checked_entry` first asks :func:`_well_typed` (a few type tests on the common shapes)
and walks the entry in full only when that says no. A fast path that says yes where the full
check would find a fault lets a malformed entry through, so these properties draw entries from
well-typed templates with random fields replaced, removed or added and hold the two together.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pi_context.session.validation import (
    _BLOCK_FIELDS,
    _ENTRY_FIELDS,
    _USAGE_FIELDS,
    _checked_fully,
    _Fields,
    _well_typed,
    checked_entry,
)
from tests.hostile.test_wrong_types import _WRONG, _paths, _replace, _templates

_USER = {"type": "message", "id": "u2", "parentId": "u1", "timestamp": "t"}


def _all_templates() -> list[dict[str, Any]]:
    image = {"type": "image", "data": "AA==", "mimeType": "image/png"}
    return [
        *_templates(),
        {**_USER, "message": {"role": "user", "content": "hi", "timestamp": 1}},
        {
            **_USER,
            "message": {"role": "user", "content": [{"type": "text", "text": "a"}, image]},
        },
        {**_USER, "type": "custom", "customType": "k", "data": {"x": 1}},
        {**_USER, "type": "a_type_pi_may_add", "anything": [1]},
    ]


_SPECS: list[_Fields] = [*_ENTRY_FIELDS.values(), *_BLOCK_FIELDS.values(), _USAGE_FIELDS]


@st.composite
def _mutated(draw: st.DrawFn) -> dict[str, Any]:
    entry = draw(st.sampled_from(_all_templates()))
    for _ in range(draw(st.integers(1, 3))):
        paths = [p for p in _paths(entry) if p]
        where = draw(st.sampled_from(paths))
        action = draw(st.sampled_from(("replace", "remove", "add")))
        if action == "replace":
            entry = _replace(entry, where, draw(_WRONG))
            continue
        parent = where[:-1]
        holder: Any = entry
        for step in parent:
            holder = holder[step]
        if not isinstance(holder, dict):
            continue
        if action == "remove":
            entry = _replace(entry, parent, {k: v for k, v in holder.items() if k != where[-1]})
        else:
            entry = _replace(entry, parent, {**holder, draw(st.text(max_size=3)): draw(_WRONG)})
    assert isinstance(entry, dict)
    return entry


@given(_mutated())
@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_fast_path_never_passes_what_the_full_check_changes(entry: dict[str, Any]) -> None:
    fast = _well_typed(entry)
    checked, faults = _checked_fully(entry)
    if fast:
        assert faults == []
        assert checked is entry
    assert checked_entry(entry) == (checked, faults)


@given(
    st.sampled_from(_SPECS),
    st.dictionaries(
        st.sampled_from(["text", "id", "name", "arguments", "input", "cost", "summary", "x"]),
        _WRONG | st.just("s") | st.just({}),
        max_size=4,
    ),
)
@settings(max_examples=400, deadline=None)
def test_fields_typed_agrees_with_wrong(spec: _Fields, obj: dict[str, Any]) -> None:
    expected = not spec.wrong(obj) and all(key in obj for key in spec.required)
    assert spec.typed(obj) is expected


def test_every_template_takes_the_fast_path_where_it_can() -> None:
    common = {"message", "model_change", "thinking_level_change", "label", "session_info"}
    for template in _all_templates():
        role = template.get("message", {}).get("role")
        if template["type"] in common and role in (None, "user", "assistant", "toolResult"):
            assert _well_typed(template), template


def test_the_cost_says_whether_the_provider_reported_it_with_a_boolean() -> None:
    """pi-ai writes ``cost.totalFromProvider`` as a boolean; a number there is the fault."""
    cost = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}
    usage = {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "reasoning": 0}
    message = {
        "role": "assistant",
        "content": [],
        "api": "openai-completions",
        "provider": "p",
        "model": "m",
        "stopReason": "stop",
        "timestamp": 1,
    }

    def entry(flag: Any) -> dict[str, Any]:
        spent = {**usage, "totalTokens": 2, "cost": {**cost, "totalFromProvider": flag}}
        return {**_USER, "message": {**message, "usage": spent}}

    assert checked_entry(entry(False)) == (entry(False), [])
    assert checked_entry(entry(True))[1] == []
    _, faults = checked_entry(entry(0))
    assert faults == [
        "message.usage.cost.totalFromProvider is a number, expected a boolean: ignored"
    ]
