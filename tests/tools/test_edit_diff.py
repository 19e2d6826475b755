"""The line alignment behind the edit diffs: valid, minimal, bounded."""

from __future__ import annotations

from functools import cache

from hypothesis import given
from hypothesis import strategies as st

from pi_context.tools.edit_diff import _myers, _opcodes, first_changed_line

lines = st.lists(st.sampled_from(["a", "b", "c", "}"]), max_size=12)


def _lcs(a: list[str], b: list[str]) -> int:
    @cache
    def go(i: int, j: int) -> int:
        if i == len(a) or j == len(b):
            return 0
        if a[i] == b[j]:
            return 1 + go(i + 1, j + 1)
        return max(go(i + 1, j), go(i, j + 1))

    return go(0, 0)


@given(lines, lines)
def test_opcodes_turn_old_into_new_with_fewest_changed_lines(
    old: list[str], new: list[str]
) -> None:
    codes = _opcodes(old, new)
    rebuilt: list[str] = []
    i = j = 0
    changed = 0
    for tag, i1, i2, j1, j2 in codes:
        assert (i1, j1) == (i, j)  # contiguous, covering both sides
        if tag == "equal":
            assert old[i1:i2] == new[j1:j2]
        else:
            assert tag == {(True, True): "replace", (True, False): "delete"}.get(
                (i2 > i1, j2 > j1), "insert"
            )
            changed += (i2 - i1) + (j2 - j1)
        rebuilt.extend(new[j1:j2])
        i, j = i2, j2
    assert (i, j) == (len(old), len(new))
    assert rebuilt == new
    assert changed == len(old) + len(new) - 2 * _lcs(old, new)


def test_the_alignment_gives_up_past_its_budget() -> None:
    old = [str(i) for i in range(200)]
    new = [str(i) for i in range(200, 400)]
    assert _myers(old, new, 1000) is None
    assert _myers(old[:3], new[:3], 1000) == [("replace", 0, 3, 0, 3)]


@given(lines, lines)
def test_first_changed_line_is_where_the_first_change_starts(
    old: list[str], new: list[str]
) -> None:
    old_text, new_text = "\n".join(old) + "\n", "\n".join(new) + "\n"
    changes = [j1 + 1 for tag, _i1, _i2, j1, _j2 in _opcodes(old, new) if tag != "equal"]
    assert first_changed_line(old_text, new_text) == (changes[0] if changes else None)
