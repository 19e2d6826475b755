"""What the code imports is declared in pyproject.toml, and what is declared is imported.

A fresh ``pip install -e '.[dev,local]'`` must give every module the package imports; a module
only present because another package happened to pull it in breaks the day that package
changes its own dependencies.
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "src" / "pi_context"


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _declared() -> tuple[set[str], set[str]]:
    """(core dependencies, core plus the optional extras the package's modules import: the
    ``local`` model, the three framework integrations and the PostgreSQL store), as normalized
    distribution names."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]

    def names(specs: list[str]) -> set[str]:
        return {_normal(re.split(r"[<>=!~ \[;]", spec, maxsplit=1)[0]) for spec in specs}

    core = names(project["dependencies"])
    extras = project["optional-dependencies"]
    optional = ("local", "openai-agents", "pydantic-ai", "langchain", "postgres")
    return core, core.union(*(names(extras[name]) for name in optional))


def _imported_top_modules() -> set[str]:
    found: set[str] = set()
    for path in SOURCE.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.split(".")[0])
    return {m for m in found if m not in sys.stdlib_module_names and m != "pi_context"}


def _distributions_of(modules: set[str]) -> dict[str, set[str]]:
    owners = packages_distributions()
    return {m: {_normal(d) for d in owners.get(m, [])} for m in modules}


def test_every_imported_module_comes_from_a_declared_distribution() -> None:
    _, declared = _declared()
    undeclared = {
        module: sorted(dists)
        for module, dists in _distributions_of(_imported_top_modules()).items()
        if not dists & declared
    }
    assert undeclared == {}


def test_every_core_dependency_is_imported_by_the_package() -> None:
    core, _ = _declared()
    used = set().union(*_distributions_of(_imported_top_modules()).values())
    assert sorted(core - used) == []
