"""Which parts of pi's goldens this suite interprets.

Each checker module claims the keys it checks with :func:`claim`. ``test_coverage.py`` fails on
any key of any golden found in the conformance folder that nobody claimed, so a golden the suite
cannot interpret fails loudly instead of being skipped.

Scopes: ``<kind>`` for a golden's top-level keys (``session``, ``resources``, ``system_prompt``,
``units``), ``session.target`` for the keys of a session golden's ``targets[]`` items.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

CLAIMS: dict[str, set[str]] = {}

REPO_COPY = Path(__file__).resolve().parent.parent / "data" / "conformance"
# Keys every golden carries that describe it rather than pi's behaviour.
DESCRIPTIVE_KEYS = {"piVersion", "case", "kind", "description"}


def claim(scope: str, *keys: str) -> None:
    CLAIMS.setdefault(scope, set()).update(keys)


def conformance_dir() -> Path:
    """The conformance folder: ``$PI_CONFORMANCE_DIR`` or the copy in this repository."""
    return Path(os.environ.get("PI_CONFORMANCE_DIR") or REPO_COPY)


def golden_index() -> list[dict[str, Any]]:
    """``goldens/index.json``'s cases; without an index, every golden found under ``goldens/``.

    A folder may hold any subset of the groups (only ``sessions/``, only ``units/``, ...): the
    suite runs what is there.
    """
    root = conformance_dir() / "goldens"
    index = root / "index.json"
    if index.is_file():
        with index.open(encoding="utf-8") as f:
            cases: list[dict[str, Any]] = json.load(f)["cases"]
        return cases
    found = []
    for path in sorted(root.rglob("*.json")):
        golden = load_golden(path)
        file = path.relative_to(root).as_posix()
        found.append({"case": golden["case"], "kind": golden["kind"], "file": file})
    return found


def find_golden(case: str) -> Path | None:
    """The path of golden ``case`` in the conformance folder, or ``None`` when it has none."""
    for name, path in goldens():
        if name == case:
            return path
    return None


def goldens(kind: str | None = None, prefix: str | None = None) -> Iterator[tuple[str, Path]]:
    """(case, path) for every golden in the index, optionally filtered by kind or case prefix."""
    root = conformance_dir() / "goldens"
    for case in golden_index():
        if kind is not None and case["kind"] != kind:
            continue
        if prefix is not None and not case["case"].startswith(prefix):
            continue
        yield case["case"], root / case["file"]


def load_golden(path: Path) -> dict[str, Any]:
    with path.open(encoding="utf-8") as f:
        data: dict[str, Any] = json.load(f)
    return data
