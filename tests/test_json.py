"""JSON as JavaScript spells it: numbers, key order, string escapes, lengths."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_context import _json


@pytest.mark.parametrize(
    ("value", "spelled"),
    [
        (1.0, "1"),
        (-0.0, "0"),
        (0.5, "0.5"),
        (1e-6, "0.000001"),
        (1e-7, "1e-7"),
        (2.5e-10, "2.5e-10"),
        (123.45, "123.45"),
        (1.5e16, "15000000000000000"),
        (1e21, "1e+21"),
        (1.7976931348623157e308, "1.7976931348623157e+308"),
        (12345678901234567890, "12345678901234567000"),
        (2**53, "9007199254740992"),
        (float("nan"), "null"),
        (float("inf"), "null"),
    ],
)
def test_js_number(value: float, spelled: str) -> None:
    assert _json.js_number(value) == spelled


def test_integer_like_keys_come_first_in_ascending_order() -> None:
    assert _json.js_stringify({"z": 1, "a": 2, "10": 3, "2": 4, "01": 5}) == (
        '{"2":4,"10":3,"z":1,"a":2,"01":5}'
    )


def test_strings_escape_like_json_stringify() -> None:
    assert _json.js_stringify('a"b\\c\n\u2028é\x7f') == '"a\\"b\\\\c\\n\u2028é\x7f"'
    assert _json.js_stringify("x\ud800y") == '"x\\ud800y"'


def test_utf16_length_counts_astral_characters_twice() -> None:
    assert _json.utf16_len("abc") == 3
    assert _json.utf16_len("😀") == 2
    assert _json.utf16_len("é\ud800") == 2


def test_loads_accepts_what_javascript_accepts() -> None:
    assert _json.loads(b'{"s":"\\ud800"}') == {"s": "\ud800"}
    # Like JavaScript, a big integer becomes the nearest double.
    assert _json.loads(b"123456789012345678901234567890") == 1.2345678901234568e29
    with pytest.raises(ValueError, match="property name"):
        _json.loads(b"{not json")
    with pytest.raises(ValueError, match="NaN"):
        _json.loads(b"NaN")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4)
    ),
    max_leaves=20,
)


@given(json_values)
def test_stringify_round_trips_through_a_json_parser(value: object) -> None:
    text = _json.js_stringify(value)
    assert json.loads(text) == value
    assert _json.loads(_json.dumps(value)) == value


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_js_number_is_the_shortest_round_trip(value: float) -> None:
    spelled = _json.js_number(value)
    assert float(spelled) == value
    assert "e" not in spelled or abs(value) >= 1e21 or abs(value) < 1e-6


_JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats()
    | st.sampled_from([0.0, -0.0, 1.0, 1e-4, 9.99e-5, 1e15, 1e21, 0.1, 123.456, 2.5e-7])
    | st.text(),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text(max_size=4) | st.sampled_from(["0", "1", "01", "10", "x"]), inner)
    ),
    max_leaves=12,
)


@given(_JSON_VALUES)
@settings(max_examples=1500, deadline=None)
def test_stringify_by_orjson_equals_the_walk(value: Any) -> None:
    assert _json.js_stringify(value) == _json._stringify_walk(value)
