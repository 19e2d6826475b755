"""Cycling order of the ``--models`` scope (spec agent-parity §4.5)."""

from __future__ import annotations

from pi_context.cli.app.model_scope import next_model_key


def test_next_model_wraps_and_handles_edges() -> None:
    keys = ["a/1", "b/2", "c/3"]
    assert next_model_key(keys, "a/1") == "b/2"
    assert next_model_key(keys, "c/3") == "a/1"
    assert next_model_key(keys, "a/1", forward=False) == "c/3"
    assert next_model_key(keys, "x/9") == "a/1"
    assert next_model_key(keys, "x/9", forward=False) == "c/3"
    assert next_model_key(["a/1"], "a/1") is None
    assert next_model_key(["a/1"], "x/9") == "a/1"
    assert next_model_key([], "a/1") is None
