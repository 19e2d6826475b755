"""The exception tree drawn in ``pi_context.errors``' docstring is the real one: it names every
``PiContextError`` subclass of the package, each under its base class."""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Iterator

import pi_context
from pi_context import errors
from pi_context.errors import PiContextError

_BRANCH = re.compile(r"^(?P<indent>(?:│   |    )*)[├└]── (?P<name>\w+)")


def _drawn() -> dict[str, str]:
    """Each class the docstring's tree draws, with the class it is drawn under."""
    lines = (errors.__doc__ or "").splitlines()
    root = next(i for i, line in enumerate(lines) if line.strip() == "PiContextError")
    parents = ["PiContextError"]
    drawn: dict[str, str] = {}
    for line in lines[root + 1 :]:
        found = _BRANCH.match(line.strip("\n")[4:])  # the tree is indented four spaces
        if found is None:
            break
        depth = len(found["indent"]) // 4
        del parents[depth + 1 :]
        drawn[found["name"]] = parents[depth]
        parents.append(found["name"])
    return drawn


def _subclasses(cls: type[PiContextError]) -> Iterator[type[PiContextError]]:
    subs: list[type[PiContextError]] = cls.__subclasses__()
    for sub in subs:
        yield sub
        yield from _subclasses(sub)


def _every_module_imported() -> None:
    for module in pkgutil.walk_packages(pi_context.__path__, "pi_context."):
        if module.name.endswith("__main__"):
            continue
        try:
            importlib.import_module(module.name)
        except ImportError:
            # An adapter whose framework (an optional extra) is not installed.
            if not module.name.startswith("pi_context.integrations."):
                raise


def test_the_drawn_tree_names_every_subclass_under_its_base() -> None:
    _every_module_imported()
    actual = {
        sub.__name__: sub.__bases__[0].__name__
        for sub in _subclasses(PiContextError)
        if sub.__module__.startswith("pi_context.")
    }
    assert _drawn() == actual


def test_the_tree_reader_sees_nesting() -> None:
    """The reader itself: a class drawn two levels down is recorded under its parent."""
    drawn = _drawn()
    assert drawn["SessionFormatError"] == "SessionError"
    assert drawn["CompactionCancelledError"] == "CompactionError"
    assert drawn["ClipboardError"] == "PiContextError"
