"""Every part of every golden must be claimed by a checker module, or this test fails.

Checker modules are the ``*_checks.py`` files beside this one; importing them registers their
claims (see ``registry.claim``). A golden with a key nobody interprets therefore fails here
instead of being skipped silently.
"""

from __future__ import annotations

import hashlib
import importlib
from pathlib import Path

import pytest

from tests.conformance import registry

for _module in sorted(Path(__file__).parent.glob("*_checks.py")):
    importlib.import_module(f"tests.conformance.{_module.stem}")

ALL = [(case["case"], case["kind"], case["file"]) for case in registry.golden_index()]


def test_index_is_not_empty() -> None:
    assert ALL, f"no goldens in {registry.conformance_dir()}"


@pytest.mark.parametrize(("case", "kind", "file"), ALL, ids=[c for c, _, _ in ALL])
def test_every_key_is_claimed(case: str, kind: str, file: str) -> None:
    golden = registry.load_golden(registry.conformance_dir() / "goldens" / file)
    claimed = registry.CLAIMS.get(kind, set()) | registry.DESCRIPTIVE_KEYS
    unclaimed = sorted(set(golden) - claimed)
    assert not unclaimed, f"{case}: no checker interprets top-level keys {unclaimed}"
    if kind == "session":
        target_claims = registry.CLAIMS.get("session.target", set())
        for target in golden.get("targets", []):
            missing = sorted(set(target) - target_claims)
            assert not missing, f"{case} target {target.get('why')}: unclaimed keys {missing}"


def test_index_lists_every_golden_as_it_is() -> None:
    """The index and the files agree: none missing, none unlisted (an unlisted golden would
    silently not run), sizes and hashes as recorded."""
    root = registry.conformance_dir() / "goldens"
    on_disk = {p.relative_to(root).as_posix() for p in root.rglob("*.json")} - {"index.json"}
    listed = {case["file"] for case in registry.golden_index()}
    assert listed == on_disk, (
        f"unlisted {sorted(on_disk - listed)}, missing {sorted(listed - on_disk)}"
    )
    for case in registry.golden_index():
        data = (root / case["file"]).read_bytes()
        if "sha256" in case:
            assert hashlib.sha256(data).hexdigest() == case["sha256"], f"{case['file']} changed"
        if "bytes" in case:
            assert len(data) == case["bytes"], f"{case['file']} size differs from the index"
        golden = registry.load_golden(root / case["file"])
        assert (golden.get("case"), golden.get("kind")) == (case["case"], case["kind"]), case


SESSIONS = [(case, file) for case, kind, file in ALL if kind == "session"]


@pytest.mark.parametrize(("case", "file"), SESSIONS, ids=[c for c, _ in SESSIONS])
def test_session_input_is_the_file_pi_read(case: str, file: str) -> None:
    golden = registry.load_golden(registry.conformance_dir() / "goldens" / file)
    source = registry.conformance_dir() / golden["input"]["file"]
    assert source.is_file(), f"{case}: input {golden['input']['file']} is missing"
    if "sha256" in golden["input"]:
        digest = hashlib.sha256(source.read_bytes()).hexdigest()
        assert digest == golden["input"]["sha256"], f"{case}: input differs from what pi read"
