"""The base of every lifecycle event: a value class that serializes as pi's JSON record.

Events are defined once, in the lowest layer that emits them (compaction events in
:mod:`pi_context.compaction.events`, the agent's and the extension hooks' in
:mod:`pi_context.events`), and every layer speaks the same classes. :class:`Event` gives each a
``type`` (pi's event name) and a ``to_json()`` that writes the record pi 1.6.0 writes in its
``--mode json`` stream: each field under its camelCase name, in declaration order, fields left
``None`` omitted (``JSON.stringify`` drops ``undefined``).

The agent's and compaction's events are frozen ``msgspec`` Structs (cheap to define, which keeps
start-up fast); the extension hooks' events are dataclasses, which handlers may fill in. Both
kinds serialize the same way.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, ClassVar, cast

__all__ = ["Event", "Record"]


class Record:
    """Serializes a Struct or a dataclass as a pi JSON record.

    Subclasses adjust with ``_wire`` (field → key), ``_hidden`` (fields not written),
    ``_keep_none`` (fields written as ``null``) and ``_order`` (fields written first, in this
    order, where the record's order differs from the order the constructor takes them in).
    """

    __slots__ = ()
    _wire: ClassVar[Mapping[str, str]] = {}
    _hidden: ClassVar[frozenset[str]] = frozenset()
    _keep_none: ClassVar[frozenset[str]] = frozenset()
    _order: ClassVar[tuple[str, ...]] = ()

    def _fields_json(self) -> dict[str, Any]:
        record: dict[str, Any] = {}
        for name, key, keep_none in _layout(type(self)):
            value = getattr(self, name)
            if value is not None or keep_none:
                record[key] = _plain(value)
        return record


class Event(Record):
    """A lifecycle event: ``{"type": ..., **fields}``; ``type`` is pi's event name."""

    __slots__ = ()
    type: ClassVar[str]

    def to_json(self) -> dict[str, Any]:
        """The record of pi's ``--mode json`` stream (or ours, for events beyond pi)."""
        return {"type": self.type, **self._fields_json()}


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


_LAYOUTS: dict[type, tuple[tuple[str, str, bool], ...]] = {}


def _layout(cls: type[Record]) -> tuple[tuple[str, str, bool], ...]:
    """``(attribute, key, keep None)`` per written field of ``cls``, computed once per class."""
    layout = _LAYOUTS.get(cls)
    if layout is None:
        names: tuple[str, ...] | None = getattr(cls, "__struct_fields__", None)
        if names is None:
            names = tuple(f.name for f in dataclasses.fields(cast(Any, cls)))
        names = cls._order + tuple(name for name in names if name not in cls._order)
        layout = _LAYOUTS[cls] = tuple(
            (name, cls._wire.get(name, _camel(name)), name in cls._keep_none)
            for name in names
            if name not in cls._hidden
        )
    return layout


def _plain(value: Any) -> Any:
    """Plain JSON values: nested records (and values with ``to_json``) serialized, mappings as
    dicts, sequences as lists."""
    to_json = getattr(value, "to_json", None)
    if callable(to_json):
        return to_json()
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, tuple | list):
        return list(value)
    return value
