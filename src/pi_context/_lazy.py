"""Package namespaces whose names are listed once, in a stub, and imported on first use.

Python runs a package's ``__init__`` before any of its modules, so an ``__init__`` that
imported every module it names would make importing any one module load them all (``pictx -p``
reaches ``pi_context.compaction.accounting`` and would pay for the summarizer, the branch
summary and every event class). Each package therefore lists its public names once, as the
imports of its ``__init__.pyi`` (the form of SPEC 1, as ``lazy_loader`` reads it)::

    # session/__init__.pyi: the package's names, read by type checkers and IDEs as they are
    from .entries import Entry as Entry
    from .store import Session as Session

and its ``__init__.py`` holds only::

    from pi_context import _lazy

    __getattr__, __dir__ = _lazy.attach_stub(__name__, __file__)

:func:`attach_stub` reads the stub when the package is first asked for a name it does not
hold yet (importing the package reads nothing: ``pictx --version`` never parses a stub),
imports that name's module and keeps the value on the package, so the next read is a plain
lookup. The rules of a stub:

* ``from .module import Name as Name`` (or ``from pi_context.other import Name as Name``): a
  public name, imported from that module on first use; ``from . import module as module``: the
  submodule. Only this re-export form counts, as it does for type checkers.
* ``Name: TypeAlias = A | B | ...``: the union of those names, built on first use (the union
  of every event the agent emits, whose compaction members are imported only then).
* A name listed twice is an error of the stub, and every name is public (a name with a
  leading underscore is taken for a private submodule, without reading the stub); anything
  else in a stub is not a name of the namespace.

``__all__`` is the stub's names in the order ruff keeps such lists (constants, classes, then
the rest, each sorted); ``dir()`` adds them to what the package already holds; ``from package
import *`` imports them all; a submodule that is not listed is still found by its name, as an
eager ``__init__`` would have left it on the package; any other name is an
:class:`AttributeError` naming the package.

A module with code of its own cannot have a stub (a type checker would read the stub instead
of the code), so a module that re-exports names on first use (``events`` the compaction
events, ``cli/main`` the click group) calls :func:`attach_stub` too and its stub is its
``if TYPE_CHECKING:`` block; such a module keeps its own ``__all__``, which also names what it
defines.
"""

from __future__ import annotations

import sys

# Not ``typing.TYPE_CHECKING``: the root package imports this module, and ``import typing``
# would be most of what ``pictx --version`` imports.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import ast
    from collections.abc import Callable, Iterator
    from typing import TypeAlias

    Home: TypeAlias = tuple[str, str]
    """Where a name lives: its module and its attribute there ("" for the module itself)."""
    Table: TypeAlias = tuple[dict[str, Home], dict[str, tuple[str, ...]]]
    """A namespace's names: the imported ones with their homes, the unions with their members."""

__all__ = ["attach_stub", "read_stub"]


def attach_stub(name: str, file: str) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of the namespace ``name`` (``__name__``) whose source
    is ``file`` (``__file__``): its names are those of ``__init__.pyi`` beside a package's
    ``__init__.py``, or of a module's own ``if TYPE_CHECKING:`` block."""
    is_package = file.endswith("__init__.py")
    stub = file[: -len(".py")] + ".pyi" if is_package else file
    read: list[Table] = []

    def table() -> Table:
        if not read:  # parsed on the first name asked for, once
            read.append(read_stub(name, stub, package=is_package))
        return read[0]

    def getattr_(attribute: str) -> object:
        if attribute == "__all__" and is_package:
            homes, unions = table()
            value: object = sorted({*homes, *unions}, key=_ruff_order)
        elif attribute.startswith("__"):  # probes of dunders (copy, pickle, pydoc) read nothing
            raise AttributeError(f"module {name!r} has no attribute {attribute!r}")
        elif attribute.startswith("_") and is_package:  # a private module: never a stub's name
            value = _submodule(name, attribute)
        elif attribute in table()[0]:
            module, inner = table()[0][attribute]
            value = _import(module)
            if inner:
                value = getattr(value, inner)
        elif attribute in table()[1]:
            import functools
            import operator

            namespace = sys.modules[name]
            members = (getattr(namespace, member) for member in table()[1][attribute])
            value = functools.reduce(operator.or_, members)
        elif is_package:
            value = _submodule(name, attribute)
        else:
            raise AttributeError(f"module {name!r} has no attribute {attribute!r}")
        setattr(sys.modules[name], attribute, value)  # the next read is a plain lookup
        return value

    def dir_() -> list[str]:
        homes, unions = table()
        return sorted({*vars(sys.modules[name]), *homes, *unions})

    return getattr_, dir_


def read_stub(name: str, path: str, *, package: bool) -> Table:
    """The names the stub at ``path`` gives the namespace ``name`` (a package: the whole file;
    a module: its ``if TYPE_CHECKING:`` blocks). A name listed twice, or a type alias that is
    not a union of names, raises :class:`ValueError` naming the file and line."""
    import ast

    with open(path, encoding="utf-8") as file:
        tree = ast.parse(file.read(), filename=path)
    base = name if package else name.rpartition(".")[0]
    homes: dict[str, Home] = {}
    unions: dict[str, tuple[str, ...]] = {}

    def new(public: str, node: ast.stmt) -> str:
        if public in homes or public in unions:
            raise ValueError(f"{path}:{node.lineno}: {public} is listed twice")
        return public

    for node in tree.body if package else _type_checking_body(tree):
        if isinstance(node, ast.ImportFrom):
            module = _absolute(node, base)
            for alias in node.names:
                if alias.asname != alias.name:  # not re-exported, for type checkers either
                    continue
                if node.module is None and node.level:  # from . import submodule as submodule
                    homes[new(alias.name, node)] = (f"{module}.{alias.name}", "")
                else:
                    homes[new(alias.name, node)] = (module, alias.name)
        elif isinstance(node, ast.AnnAssign) and _names(node.annotation) == ["TypeAlias"]:
            members = _names(node.value)
            if not isinstance(node.target, ast.Name) or not members:
                raise ValueError(f"{path}:{node.lineno}: a type alias must be a union of names")
            unions[new(node.target.id, node)] = tuple(members)
    return homes, unions


def _type_checking_body(tree: ast.Module) -> Iterator[ast.stmt]:
    import ast

    for node in tree.body:
        if isinstance(node, ast.If) and _names(node.test) == ["TYPE_CHECKING"]:
            yield from node.body


def _names(node: ast.expr | None) -> list[str]:
    """``A | B | C`` as ``["A", "B", "C"]`` (``typing.X`` as ``X``); ``[]`` for anything else."""
    import ast

    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return [node.attr]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        left, right = _names(node.left), _names(node.right)
        return [*left, *right] if left and right else []
    return []


def _absolute(node: ast.ImportFrom, base: str) -> str:
    """The module an import names, relative ones resolved from the package ``base``."""
    if not node.level:
        return node.module or ""
    package = base.rsplit(".", node.level - 1)[0] if node.level > 1 else base
    return f"{package}.{node.module}" if node.module else package


def _import(module: str) -> object:
    import importlib

    return importlib.import_module(module)


def _submodule(package: str, attribute: str) -> object:
    try:
        return _import(f"{package}.{attribute}")
    except ModuleNotFoundError as error:
        if error.name != f"{package}.{attribute}":
            raise
        raise AttributeError(f"module {package!r} has no attribute {attribute!r}") from None


def _ruff_order(name: str) -> tuple[int, str]:
    """The order ruff sorts ``__all__`` in: SCREAMING_CASE, then CamelCase, then the rest."""
    if len(name) > 1 and name.isupper():
        return 0, name
    return (1 if name[:1].isupper() else 2), name
