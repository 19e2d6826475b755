"""Valid JSON nested deeper than the decoders' recursion allows.

pi can write a line nested more than 1,000 levels (tool-call arguments are arbitrary JSON).
Such lines used to end every command with ``RecursionError``; a model reply nested 400+ levels
was not stored, and one nested 1,000 levels ended every later request with a ``RecursionError``
from the provider SDK's JSON encoder. Up to ``_json.MAX_DEPTH`` they load, store and export;
up to ``CONTEXT_MAX_DEPTH`` they reach the context (and the wire); past it the line is
reported (file and line), left out of the context, and the session and the agent go on.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_context import _json
from pi_context.session import Session, convert_to_llm
from pi_context.session.entries import CONTEXT_MAX_DEPTH, shallow_line
from pi_context.session.projection import handed_out
from pi_context.tokens import estimate_tokens
from tests.hostile.helpers import (
    assert_clean,
    entry,
    nested,
    pictx_process,
    raw_assistant,
    raw_user,
    sha256,
    write_session,
)

pytestmark = pytest.mark.timeout(300)


def depth_of(value: Any) -> int:
    depth = 0
    while isinstance(value, dict | list):
        depth += 1
        value = value["a"] if isinstance(value, dict) else value[0]
    return depth


@pytest.mark.parametrize("depth", [255, 1_025, 5_000, _json.MAX_DEPTH])
def test_loads_and_dumps_round_trip_at_any_allowed_depth(depth: int) -> None:
    value = nested(depth, "x\ud800")
    text = _json.js_stringify(value)
    assert text.startswith("[" if depth % 2 else "{")
    decoded = _json.loads(text.encode("utf-8", "surrogatepass"))
    assert depth_of(decoded) == depth
    assert _json.dumps(decoded) == text.encode("utf-8", "surrogatepass")


def test_past_the_limit_is_a_clear_value_error() -> None:
    text = "[" * (_json.MAX_DEPTH + 1) + "]" * (_json.MAX_DEPTH + 1)
    with pytest.raises(_json.JSONDepthError, match=f"nested deeper than {_json.MAX_DEPTH}"):
        _json.loads(text)


_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=3),
    lambda kids: (
        st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=2), kids, max_size=3)
    ),
    max_leaves=20,
)


@given(_JSON_VALUES, st.integers(1_000, 1_500))
@settings(max_examples=40, deadline=None)
def test_deep_values_round_trip_like_shallow_ones(inner: Any, depth: int) -> None:
    value = nested(depth, inner)
    text = _json.js_stringify(value)
    assert _json.js_stringify(_json.loads(text.encode("utf-8", "surrogatepass"))) == text


def _deep_session(path: Path, depth: int) -> Path:
    call = {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"deep": nested(depth)}}
    return write_session(
        path,
        [
            entry("u1", None, message=raw_user("q")),
            entry("a1", "u1", message=raw_assistant(content=[call], stopReason="toolUse")),
            entry(
                "t1",
                "a1",
                message={
                    "role": "toolResult",
                    "toolCallId": "c1",
                    "toolName": "read",
                    "content": [{"type": "text", "text": "r"}],
                    "isError": False,
                    "timestamp": 3,
                },
            ),
        ],
    )


_LEFT_OUT = (
    f"nested deeper than {CONTEXT_MAX_DEPTH} levels: left out of the context (the line is kept)"
)
WITHIN = CONTEXT_MAX_DEPTH - 10
"""A tool call's arguments this deep keep the whole line within the context limit."""


def test_a_deep_line_loads_projects_and_estimates(tmp_path: Path) -> None:
    path = _deep_session(tmp_path / "s.jsonl", WITHIN)
    with Session.open(path) as session:
        messages = session.messages()
        assert [m["role"] for m in messages] == ["user", "assistant", "toolResult"]
        assert estimate_tokens(messages[1]) > WITHIN // 4
        assert len(convert_to_llm(messages)) == 3
        assert session.check() == []


@pytest.mark.parametrize("depth", [CONTEXT_MAX_DEPTH, 3_000, 20_000])
def test_a_line_past_the_context_limit_is_reported_and_left_out(tmp_path: Path, depth: int) -> None:
    path = _deep_session(tmp_path / "s.jsonl", depth)
    original = path.read_bytes()
    with Session.open(path) as session:
        assert [m["role"] for m in session.messages()] == ["user", "toolResult"]
        assert [str(p) for p in session.problems] == [f"{path}:3: message entry a1: {_LEFT_OUT}"]
        session.append_message(raw_user("go on"))
        assert [m["role"] for m in session.messages()] == ["user", "toolResult", "user"]
    assert path.read_bytes().startswith(original)  # appended to, the deep line kept as it was
    assert Session.open(path).entries[1].raw == original.split(b"\n")[2]


@pytest.mark.parametrize("depth", [WITHIN, 1_500, 20_000])
def test_commands_and_export_handle_deep_lines(tmp_path: Path, depth: int) -> None:
    path = _deep_session(tmp_path / "s.jsonl", depth)
    before = sha256(path)
    for args in (
        ("session", "info", str(path)),
        ("session", "tree", str(path)),
        ("session", "context", "--json", str(path)),
        ("--export", str(path), str(tmp_path / "out.html")),
    ):
        run = pictx_process(*args, cwd=tmp_path)
        assert_clean(run, code=0)
        if depth > CONTEXT_MAX_DEPTH and args[0] == "session":
            assert run.stderr_lines == [f"pictx: warning: {path}:3: message entry a1: {_LEFT_OUT}"]
        else:
            assert run.stderr_lines == []
    assert sha256(path) == before
    assert (tmp_path / "out.html").stat().st_size > 0


@pytest.mark.parametrize("depth", [450, 3_000, 20_000])
def test_a_deep_model_reply_is_stored_and_resumed(tmp_path: Path, depth: int) -> None:
    path = tmp_path / "s.jsonl"
    call = {"type": "toolCall", "id": "c1", "name": "x", "arguments": {"v": nested(depth)}}
    within = depth + 5 <= CONTEXT_MAX_DEPTH  # the entry, message, content, block, arguments
    with Session.create(path, cwd=str(tmp_path)) as session:
        session.append_message(raw_user("q"))
        session.append_message(raw_assistant(content=[call], stopReason="toolUse"))
        expected = [] if within else [f"{path}:3: message entry {session.leaf_id}: {_LEFT_OUT}"]
        # the reply is in the context only when it is within the limit, as after a reload
        assert len(session.messages()) == (2 if within else 1)
        assert [str(p) for p in session.problems] == expected
        session.append_message(raw_user("next"))
    # the reply's line holds the call as sent (compared as text: ``==`` on values this deep
    # recurses past Python's limit, and past MAX_DEPTH the line does not decode)
    stored = path.read_bytes().split(b"\n")[2]
    assert b'"content":' + _json.js_stringify([call]).encode() + b',"api"' in stored
    with Session.open(path) as again:
        assert len(again.messages()) == (3 if within else 2)
        assert [str(p) for p in again.problems] == expected
        again.append_message(raw_user("more"))
    assert [str(p) for p in Session.open(path).check()] == expected


def test_handing_out_copies_messages_of_any_depth() -> None:
    deep = raw_assistant(content=[{"type": "toolCall", "id": "c", "name": "x", "arguments": {}}])
    deep["content"][0]["arguments"] = {"v": nested(_json.MAX_DEPTH + 5_000)}
    deep["tuple"] = ("a", ["b"])
    copied = handed_out(deep)
    assert copied is not deep
    assert copied["content"][0]["arguments"]["v"] is not deep["content"][0]["arguments"]["v"]
    assert _json.js_stringify(copied) == _json.js_stringify(deep)
    assert copied["tuple"] == ["a", ["b"]]


@given(st.integers(min_value=1, max_value=3 * CONTEXT_MAX_DEPTH), st.integers(0, 5000))
@settings(max_examples=60, deadline=None)
def test_a_line_called_shallow_never_nests_too_deep(depth: int, padding: int) -> None:
    """``shallow_line`` may call a shallow line deep (then its value is walked), never a deep
    line shallow; short lines and lines with few brackets are answered from the bytes."""
    line = ('{"a":' * (depth - 1) + '{"text":"' + "x" * padding + '"}' + "}" * (depth - 1)).encode()
    if shallow_line(line):
        assert depth <= CONTEXT_MAX_DEPTH
    if depth <= CONTEXT_MAX_DEPTH:
        assert shallow_line(line)  # one opening brace per level: never more than the limit


def test_brackets_inside_strings_count_against_a_long_line() -> None:
    text = "[" * (CONTEXT_MAX_DEPTH + 1) + "x" * CONTEXT_MAX_DEPTH  # longer than the bound
    assert not shallow_line(('{"text":"' + text + '"}').encode())
    assert shallow_line(('{"text":"' + "x" * (3 * CONTEXT_MAX_DEPTH) + '"}').encode())
