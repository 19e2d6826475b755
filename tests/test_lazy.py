"""Lazy package namespaces: each package's three lists of its public names agree.

A package's ``__init__`` names each public name three times: in ``__all__``, in the table of
where it lives (``_HOMES``, read at run time) and in the ``TYPE_CHECKING`` imports (read by type
checkers). A name misspelt or moved in one of them would only fail when a user first reads it,
so every package is checked here against all three.
"""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path
from types import ModuleType

import pytest

from pi_context import _lazy

LAZY_PACKAGES = [
    "pi_context.agent",
    "pi_context.compaction",
    "pi_context.export",
    "pi_context.extensions",
    "pi_context.images",
    "pi_context.mcp",
    "pi_context.model",
    "pi_context.prompt",
    "pi_context.resources",
    "pi_context.session",
    "pi_context.store",
    "pi_context.tools",
]


def _type_checking_imports(package: ModuleType) -> dict[str, str]:
    """``{name: module}`` of the ``from module import name`` lines under ``if TYPE_CHECKING:``."""
    tree = ast.parse(inspect.getsource(package))
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for stmt in node.body:
                if isinstance(stmt, ast.ImportFrom) and stmt.module is not None:
                    for alias in stmt.names:
                        found[alias.asname or alias.name] = stmt.module
    return found


def test_every_package_using_the_table_is_checked() -> None:
    import pi_context

    root = inspect.getsourcefile(pi_context)
    assert root is not None
    users = sorted(
        "pi_context." + init.parent.name
        for init in Path(root).parent.glob("*/__init__.py")
        if "_lazy.homes(" in init.read_text(encoding="utf-8")
    )
    assert users == LAZY_PACKAGES


@pytest.mark.parametrize("name", LAZY_PACKAGES)
def test_the_three_lists_agree_and_every_name_resolves(name: str) -> None:
    package = importlib.import_module(name)
    table: dict[str, str] = package._HOMES
    assert set(table) <= set(package.__all__), "a name in the table is missing from __all__"
    typed = _type_checking_imports(package)
    assert typed == table, "the TYPE_CHECKING imports and the table disagree"
    for public in package.__all__:
        value = getattr(package, public)
        if public in table:
            assert value is getattr(importlib.import_module(table[public]), public)


def test_a_name_listed_twice_is_an_error_of_the_table() -> None:
    with pytest.raises(ValueError, match=r"Thing is listed under a\.one and a\.two"):
        _lazy.homes({"a.one": ("Thing",), "a.two": ("Thing",)})


def test_an_unknown_name_is_an_attribute_error_and_a_submodule_is_found() -> None:
    session = importlib.import_module("pi_context.session")
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        _ = session.no_such_name
    assert session.columns is importlib.import_module("pi_context.session.columns")
