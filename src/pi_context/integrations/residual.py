"""Lossless round trips: what a framework object has beyond its pi message.

A framework message converted to pi's form loses what pi has no field for (an item id, a
status, annotations, a timestamp the framework stamps). Rather than a field-by-field mapping
that silently drops whatever the next framework version adds, an adapter converts the object to
pi's form, converts that back, and stores the difference from the original (:func:`diff`)
beside the pi message. :func:`patch` applies it, so ``patch(back, diff(original, back))``
equals ``original`` for any JSON value: the round trip is lossless by construction, and the
stored difference stays small because only what pi cannot express is in it.
"""

from __future__ import annotations

from typing import Any

__all__ = ["diff", "patch"]

_SET = "="
_KEYS = "{}"
_ITEMS = "[]"
_DROP = "-"
_ORDER = "order"


def diff(original: Any, derived: Any) -> Any:
    """The change that turns ``derived`` into ``original`` (``None``: they are equal)."""
    if _same(original, derived):
        return None
    if isinstance(original, dict) and isinstance(derived, dict):
        changes: dict[str, Any] = {}
        for key, value in original.items():
            sub = diff(value, derived[key]) if key in derived else {_SET: value}
            if sub is not None:
                changes[key] = sub
        drops = [key for key in derived if key not in original]
        out: dict[str, Any] = {_KEYS: changes}
        if drops:
            out[_DROP] = drops
        after = [key for key in derived if key in original]
        after += [key for key in original if key not in derived]
        if after != list(original):
            out[_ORDER] = list(original)
        return out
    if isinstance(original, list) and isinstance(derived, list) and len(original) == len(derived):
        items: dict[str, Any] = {}
        for index, (o, d) in enumerate(zip(original, derived, strict=True)):
            sub = diff(o, d)
            if sub is not None:
                items[str(index)] = sub
        return {_ITEMS: items}
    return {_SET: original}


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON: the same types (``False`` is not ``0``) and keys in the same order."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def patch(derived: Any, change: Any) -> Any:
    """``derived`` with ``change`` (from :func:`diff`) applied; ``derived`` is not modified."""
    if change is None:
        return derived
    if _SET in change:
        return change[_SET]
    if _ITEMS in change:
        items = list(derived)
        for index, sub in change[_ITEMS].items():
            items[int(index)] = patch(items[int(index)], sub)
        return items
    out = dict(derived)
    for key in change.get(_DROP, ()):
        out.pop(key, None)
    for key, sub in change[_KEYS].items():
        out[key] = patch(out.get(key), sub)
    order = change.get(_ORDER)
    if order is not None:
        out = {key: out[key] for key in order}
    return out
