"""PrefixFlatMap: results equal a fresh flat map; only items after the common prefix are redone."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from pi_context.agent._transform import PrefixFlatMap, common_prefix


class Item:
    """An object compared by identity, like a stored message."""

    def __init__(self, n: int) -> None:
        self.n = n


def expand(index: int, item: Item) -> list[tuple[int, int]]:
    return [(index, item.n)] * (item.n % 3)  # zero, one or two results per item


def naive(items: list[Item]) -> list[tuple[int, int]]:
    return [r for i, item in enumerate(items) for r in expand(i, item)]


def test_common_prefix_compares_identity() -> None:
    a, b, c = Item(1), Item(1), Item(2)
    assert common_prefix([a, c], [a, c, b]) == 2
    assert common_prefix([a, c], [a, b]) == 1  # equal value, other object
    assert common_prefix([], [a]) == 0
    assert common_prefix([a, b, c], [a]) == 1


def test_only_new_items_are_computed() -> None:
    calls: list[int] = []

    def fn(index: int, item: Item) -> list[int]:
        calls.append(index)
        return [item.n]

    mapped = PrefixFlatMap(fn)
    items = [Item(n) for n in range(5)]
    assert mapped(items) == [0, 1, 2, 3, 4]
    calls.clear()
    items.append(Item(5))
    assert mapped(items) == [0, 1, 2, 3, 4, 5]
    assert calls == [5]
    calls.clear()
    items[2] = Item(20)  # a change in the middle redoes the rest
    assert mapped(items) == [0, 1, 20, 3, 4, 5]
    assert calls == [2, 3, 4, 5]
    calls.clear()
    mapped.clear()
    assert mapped(items[:2]) == [0, 1]
    assert calls == [0, 1]


def test_the_result_is_the_callers_to_change() -> None:
    mapped: PrefixFlatMap[Item, int] = PrefixFlatMap(lambda _i, item: [item.n])
    items = [Item(1), Item(2)]
    first = mapped(items)
    first.append(99)
    assert mapped(items) == [1, 2]


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["append", "truncate", "replace", "same"]),
            st.integers(min_value=0, max_value=30),
        ),
        max_size=25,
    )
)
def test_equals_a_fresh_flat_map_after_any_edits(steps: list[tuple[str, int]]) -> None:
    mapped = PrefixFlatMap(expand)
    items: list[Item] = []
    counter = 0
    for op, k in steps:
        if op == "append":
            items = [*items, *(Item(counter + j) for j in range(k % 4 + 1))]
            counter += 4
        elif op == "truncate":
            items = items[: k % (len(items) + 1)]
        elif op == "replace" and items:
            items = list(items)
            items[k % len(items)] = Item(counter)
            counter += 1
        assert mapped(items) == naive(items)


def test_common_prefix_with_a_key_compares_keys_where_identity_fails() -> None:
    a, b, c = Item(1), Item(2), Item(3)
    same_a, same_b = Item(1), Item(2)
    key = lambda item: item.n  # noqa: E731
    assert common_prefix([a, b, c], [same_a, same_b], key) == 2
    assert common_prefix([a, b, c], [same_a, c], key) == 1
    assert common_prefix([a, b], [same_a, same_b], None) == 0


def test_keyed_map_reuses_results_for_equal_keys() -> None:
    calls: list[int] = []

    def fn(index: int, item: Item) -> list[tuple[int, int]]:
        calls.append(item.n)
        return expand(index, item)

    keyed: PrefixFlatMap[Item, tuple[int, int]] = PrefixFlatMap(fn, key=lambda item: item.n)
    first = [Item(n) for n in range(1, 6)]
    assert keyed(first) == naive(first)
    calls.clear()
    rebuilt = [Item(n) for n in range(1, 6)] + [Item(7)]  # new objects, same keys, one more
    assert keyed(rebuilt) == naive(rebuilt)
    assert calls == [7]
    calls.clear()
    edited = [*rebuilt[:2], Item(8), *rebuilt[3:]]  # the third item changed its key
    assert keyed(edited) == naive(edited)
    assert calls == [8, 4, 5, 7]
