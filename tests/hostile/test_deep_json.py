"""Valid JSON nested deeper than the decoders' recursion allows (issue 10, item 2).

pi can write a line nested more than 1,000 levels (tool-call arguments are arbitrary JSON).
Such lines used to end every command with ``RecursionError``; a model reply nested 400+ levels
was not stored. Up to ``_json.MAX_DEPTH`` they load, project, store and export; past it the
line is reported (file and line) and the session stays usable.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_context import _json
from pi_context.session import Session, convert_to_llm
from pi_context.tokens import estimate_tokens
from tests.hostile.helpers import (
    assert_clean,
    assistant,
    content_of,
    entry,
    pictx,
    sha256,
    user,
    write_session,
)

pytestmark = pytest.mark.timeout(300)


def nested(depth: int, leaf: Any = 1) -> Any:
    """``{"a": {"a": ... [leaf] ...}}``: objects and lists alternating, ``depth`` levels."""
    value: Any = [leaf]
    for level in range(depth - 1):
        value = {"a": value} if level % 2 == 0 else [value, level]
    return value


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
            entry("u1", None, message=user("q")),
            entry("a1", "u1", message=assistant(content=[call], stopReason="toolUse")),
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


def test_a_deep_line_loads_projects_and_estimates(tmp_path: Path) -> None:
    path = _deep_session(tmp_path / "s.jsonl", 3_000)
    with Session.open(path) as session:
        messages = session.messages()
        assert [m["role"] for m in messages] == ["user", "assistant", "toolResult"]
        assert estimate_tokens(messages[1]) > 3_000 // 4
        assert len(convert_to_llm(messages)) == 3
        assert session.check() == []


@pytest.mark.parametrize("depth", [1_500, 20_000])
def test_commands_and_export_handle_deep_lines(tmp_path: Path, depth: int) -> None:
    path = _deep_session(tmp_path / "s.jsonl", depth)
    before = sha256(path)
    for args in (
        ("session", "info", str(path)),
        ("session", "tree", str(path)),
        ("session", "context", "--json", str(path)),
        ("--export", str(path), str(tmp_path / "out.html")),
    ):
        run = pictx(*args, cwd=tmp_path)
        assert_clean(run, code=0)
        if depth > _json.MAX_DEPTH and args[0] == "session":
            assert run.stderr_lines == [
                f"pictx: warning: {path}:3: message entry a1: nested deeper than "
                f"{_json.MAX_DEPTH} levels: left out of the context (the line is kept)"
            ]
        else:
            assert run.stderr_lines == []
    assert sha256(path) == before
    assert (tmp_path / "out.html").stat().st_size > 0


@pytest.mark.parametrize("depth", [450, 3_000])
def test_a_deep_model_reply_is_stored_and_resumed(tmp_path: Path, depth: int) -> None:
    path = tmp_path / "s.jsonl"
    call = {"type": "toolCall", "id": "c1", "name": "x", "arguments": {"v": nested(depth)}}
    with Session.create(path, cwd=str(tmp_path)) as session:
        session.append_message(user("q"))
        session.append_message(assistant(content=[call], stopReason="toolUse"))
    with Session.open(path) as again:
        stored = again.messages()[-1]
        # (compared as text: ``==`` on values this deep recurses past Python's limit)
        assert _json.js_stringify(content_of(stored)) == _json.js_stringify([call])
        assert again.problems == []
        again.append_message(user("more"))
    assert Session.open(path).check() == []
