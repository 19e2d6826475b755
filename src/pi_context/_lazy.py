"""Package namespaces whose names are imported on first use.

A package's ``__init__`` that imported every module it names would make importing any one
module load them all (``pictx -p`` reaches ``pi_context.compaction.accounting`` and would pay
for the summarizer, the branch summary and every event class). Each package therefore lists
where its public names live, and :func:`attribute` imports a name's module when the name is
first read; a submodule not yet imported is found by its name too, as an eager ``__init__``
would have left it on the package.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, MutableMapping, Sequence

__all__ = ["attribute", "homes", "hooks"]


def homes(by_module: Mapping[str, tuple[str, ...]]) -> dict[str, str]:
    """``{module: (names...)}`` turned into ``{name: module}`` (a name listed twice is an error
    of the table, so it raises rather than picking one)."""
    out: dict[str, str] = {}
    for module, names in by_module.items():
        for name in names:
            if name in out:
                raise ValueError(f"{name} is listed under {out[name]} and {module}")
            out[name] = module
    return out


def attribute(
    namespace: MutableMapping[str, object], table: Mapping[str, str], name: str
) -> object:
    """The value of ``name`` for the package whose globals are ``namespace``: imported from its
    home module in ``table`` (and kept, so the next read is a plain lookup), or the submodule
    of that name."""
    package = str(namespace["__name__"])
    home = table.get(name)
    if home is not None:
        value: object = getattr(importlib.import_module(home), name)
    else:
        if name.startswith("__"):
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        try:
            value = importlib.import_module(f"{package}.{name}")
        except ModuleNotFoundError as error:
            if error.name != f"{package}.{name}":
                raise
            raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
    namespace[name] = value
    return value


def hooks(
    namespace: MutableMapping[str, object], table: Mapping[str, str], public: Sequence[str]
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """A package's ``__getattr__`` and ``__dir__``: names imported from ``table`` on first
    read (see :func:`attribute`), and listed with ``public`` (its ``__all__``) before they are."""

    def getattr_(name: str) -> object:
        return attribute(namespace, table, name)

    def dir_() -> list[str]:
        return sorted({*namespace, *public})

    return getattr_, dir_
