"""The field rules are stated once (``session/checks.py``); the checks made from them agree.

:func:`checked_entry` first asks :func:`_well_typed` (one pass over the tables that allocates
nothing) and walks the entry in full only when that says no. :func:`head_if_well_typed_and_shallow`, the compiled
check, decides for nearly every line read whether its fields have pi's types, without building
the line. A fast path that says yes where the full check would find a fault lets a malformed
entry through unreported, so these properties draw entries from well-typed templates with
random fields replaced, removed or added (as mappings, and written as lines) and hold the fast
paths to the full check. Saying no too often only costs speed; the templates pin that the
shapes pi writes are accepted.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pi_context import _json
from pi_context.model.usage import make_usage
from pi_context.session._load.checks import (
    _BLOCKS,
    _ENTRIES,
    _ROLES,
    _USAGE,
    CONTEXT_MAX_DEPTH,
    _checked_fully,
    _Shape,
    _Type,
    _well_typed,
    checked_entry,
    head_if_well_typed_and_shallow,
    nests_deeper_than,
)
from tests.hostile.wrong_types import WRONG_VALUES, entry_templates, key_paths, replaced_at

_USER = {"type": "message", "id": "u2", "parentId": "u1", "timestamp": "t"}


def _all_templates() -> list[dict[str, Any]]:
    image = {"type": "image", "data": "AA==", "mimeType": "image/png"}
    return [
        *entry_templates(),
        {**_USER, "message": {"role": "user", "content": "hi", "timestamp": 1}},
        {
            **_USER,
            "message": {"role": "user", "content": [{"type": "text", "text": "a"}, image]},
        },
        {**_USER, "type": "custom", "customType": "k", "data": {"x": 1}},
        {**_USER, "type": "a_type_pi_may_add", "anything": [1]},
    ]


_SPECS: list[_Shape] = [*_ENTRIES.values(), *_BLOCKS.values(), _USAGE]


@st.composite
def _mutated(draw: st.DrawFn) -> dict[str, Any]:
    entry = draw(st.sampled_from(_all_templates()))
    for _ in range(draw(st.integers(1, 3))):
        paths = [p for p in key_paths(entry) if p]
        where = draw(st.sampled_from(paths))
        action = draw(st.sampled_from(("replace", "remove", "add")))
        if action == "replace":
            entry = replaced_at(entry, where, draw(WRONG_VALUES))
            continue
        parent = where[:-1]
        holder: Any = entry
        for step in parent:
            holder = holder[step]
        if not isinstance(holder, dict):
            continue
        if action == "remove":
            entry = replaced_at(entry, parent, {k: v for k, v in holder.items() if k != where[-1]})
        else:
            entry = replaced_at(
                entry, parent, {**holder, draw(st.text(max_size=3)): draw(WRONG_VALUES)}
            )
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
        WRONG_VALUES | st.just("s") | st.just({}),
        max_size=4,
    ),
)
@settings(max_examples=400, deadline=None)
def test_fields_typed_agrees_with_wrong(spec: _Shape, obj: dict[str, Any]) -> None:
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


# -- the compiled check ----------------------------------------------------------------------


def _expected_head(entry: dict[str, Any]) -> tuple[Any, ...]:
    message: dict[str, Any] = entry.get("message") or {}
    role = message.get("role") if entry["type"] == "message" else None
    return (entry["type"], entry.get("id", ""), entry.get("parentId"), role)


@given(_mutated())
@settings(max_examples=800, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_a_line_the_shapes_accept_has_no_fault(entry: dict[str, Any]) -> None:
    line = _json.dumps(entry)
    head = head_if_well_typed_and_shallow(line)
    if head is not None:
        read = _json.loads(line)  # what the line says (an infinity is written as null)
        checked, faults = _checked_fully(read)
        assert faults == []
        assert checked is read
        assert head == _expected_head(read)


def test_every_shape_pi_writes_is_accepted() -> None:
    for template in _all_templates():
        if template["type"] == "a_type_pi_may_add":
            continue
        line = _json.dumps(template)
        assert head_if_well_typed_and_shallow(line) == _expected_head(template), template


def _text_line(text: bytes) -> bytes:
    return (
        b'{"type":"message","id":"a","parentId":null,"message":{"role":"user","content":'
        b'[{"type":"text","text":' + text + b"}]}}"
    )


def test_raw_text_spans_must_be_strings() -> None:
    assert head_if_well_typed_and_shallow(_text_line(b'"hello"')) == ("message", "a", None, "user")
    assert head_if_well_typed_and_shallow(_text_line(b'  "spaced"  ')) == (
        "message",
        "a",
        None,
        "user",
    )
    for wrong in (b"5", b"null", b"[]", b"{}", b"true"):
        assert head_if_well_typed_and_shallow(_text_line(wrong)) is None, wrong


def test_a_duplicated_key_is_read_as_the_full_decoder_reads_it() -> None:
    # the last value wins in both decoders: a string after a number is well-typed...
    line = _text_line(b'5,"text":"late"')
    assert head_if_well_typed_and_shallow(line) is not None
    assert _checked_fully(_json.loads(line))[1] == []
    # ...and a number after a string is not
    assert head_if_well_typed_and_shallow(_text_line(b'"early","text":5')) is None


def test_lines_the_full_decoder_must_read_are_refused() -> None:
    deep = b'{"type":"custom","id":"a","parentId":null,"data":' + b"[" * 3000 + b"]" * 3000 + b"}"
    assert head_if_well_typed_and_shallow(deep) is None
    assert head_if_well_typed_and_shallow(b'{"type":"message","id":"a"') is None  # torn
    assert (
        head_if_well_typed_and_shallow(b'{"type":"message","id":"a","parentId":null}') is None
    )  # no message
    assert (
        head_if_well_typed_and_shallow(b'{"type":"a_new_type","id":"a"}') is None
    )  # not interpreted
    assert head_if_well_typed_and_shallow(b"[1, 2]") is None


def test_the_usage_pictx_writes_reads_back_without_a_fault() -> None:
    # cost.totalFromProvider is a boolean (whether the provider reported the total itself)
    entry = {
        "type": "message",
        "id": "a",
        "parentId": None,
        "message": {
            "role": "assistant",
            "content": [{"type": "text", "text": "hi"}],
            "usage": make_usage(input=3, output=2),
            "timestamp": 1,
        },
    }
    assert _checked_fully(entry) == (entry, [])
    assert head_if_well_typed_and_shallow(_json.dumps(entry)) == ("message", "a", None, "assistant")


def _nested(depth: int) -> Any:
    """Objects and lists alternating, ``depth`` levels (``{"a": [{"a": ...}]}``)."""
    value: Any = []
    for level in range(depth - 1):
        value = {"a": value} if level % 2 == 0 else [value]
    return value


def _entries_around(deep: Any) -> dict[str, dict[str, Any]]:
    """Well-typed entries holding ``deep`` where the shapes skip a value: tool-call arguments,
    tool parameters, an unknown member."""
    call = {"type": "toolCall", "id": "c", "name": "n", "arguments": {"x": deep}}
    tool = {"name": "t", "parameters": {"x": deep}}
    return {
        "arguments": {
            "type": "message",
            "id": "a",
            "parentId": None,
            "message": {"role": "assistant", "content": [call], "timestamp": 1},
        },
        "parameters": {
            "type": "message",
            "id": "a",
            "parentId": None,
            "message": {"role": "system", "content": "s", "toolsAdded": [tool], "timestamp": 1},
        },
        "unknown member": {"type": "custom", "id": "a", "parentId": None, "data": deep},
    }


def _deep_lines(depth: int) -> dict[str, bytes]:
    """The lines of :func:`_entries_around`, each nesting exactly ``depth`` levels."""
    out = {}
    for where, shallow in _entries_around(_nested(1)).items():
        around = 1
        while nests_deeper_than(shallow, around):
            around += 1
        line = _json.dumps(_entries_around(_nested(depth - around + 1))[where])
        assert nests_deeper_than(_json.loads(line), depth - 1), where
        assert not nests_deeper_than(_json.loads(line), depth), where
        out[where] = line
    return out


def test_a_line_within_the_depth_limit_is_accepted() -> None:
    for where, line in _deep_lines(CONTEXT_MAX_DEPTH).items():
        assert head_if_well_typed_and_shallow(line) is not None, where


def test_a_line_past_the_depth_limit_is_refused() -> None:
    for where, line in _deep_lines(CONTEXT_MAX_DEPTH + 1).items():
        assert head_if_well_typed_and_shallow(line) is None, where


def test_brackets_in_long_text_do_not_count_toward_the_depth() -> None:
    # the bytes outside the text are few: no need to count the text's brackets
    text = _json.dumps("{[" * 20_000)
    assert head_if_well_typed_and_shallow(_text_line(text)) == ("message", "a", None, "user")
    thinking = b',{"type":"thinking","thinking":' + text + b"}]}}"
    assert head_if_well_typed_and_shallow(_text_line(text)[:-3] + thinking) == (
        "message",
        "a",
        None,
        "user",
    )


_NESTING = st.recursive(
    st.integers(0, 9) | st.text('{[]}"\\ab', max_size=8),
    lambda kids: st.lists(kids, max_size=2) | st.dictionaries(st.text("ab", max_size=1), kids),
    max_leaves=8,
)


@given(st.integers(CONTEXT_MAX_DEPTH - 12, CONTEXT_MAX_DEPTH + 4), _NESTING, st.text("{[]}x"))
@settings(max_examples=150, deadline=None)
def test_a_line_the_shapes_accept_is_within_the_depth_limit(
    depth: int, leaf: Any, text: str
) -> None:
    deep: Any = leaf
    for level in range(depth):
        deep = {"k": deep} if level % 3 else [deep, text]
    content = [
        {"type": "text", "text": text * 50},
        {"type": "toolCall", "id": "c", "name": "n", "arguments": {"deep": deep}},
    ]
    entry = {
        "type": "message",
        "id": "a",
        "parentId": None,
        "extra": deep,
        "message": {"role": "assistant", "content": content, "timestamp": 1},
    }
    line = _json.dumps(entry)
    if head_if_well_typed_and_shallow(line) is not None:
        assert not nests_deeper_than(_json.loads(line), CONTEXT_MAX_DEPTH)


# -- one table, both checks -------------------------------------------------------------------


def _good(rule: _Type) -> Any:
    """A value of one of the types ``rule`` accepts."""
    values: tuple[Any, ...] = ("s", 1, True, {}, None)
    for value in values:
        if type(value) in rule.types:
            return value
    raise AssertionError(rule.words)


def _filled(shape: _Shape) -> dict[str, Any]:
    """An object of ``shape`` holding its required fields, well-typed."""
    out = {}
    for key in shape.required_in_order:
        rule = shape.fields[key]
        assert isinstance(rule, _Type)
        out[key] = _good(rule)
    return out


def _typed_fields(shape: _Shape) -> list[str]:
    return [key for key, rule in shape.fields.items() if isinstance(rule, _Type)]


def _table_cases() -> list[tuple[str, dict[str, Any], str]]:
    """``(where, entry, key)``: a well-typed entry for each field the tables give a JSON type,
    into which a value of no JSON type a field may have goes at ``key``."""
    head = {"id": "a", "parentId": None}
    cases = []
    for kind, shape in _ENTRIES.items():
        cases += [(kind, {"type": kind, **head, **_filled(shape)}, k) for k in _typed_fields(shape)]
    for role, shape in _ROLES.items():
        for key in _typed_fields(shape):
            message = {"role": role, **_filled(shape)}
            cases.append((role, {"type": "message", **head, "message": message}, key))
    for block_type, shape in _BLOCKS.items():
        for key in _typed_fields(shape):
            block = {"type": block_type, **_filled(shape)}
            message = {"role": "assistant", "content": [block]}
            cases.append((block_type, {"type": "message", **head, "message": message}, key))
    for key in _typed_fields(_USAGE):
        message = {"role": "assistant", "usage": {}}
        cases.append(("usage", {"type": "message", **head, "message": message}, key))
    return cases


def _put(entry: dict[str, Any], key: str, value: Any) -> dict[str, Any]:
    """``entry`` with ``key`` set in its innermost object (entry, message, block or usage)."""
    message = entry.get("message")
    if not isinstance(message, dict):
        return {**entry, key: value}
    if "usage" in message:
        return {**entry, "message": {**message, "usage": {key: value}}}
    if "content" in message:
        block = {**message["content"][0], key: value}
        return {**entry, "message": {**message, "content": [block]}}
    return {**entry, "message": {**message, key: value}}


@pytest.mark.parametrize(("where", "entry", "key"), _table_cases())
def test_each_field_rule_reaches_both_checks(where: str, entry: dict[str, Any], key: str) -> None:
    """A field the tables type is refused by the compiled check and named by the full check
    when it holds a value of another type; the same entry without it passes both."""
    assert head_if_well_typed_and_shallow(_json.dumps(entry)) is not None, where
    assert checked_entry(entry) == (entry, []), where
    wrong = _put(entry, key, [1])  # a list: no field in the tables takes one
    assert head_if_well_typed_and_shallow(_json.dumps(wrong)) is None, (where, key)
    faults = checked_entry(wrong)[1]
    assert any(
        f" {key} is a list" in f" {fault}" or f".{key} is a list" in fault for fault in faults
    )
