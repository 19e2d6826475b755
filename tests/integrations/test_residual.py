"""Lossless round trips: ``patch(derived, diff(original, derived)) == original``, key order too."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pi_context.integrations.residual import diff, patch

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=3), inner, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(JSON, JSON)
def test_patching_the_difference_gives_the_original_back(original: Any, derived: Any) -> None:
    change = diff(original, derived)
    back = patch(derived, change)
    assert json.dumps(back) == json.dumps(original)  # equal, with keys in the same order


def test_equal_values_store_nothing_and_small_changes_stay_small() -> None:
    item = {"type": "message", "content": [{"text": "long text " * 50, "annotations": []}]}
    assert diff(item, json.loads(json.dumps(item))) is None
    with_id = {"id": "msg_1", **item}
    change = diff(with_id, item)
    assert "long text" not in json.dumps(change)
    assert patch(item, change) == with_id
