"""The conformance runner on other folders of the same schema: partial, rows/digest, broken.

Held-out folders are run through this suite with ``PI_CONFORMANCE_DIR``. These tests build such
folders from the repository's public goldens in a temporary directory and run the suite on
them in a subprocess, exactly as a held-out run does: a partial folder runs what it holds, the
``rows`` and ``digest`` levels are compared as digests, and a wrong digest or a key nobody
interprets fails.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conformance import registry

REPO_ROOT = Path(__file__).resolve().parents[2]
SOURCE = registry.REPO_COPY

pytestmark = pytest.mark.skipif(
    registry.conformance_dir() != registry.REPO_COPY,
    reason="builds its folders from the repository's own goldens",
)

Edit = Callable[[dict[str, Any]], None]


def _index() -> dict[str, dict[str, Any]]:
    cases = json.loads((SOURCE / "goldens" / "index.json").read_text("utf-8"))["cases"]
    return {case["case"]: case for case in cases}


def build_folder(
    root: Path, cases: list[str], *, index: bool = True, edits: dict[str, Edit] | None = None
) -> Path:
    """A conformance folder holding ``cases`` (and their session inputs), optionally edited."""
    known = _index()
    listed = []
    for name in cases:
        entry = dict(known[name])
        data = (SOURCE / "goldens" / entry["file"]).read_bytes()
        golden = json.loads(data)
        if edits and name in edits:
            edits[name](golden)
            data = json.dumps(golden).encode("ascii")
        target = root / "goldens" / entry["file"]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        entry.update(bytes=len(data), sha256=hashlib.sha256(data).hexdigest())
        listed.append(entry)
        if golden.get("kind") == "session":
            source = root / golden["input"]["file"]
            source.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(SOURCE / golden["input"]["file"], source)
    if index:
        payload = {"piVersion": "1.6.0", "cases": listed}
        (root / "goldens" / "index.json").write_text(json.dumps(payload), "utf-8")
    return root


def run_suite(folder: Path) -> tuple[int, dict[str, str]]:
    """Run the conformance suite on ``folder``: (exit code, {test id: outcome})."""
    env = {**os.environ, "PI_CONFORMANCE_DIR": str(folder)}
    command = [
        sys.executable,
        "-m",
        "pytest",
        "tests/conformance",
        "-v",
        "-p",
        "no:cacheprovider",
        "--ignore",
        str(Path(__file__).relative_to(REPO_ROOT)),
    ]
    done = subprocess.run(
        command, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=600, check=False
    )
    found = re.finditer(r"^(tests/\S+::\S+) (PASSED|FAILED|ERROR|SKIPPED)", done.stdout, re.M)
    outcomes = {m.group(1): m.group(2) for m in found}
    assert outcomes, done.stdout[-3000:] + done.stderr[-3000:]
    return done.returncode, outcomes


def _ran(outcomes: dict[str, str], fragment: str) -> list[str]:
    return [test for test, outcome in outcomes.items() if fragment in test and outcome == "PASSED"]


def test_a_partial_folder_of_rows_and_digest_sessions_passes(tmp_path: Path) -> None:
    cases = [
        "sessions/seed7_branched_rows",
        "sessions/seed7_branched_digest",
        "sessions/tiny_crlf",
    ]
    code, outcomes = run_suite(build_folder(tmp_path, cases))
    failed = [test for test, outcome in outcomes.items() if outcome in ("FAILED", "ERROR")]
    assert not failed
    assert code == 0
    for case in cases:
        # loading, tree, targets (accounting, cut points, preparation) and branch summaries
        for test in ("test_session_golden[", "test_session_targets[", "test_branch_summaries["):
            assert _ran(outcomes, f"{test}{case}]"), f"{test}{case}] did not pass"


def test_a_units_only_folder_without_an_index_passes(tmp_path: Path) -> None:
    cases = [name for name in _index() if name.startswith("units/")]
    code, outcomes = run_suite(build_folder(tmp_path, cases, index=False))
    failed = [test for test, outcome in outcomes.items() if outcome in ("FAILED", "ERROR")]
    assert not failed
    assert code == 0
    assert _ran(outcomes, "test_unit_golden[units/serialize]")
    assert _ran(outcomes, "test_estimate_tokens_golden")


def _wrong_summarized_rows_digest(golden: dict[str, Any]) -> None:
    rows = golden["targets"][0]["prepareCompaction"][0]["result"]["messagesToSummarize"]
    assert isinstance(rows, dict), "the digest golden is expected to digest these rows"
    rows["sha256"] = "0" * 64


def _wrong_serialized_digest(golden: dict[str, Any]) -> None:
    serialized = golden["targets"][0]["serialized"]
    assert isinstance(serialized, dict)
    serialized["sha256"] = "f" * 64


def _unknown_key_and_level(golden: dict[str, Any]) -> None:
    golden["detail"] = "huge"
    golden["newFinding"] = {"x": 1}


def test_wrong_digests_and_unknown_parts_fail(tmp_path: Path) -> None:
    edits: dict[str, Edit] = {
        "sessions/seed7_tool_heavy_digest": _wrong_summarized_rows_digest,
        "sessions/seed7_tool_heavy_rows": _wrong_serialized_digest,
        "sessions/tiny_crlf": _unknown_key_and_level,
    }
    code, outcomes = run_suite(build_folder(tmp_path, list(edits), edits=edits))
    failed = {test.split("::")[1] for test, outcome in outcomes.items() if outcome == "FAILED"}
    assert code == 1
    assert failed == {
        "test_session_targets[sessions/seed7_tool_heavy_digest]",
        "test_session_targets[sessions/seed7_tool_heavy_rows]",
        "test_every_key_is_claimed[sessions/tiny_crlf]",
        "test_session_golden[sessions/tiny_crlf]",
    }
