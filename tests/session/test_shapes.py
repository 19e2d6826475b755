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

from pi_context import _json
from pi_context.model.usage import make_usage
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
