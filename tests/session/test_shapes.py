"""The compiled line check agrees with the full check.

:func:`head_of_line` decides for nearly every line read whether its fields have pi's types,
without building the line. Saying yes where :func:`_checked_fully` would find a fault lets a
malformed entry through unreported, so the properties below draw entries from well-typed
templates with random fields replaced, removed or added, write them as lines, and hold the
two together. Saying no too often only costs speed; the templates pin that the shapes pi
writes are accepted.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pi_context import _json
from pi_context.model.usage import make_usage
from pi_context.session.depth import CONTEXT_MAX_DEPTH, nests_deeper_than
from pi_context.session.shapes import head_of_line
from pi_context.session.validation import _checked_fully
from tests.session.test_validation import _all_templates, _mutated


def _expected_head(entry: dict[str, Any]) -> tuple[Any, ...]:
    message: dict[str, Any] = entry.get("message") or {}
    role = message.get("role") if entry["type"] == "message" else None
    return (entry["type"], entry.get("id", ""), entry.get("parentId"), role)


@given(_mutated())
@settings(max_examples=800, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_a_line_the_shapes_accept_has_no_fault(entry: dict[str, Any]) -> None:
    line = _json.dumps(entry)
    head = head_of_line(line)
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
        assert head_of_line(line) == _expected_head(template), template


def _text_line(text: bytes) -> bytes:
    return (
        b'{"type":"message","id":"a","parentId":null,"message":{"role":"user","content":'
        b'[{"type":"text","text":' + text + b"}]}}"
    )


def test_raw_text_spans_must_be_strings() -> None:
    assert head_of_line(_text_line(b'"hello"')) == ("message", "a", None, "user")
    assert head_of_line(_text_line(b'  "spaced"  ')) == ("message", "a", None, "user")
    for wrong in (b"5", b"null", b"[]", b"{}", b"true"):
        assert head_of_line(_text_line(wrong)) is None, wrong


def test_a_duplicated_key_is_read_as_the_full_decoder_reads_it() -> None:
    # the last value wins in both decoders: a string after a number is well-typed...
    line = _text_line(b'5,"text":"late"')
    assert head_of_line(line) is not None
    assert _checked_fully(_json.loads(line))[1] == []
    # ...and a number after a string is not
    assert head_of_line(_text_line(b'"early","text":5')) is None


def test_lines_the_full_decoder_must_read_are_refused() -> None:
    deep = b'{"type":"custom","id":"a","parentId":null,"data":' + b"[" * 3000 + b"]" * 3000 + b"}"
    assert head_of_line(deep) is None
    assert head_of_line(b'{"type":"message","id":"a"') is None  # torn
    assert head_of_line(b'{"type":"message","id":"a","parentId":null}') is None  # no message
    assert head_of_line(b'{"type":"a_new_type","id":"a"}') is None  # not interpreted
    assert head_of_line(b"[1, 2]") is None


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
    assert head_of_line(_json.dumps(entry)) == ("message", "a", None, "assistant")


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
        assert head_of_line(line) is not None, where


def test_a_line_past_the_depth_limit_is_refused() -> None:
    for where, line in _deep_lines(CONTEXT_MAX_DEPTH + 1).items():
        assert head_of_line(line) is None, where


def test_brackets_in_long_text_do_not_count_toward_the_depth() -> None:
    # the bytes outside the text are few: no need to count the text's brackets
    text = _json.dumps("{[" * 20_000)
    assert head_of_line(_text_line(text)) == ("message", "a", None, "user")
    thinking = b',{"type":"thinking","thinking":' + text + b"}]}}"
    assert head_of_line(_text_line(text)[:-3] + thinking) == ("message", "a", None, "user")


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
    if head_of_line(line) is not None:
        assert not nests_deeper_than(_json.loads(line), CONTEXT_MAX_DEPTH)
