"""Lazy namespaces: every public name is written once, in a stub, and resolves.

A package's public names are the imports of its ``__init__.pyi`` (one line each, in the
re-export form ``from .module import Name as Name``), which type checkers read as the package
and ``pi_context._lazy.attach_stub`` reads at run time; two modules with code of their own
(``events``, ``cli/main``) read their ``if TYPE_CHECKING:`` block the same way. Checked here:
every package with public names uses its stub and nothing else defines a namespace
``__getattr__``; every stub line resolves to the value of its home; every public name is in
exactly one stub line; and nothing else is exported.
"""

from __future__ import annotations

import ast
import functools
import importlib
import json
import operator
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

import pi_context
from pi_context import _lazy

PACKAGE_DIR = Path(pi_context.__file__).parent
STUBS = sorted(PACKAGE_DIR.rglob("__init__.pyi"))
PACKAGES = [".".join(stub.relative_to(PACKAGE_DIR.parent).parent.parts) for stub in STUBS]
MODULES = ["pi_context.cli.main", "pi_context.events"]
"""Modules with code of their own whose stub is their ``if TYPE_CHECKING:`` block."""
ATTACH = "__getattr__, __dir__ = _lazy.attach_stub(__name__, __file__)"


def _table(name: str) -> _lazy.Table:
    module = importlib.import_module(name)
    source = str(module.__file__)
    package = name in PACKAGES
    return _lazy.read_stub(name, source[:-3] + ".pyi" if package else source, package=package)


def _public(name: str) -> set[str]:
    homes, unions = _table(name)
    return {*homes, *unions}


def test_every_package_with_public_names_reads_them_from_its_stub() -> None:
    """An ``__init__.py`` is its docstring, or that and the one line that attaches its stub
    (the slash commands import their modules first, which registers them; a framework adapter
    checks its extra first); no module defines a ``__getattr__`` of its own."""
    assert len(PACKAGES) >= 13
    for init in sorted(PACKAGE_DIR.rglob("__init__.py")):
        tree = ast.parse(init.read_text(encoding="utf-8"))
        code = [ast.unparse(node) for node in tree.body[1:]]
        stub = init.with_suffix(".pyi")
        if not stub.exists():
            assert code == [], f"{init}: names belong in an __init__.pyi"
            continue
        assert code[-1] == ATTACH, init
        assert "from pi_context import _lazy" in code, init
        extra = [line for line in code[:-1] if line != "from pi_context import _lazy"]
        assert all(line.startswith(("from pi_context.", "_extra.require(")) for line in extra), init
        assert not any(" as " in line for line in extra), init
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        own = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "__getattr__"]
        assert own == [], f"{path}: a namespace's names go through _lazy.attach_stub"
    for name in MODULES:
        path = Path(str(importlib.import_module(name).__file__))
        assert ATTACH in path.read_text(encoding="utf-8"), name


@pytest.mark.parametrize("name", PACKAGES + MODULES)
def test_every_stub_line_resolves(name: str) -> None:
    namespace = importlib.import_module(name)
    homes, unions = _table(name)
    assert homes or unions
    for public, (module, attribute) in homes.items():
        home = importlib.import_module(module)
        expected = getattr(home, attribute) if attribute else home
        assert getattr(namespace, public) is expected, public
    for public, members in unions.items():
        union = functools.reduce(operator.or_, (getattr(namespace, m) for m in members))
        assert getattr(namespace, public) == union, public


def test_every_public_name_is_in_exactly_one_stub_line() -> None:
    """A package's stub holds nothing but its names, one import line each (and the declaration
    of ``__all__``, for type checkers), and a name listed twice is an error of the stub (the
    namespace would not know which one to import)."""
    seen = 0
    for stub in STUBS:
        *imports, declaration = ast.parse(stub.read_text(encoding="utf-8")).body
        # the package has an ``__all__`` (served by _lazy), its names being the lines above
        assert ast.unparse(declaration) == "__all__: list[str]", stub
        for node in imports:
            assert isinstance(node, ast.ImportFrom), f"{stub}:{node.lineno}"
            assert node.lineno == node.end_lineno, f"{stub}:{node.lineno}: one line"
            assert [(a.name, a.asname) for a in node.names] == [(node.names[0].name,) * 2]
            assert not node.names[0].name.startswith("_"), f"{stub}:{node.lineno}: public"
            seen += 1
    assert seen == sum(len(_public(name)) for name in PACKAGES)


def test_a_name_listed_twice_is_an_error_of_the_stub(tmp_path: Path) -> None:
    stub = tmp_path / "__init__.pyi"
    stub.write_text(
        "from .one import Thing as Thing\nfrom .two import Thing as Thing\n", encoding="utf-8"
    )
    with pytest.raises(ValueError, match=r"__init__\.pyi:2: Thing is listed twice"):
        _lazy.read_stub("pkg", str(stub), package=True)
    stub.write_text("from .one import A as A\nX: TypeAlias = A | list[int]\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"__init__\.pyi:2: a type alias must be a union"):
        _lazy.read_stub("pkg", str(stub), package=True)


def test_a_stub_reads_relative_absolute_and_submodule_imports(tmp_path: Path) -> None:
    stub = tmp_path / "__init__.pyi"
    stub.write_text(
        "from .one import A as A\n"
        "from ..other.two import B as B\n"
        "from pi_context.errors import C as C\n"
        "from . import sub as sub\n"
        "from .one import hidden\n"  # not the re-export form: not a name of the package
        "U: TypeAlias = A | B\n",
        encoding="utf-8",
    )
    homes, unions = _lazy.read_stub("top.pkg", str(stub), package=True)
    assert homes == {
        "A": ("top.pkg.one", "A"),
        "B": ("top.other.two", "B"),
        "C": ("pi_context.errors", "C"),
        "sub": ("top.pkg.sub", ""),
    }
    assert unions == {"U": ("A", "B")}


@pytest.mark.parametrize("name", PACKAGES)
def test_nothing_else_is_exported(name: str) -> None:
    """``__all__`` is the stub's names (in ruff's order, as the lists written by hand were),
    ``import *`` gives exactly those, ``dir()`` lists them, and once every name is read the
    package holds no other public value than its submodules."""
    package = importlib.import_module(name)
    public = _public(name)
    assert sorted(package.__all__) == sorted(public)
    assert package.__all__ == sorted(public, key=_lazy._ruff_order)
    star: dict[str, object] = {}
    exec(f"from {name} import *", star)
    assert set(star) - {"__builtins__"} == public
    assert public <= set(dir(package))
    extra = {
        attribute
        for attribute, value in vars(package).items()
        if not attribute.startswith("_") and not isinstance(value, ModuleType)
    }
    assert extra == public


@pytest.mark.parametrize("name", MODULES)
def test_a_module_exports_its_stub_names_with_its_own(name: str) -> None:
    module = importlib.import_module(name)
    assert _public(name) <= set(module.__all__)
    assert set(module.__all__) <= set(dir(module))


@pytest.mark.parametrize("name", PACKAGES + MODULES)
def test_an_unknown_name_is_an_attribute_error_naming_the_namespace(name: str) -> None:
    namespace = importlib.import_module(name)
    with pytest.raises(AttributeError, match=rf"^module '{name}' has no attribute 'no_such'$"):
        _ = namespace.no_such
    with pytest.raises(AttributeError, match="has no attribute '__no_such__'"):
        _ = namespace.__no_such__


PROBE = """
import json, sys
import pi_context.compaction as compaction
loaded = sorted(m for m in sys.modules if m.startswith("pi_context") or m == "ast")
probed = hasattr(compaction, "__wrapped__")
after_probe = "ast" in sys.modules
engine = compaction.engine
print(json.dumps({"loaded": loaded, "probed": probed, "after_probe": after_probe,
                  "engine": engine is sys.modules["pi_context.compaction.engine"],
                  "unlisted": "engine" in compaction.__all__}))
"""


def test_importing_a_package_reads_no_stub_and_loads_none_of_its_modules() -> None:
    """In a fresh interpreter: ``import pi_context.compaction`` loads the package and
    ``_lazy`` only (no stub is parsed: ``ast`` is not even imported), a probe of a dunder reads
    nothing either, and a submodule the stub does not list is still found by its name."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, timeout=120
    )
    report = json.loads(done.stdout)
    assert report == {
        "loaded": ["pi_context", "pi_context._lazy", "pi_context.compaction"],
        "probed": False,
        "after_probe": False,
        "engine": True,
        "unlisted": False,
    }


@pytest.mark.parametrize("name", ["pi_context", "pi_context.session", "pi_context.events"])
def test_help_shows_the_names(name: str) -> None:
    """``help()`` renders a namespace with the names its stub gives it."""
    import pydoc
    import re

    text = pydoc.plain(pydoc.render_doc(importlib.import_module(name)))
    shown = set(re.findall(r"^    (?:class |async )?(\w+)\b", text, flags=re.MULTILINE))
    assert sorted(_public(name) - shown) == []
