"""The generated project the workload works on: a Python package with a test runner.

``inventory/*.py`` hold plausible code (functions with docstrings, branches, comments);
``run_tests.py`` is a real script whose output depends on the files: a function with a known
bug fails until its fix marker is present. Everything is derived from the seed, so every
contender starts from the same bytes.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

__all__ = ["MODULES", "Bug", "Project", "generate_project"]

MODULES = (
    "models",
    "storage",
    "pricing",
    "orders",
    "shipping",
    "reports",
    "validation",
    "events",
    "search",
    "accounts",
)
_VERBS = (
    "load",
    "save",
    "compute",
    "apply",
    "check",
    "merge",
    "split",
    "format",
    "resolve",
    "sync",
)
_NOUNS = (
    "item",
    "order",
    "price",
    "batch",
    "record",
    "customer",
    "invoice",
    "stock",
    "route",
    "ledger",
    "discount",
    "warehouse",
)
_FIELDS = ("sku", "quantity", "unit_price", "currency", "status", "created_at", "owner", "region")
_WORDS = (
    "the value is normalised before it is stored",
    "callers rely on the ordering of the result",
    "an empty input yields an empty result",
    "this mirrors the behaviour of the legacy importer",
    "rounding follows the currency's minor unit",
    "missing fields fall back to the defaults",
    "the lookup is case-insensitive",
    "records without an owner are skipped",
)

RUNNER = '''"""Run the project's checks: python3 run_tests.py [module ...]"""
import pathlib
import sys

BUGS = {bugs!r}


def main(argv):
    root = pathlib.Path(__file__).parent / "inventory"
    wanted = argv or sorted(p.stem for p in root.glob("*.py") if p.stem != "__init__")
    failed = passed = 0
    for module in wanted:
        path = root / (module + ".py")
        if not path.exists():
            print("ERROR: no module named inventory." + module)
            failed += 1
            continue
        text = path.read_text()
        names = [line.split("(")[0][4:] for line in text.splitlines() if line.startswith("def ")]
        dots = []
        for name in names:
            bug = BUGS.get(module + "." + name)
            if bug and ("# fixed: " + bug) not in text:
                failed += 1
                dots.append("F")
                print()
                print("FAILED tests/test_%s.py::test_%s" % (module, name))
                print("    def test_%s():" % name)
                print("        result = %s.%s(SAMPLE_%s)" % (module, name, bug.replace("-", "_")))
                print(">       assert result == EXPECTED_%s" % bug.replace("-", "_"))
                print("E       AssertionError: %s returned a stale value (%s)" % (name, bug))
                print("E         at inventory/%s.py, in %s" % (module, name))
            else:
                passed += 1
                dots.append(".")
        print("tests/test_%s.py %s" % (module, "".join(dots)))
    print("=" * 20 + " %d passed, %d failed " % (passed, failed) + "=" * 20)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
'''


@dataclass(frozen=True, slots=True)
class Bug:
    id: str
    module: str
    function: str


@dataclass(slots=True)
class Project:
    files: dict[str, str]
    functions: dict[str, list[str]]
    """Function names per module, in file order."""
    bugs: list[Bug]


def _function(rng: random.Random, name: str) -> list[str]:
    field = rng.choice(_FIELDS)
    other = rng.choice(_FIELDS)
    lines = [
        f"def {name}(records, *, strict=False, limit=None):",
        f'    """{name.replace("_", " ").capitalize()}: {rng.choice(_WORDS)}.',
        "",
        f"    Each record is a mapping; {rng.choice(_WORDS)}.",
        '    """',
        "    result = []",
        "    for index, record in enumerate(records):",
        "        if limit is not None and index >= limit:",
        "            break",
        f'        value = record.get("{field}")',
        "        if value is None:",
        "            if strict:",
        f'                raise ValueError("record %d has no {field}" % index)',
        "            continue",
    ]
    for _ in range(rng.randint(1, 6)):
        kind = rng.randrange(4)
        if kind == 0:
            lines.append(f"        # {rng.choice(_WORDS)}")
        elif kind == 1:
            lines.append(f'        value = _normalise(value, record.get("{other}"))')
        elif kind == 2:
            lines += [
                f'        if record.get("{other}") == "{rng.choice(_NOUNS)}":',
                f"            value = value * {rng.randint(2, 97)} // {rng.randint(2, 9)}",
            ]
        else:
            lines.append(f'        record["{other}"] = str(value).strip().lower()')
    lines += ["        result.append(value)", "    return result", "", ""]
    return lines


def generate_project(rng: random.Random) -> Project:
    """The package, its runner and a README; 3 bugs per module wait to be fixed."""
    files: dict[str, str] = {}
    functions: dict[str, list[str]] = {}
    bugs: list[Bug] = []
    for module in MODULES:
        count = rng.randint(18, 55)
        names: list[str] = []
        while len(names) < count:
            name = f"{rng.choice(_VERBS)}_{rng.choice(_NOUNS)}_{rng.randint(2, 99)}"
            if name not in names:
                names.append(name)
        lines = [
            f'"""inventory.{module}: part of the inventory service."""',
            "",
            "from inventory.models import _normalise" if module != "models" else "",
            "",
            "",
        ]
        if module == "models":
            lines += [
                "def _normalise(value, hint=None):",
                '    """Strip strings; numbers stay as they are."""',
                "    return value.strip() if isinstance(value, str) else value",
                "",
                "",
            ]
        for name in names:
            lines += _function(rng, name)
        files[f"inventory/{module}.py"] = "\n".join(lines).rstrip() + "\n"
        functions[module] = names
        for k, name in enumerate(rng.sample(names, 3)):
            bugs.append(Bug(f"INV-{module[:3].upper()}{k + 1}", module, name))
    files["inventory/__init__.py"] = '"""The inventory service."""\n'
    runner_bugs = {f"{b.module}.{b.function}": b.id for b in bugs}
    files["run_tests.py"] = RUNNER.format(bugs=runner_bugs)
    files["README.md"] = (
        "# inventory\n\nA small inventory service. Run the checks with `python3 run_tests.py`.\n"
        "Modules: " + ", ".join(MODULES) + ".\n"
    )
    files["AGENTS.md"] = (
        "# Working on inventory\n\n- Run `python3 run_tests.py <module>` after every change.\n"
        "- Keep functions small; document behaviour in the docstring.\n"
    )
    return Project(files, functions, bugs)
