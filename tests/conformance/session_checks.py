"""Conformance checks for session loading, migration, tree and projection against pi 1.6.0.

Each ``check_*`` function returns a list of mismatch descriptions (empty = conformant). Golden
values may be inlined (``full``), or long lists may be replaced by row digests
(``{sha256, n, ...}``, ``rows``/``digest`` detail levels); ``digests.same_rows`` accepts both.
A key absent from a golden is not checked (larger sessions' goldens leave out ``open``, the tree
and more). Ids
are raw entry ids or, for sessions migrated from v1 (``idsAreIndexRefs``), ``#N`` line refs.

Deliberate differences from pi are listed in :data:`EXPECTED_DIFFERENCES` (case → reason); a
check consults it and expects our behaviour instead of pi's. ``test_sessions.py`` verifies
that every listed difference is actually met, so the list cannot go stale.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from pathlib import Path
from typing import Any

from pi_context._json import js_stringify
from pi_context.errors import SessionFormatError, TreeError
from pi_context.session import Session, convert_to_llm, projection_of_path
from pi_context.session._load.scan import scan_lines
from pi_context.session.entries import Entry
from pi_context.testing import SequentialIds
from pi_context.tokens import estimate_tokens
from tests.conformance import registry
from tests.conformance.digests import same_rows

registry.claim(
    "session",
    "input",
    "detail",
    "lines",
    "load",
    "parse",
    "open",
    "idsAreIndexRefs",
    "migrate",
    "manager",
    "targets",
    "store",
)
registry.claim(
    "session.target",
    "leaf",
    "why",
    "pathLength",
    "thinkingLevel",
    "model",
    "contextEntries",
    "messages",
    "llmRoles",
    "projectionSourcesEqualContextEntries",
    "contextEqualsProjection",
)

# (what, reason). ``what`` names the golden field whose pi value we deliberately do not match.
EXPECTED_DIFFERENCES: dict[str, tuple[str, str]] = {
    "open.fileChanged": (
        "open",
        "pi 1.6.0 writes to a file it opens (final newline repair, header for an empty file, "
        "migration rewrite); reading here never modifies the file.",
    ),
    "target.missing-id": (
        "targets",
        "pi silently falls back to the last entry (projection) or an empty path (getBranch) for "
        "an unknown leaf id; we raise TreeError naming the id.",
    ),
}


EXERCISED: set[str] = set()
"""Keys of :data:`EXPECTED_DIFFERENCES` that some golden actually exercised."""


def _sha256_js(value: Any) -> str:
    """sha256 of ``JSON.stringify(value)`` as UTF-8 (how pi's harness digests)."""
    return hashlib.sha256(js_stringify(value).encode("utf-8")).hexdigest()


def message_key(message: Any) -> str:
    """The ``m:<key>`` of a synthesized or edited message in a golden's ``store``."""
    return _sha256_js(message)[:16]


class Loaded:
    """A golden, its input bytes, and our session for it (or the error we raised)."""

    def __init__(self, golden: dict[str, Any]) -> None:
        self.golden = golden
        self.path = registry.conformance_dir() / golden["input"]["file"]
        self.data = self.path.read_bytes()
        self.index_refs = bool(golden.get("idsAreIndexRefs"))
        self.session: Session | None = None
        self.error: Exception | None = None
        try:
            self.session = Session.open(self.path, ids=SequentialIds(), cwd="/")
        except SessionFormatError as exc:
            self.error = exc
        self._ref_of: dict[int, str] = {}
        self._entry_of_ref: dict[str, Entry] = {}
        if self.session is not None:
            for index, entry in enumerate(self.session.entries, start=1):
                ref = f"#{index}" if self.index_refs else entry.id
                self._ref_of[id(entry)] = ref
                self._entry_of_ref[ref] = entry

    def ref(self, entry: Entry | None) -> str | None:
        if entry is None:
            return None
        return self._ref_of.get(id(entry), entry.id)

    def ref_of_id(self, entry_id: str | None) -> str | None:
        if entry_id is None or self.session is None:
            return entry_id
        entry = self.session.get(entry_id)
        return self.ref(entry) if entry is not None else entry_id

    def id_of_ref(self, ref: str) -> str:
        entry = self._entry_of_ref.get(ref)
        if entry is None:
            return ref
        return entry.id


def _kind(entry: Entry | dict[str, Any]) -> str:
    data = entry.data if isinstance(entry, Entry) else entry
    kind = str(data.get("type"))
    message = data.get("message")
    if kind == "message" and isinstance(message, dict):
        return f"message:{message.get('role')}"
    return kind


def _differs(expected: dict[str, Any], key: str, got: Any) -> str | None:
    """``"key: got != expected"`` when the golden has ``key`` and it differs, else ``None``."""
    if key not in expected or expected[key] == got:
        return None
    return f"{key} {got!r:.300} != {expected[key]!r:.300}"


def _problems(expected: dict[str, Any], got: dict[str, Any]) -> list[str]:
    """Compare the keys of ``got`` that the golden has (absent keys are not checked)."""
    return [p for key, value in got.items() if (p := _differs(expected, key, value)) is not None]


def check_lines(loaded: Loaded) -> list[str]:
    expected = loaded.golden.get("lines")
    if expected is None:
        return []
    if not loaded.data:
        return [] if expected.get("physicalLines", 0) == 0 else ["empty file but lines expected"]
    scan = scan_lines(loaded.data, require_header=False)
    return _problems(
        expected,
        {
            "malformedLines": scan.malformed_lines,
            "blankLines": scan.blank_lines,
            "trailingNewline": scan.trailing_newline,
        },
    )


def check_load(loaded: Loaded) -> list[str]:
    expected = loaded.golden.get("load")
    if expected is None:
        return []
    session = loaded.session
    valid = session is not None and bool(loaded.data)
    if (problem := _differs(expected, "headerValid", valid)) is not None:
        return [problem]
    if not valid:
        return [] if expected.get("entries", 0) == 0 else ["invalid header but entries expected"]
    scan = scan_lines(loaded.data)
    problems = _problems(
        expected,
        {
            "entries": 1 + len(scan.entries),
            "kinds": dict(Counter(["session", *(_kind(e) for e in scan.entries)])),
        },
    )
    needs_repair = not scan.trailing_newline
    if "fileRepair" in expected and needs_repair != (expected["fileRepair"] is not None):
        problems.append("final-newline repair expectation differs")
    return problems


def check_parse(loaded: Loaded) -> list[str]:
    expected = loaded.golden.get("parse")
    if expected is None:
        return []
    if not loaded.data.strip():
        found = 0
        first = None
        kinds: dict[str, int] = {}
    else:
        scan = scan_lines(loaded.data, strip_bom=True, require_header=False)
        items: list[dict[str, Any] | Entry] = []
        if scan.header is not None:
            items.append(scan.header)
        items.extend(scan.entries)
        found = len(items)
        first = str(scan.header.get("type")) if scan.header is not None else None
        kinds = dict(Counter(_kind(e) for e in items))
    return _problems(expected, {"entries": found, "firstType": first, "kinds": kinds})


def check_open(loaded: Loaded, before: bytes) -> list[str]:
    problems: list[str] = []
    if loaded.path.read_bytes() != before:
        problems.append("opening modified the file")
    expected = loaded.golden.get("open")
    if expected is None:
        return problems
    if "error" in expected:
        if loaded.error is None:
            problems.append("pi refuses this file but we opened it")
        elif "not a valid pi session" not in str(loaded.error):
            problems.append(f"unexpected error text: {loaded.error}")
        return problems
    session = loaded.session
    if session is None:
        return [f"we refused a file pi opens: {loaded.error}"]
    last = session.entries[-1] if session.entries else None
    problems += _problems(
        expected,
        {
            "entryCount": len(session.tree.by_id),
            "leafIsLastEntry": session.leaf is last,
            "headerVersion": session.header.get("version"),
        },
    )
    if expected.get("fileChanged"):
        EXERCISED.add("open.fileChanged")  # pi changed the file; we did not (checked above)
    return problems


def check_migrate(loaded: Loaded) -> list[str]:
    expected = loaded.golden.get("migrate")
    session = loaded.session
    if expected is None or session is None:
        return []
    raw = scan_lines(loaded.data)
    before = raw.entries
    after = list(session.entries)
    pairs = list(zip(before, after, strict=True))
    got: dict[str, Any] = {
        "versionBefore": raw.header.get("version") if raw.header else None,
        "versionAfter": session.header.get("version"),
        "idsAssigned": sum(1 for a, b in pairs if a.id != b.id),
        "hookMessagesRenamed": sum(
            1
            for a, b in pairs
            if _kind(a) == "message:hookMessage" and _kind(b) == "message:custom"
        ),
        "customRoleAfter": sum(1 for b in after if _kind(b) == "message:custom"),
    }
    compactions = []
    for index, (a, b) in enumerate(pairs, start=1):
        if a.type != "compaction":
            continue
        first_kept = b.get("firstKeptEntryId")
        compactions.append(
            {
                "index": index,
                "firstKeptEntryIndexBefore": a.get("firstKeptEntryIndex"),
                "firstKeptEntryId": loaded.ref_of_id(first_kept) if first_kept else None,
                "hasFirstKeptEntryIndexAfter": "firstKeptEntryIndex" in b.data,
            }
        )
    got["compactions"] = compactions
    problems = _problems(expected, got)
    if expected.get("parentChainLinear") is not None:
        linear = all(b.parent_id == (after[i - 1].id if i else None) for i, b in enumerate(after))
        if linear != expected["parentChainLinear"]:
            problems.append("parent chain linearity differs")
    return problems


def _preorder_rows(loaded: Loaded, session: Session) -> list[list[Any]]:
    rows: list[list[Any]] = []
    for entry, depth in session.tree.preorder():
        row: list[Any] = [loaded.ref(entry), depth]
        label = session.label_of(entry.id)
        if label is not None:
            row.append(label)
        rows.append(row)
    return rows


def check_manager(loaded: Loaded) -> list[str]:
    expected = loaded.golden.get("manager")
    session = loaded.session
    if expected is None or session is None:
        return []
    ref = loaded.ref
    problems = _problems(
        expected,
        {
            "header": session.header,
            "entryCount": len(session.tree.by_id),
            "entries": len(session.entries),
            "leafId": ref(session.leaf),
            "leafType": session.leaf.type if session.leaf else None,
            "sessionName": session.name,
            "labels": {loaded.ref_of_id(k): v for k, v in session.labels.items()},
            "kinds": dict(Counter(_kind(e) for e in session.entries)),
        },
    )
    if "leaves" in expected:
        leaves = [ref(e) for e in session.leaves()]
        if not same_rows(expected["leaves"], leaves):
            problems.append(f"leaves {leaves!r:.300} != {expected['leaves']!r:.300}")
    if "treePreorder" in expected and not same_rows(
        expected["treePreorder"], _preorder_rows(loaded, session)
    ):
        problems.append("treePreorder differs")
    if (problem := _differs(expected, "treeRoots", len(session.roots()))) is not None:
        problems.append(problem)
    return problems


def _expected_message(loaded: Loaded, row: list[Any]) -> Any:
    source, _role, _tokens, ref = row
    if ref == "=":
        entry = loaded._entry_of_ref.get(source)
        return entry.data.get("message") if entry is not None else None
    return loaded.golden.get("store", {}).get("messages", {}).get(ref[2:], ...)


def check_target(loaded: Loaded, target: dict[str, Any]) -> list[str]:
    session = loaded.session
    assert session is not None
    why = target["why"]
    problems: list[str] = []
    leaf_ref = target["leaf"]
    if why == "missing-id":
        EXERCISED.add("target.missing-id")
        for call in (session.projection, session.branch_entries):
            try:
                call(leaf_ref)
            except TreeError as exc:
                if leaf_ref not in str(exc):
                    problems.append(f"TreeError does not name the id: {exc}")
            else:
                problems.append(f"{call.__name__}({leaf_ref!r}) did not raise TreeError")
        return problems
    leaf_id = loaded.id_of_ref(leaf_ref) if leaf_ref is not None else None
    if leaf_id is None:
        path: list[Entry] = []
    else:
        path = session.branch_entries(leaf_id)
    reference = projection_of_path(path)
    session.move_leaf(leaf_id)
    projection = session.stored_projection()  # identity with the stored messages is checked
    problems += _problems(
        target,
        {
            "pathLength": len(path),
            "thinkingLevel": projection.thinking_level,
            "model": projection.model,
        },
    )
    # "contextEqualsProjection" / "projectionSourcesEqualContextEntries" compare pi's two code
    # paths; ours are the incremental live projection and the from-scratch one.
    if projection.messages != reference.messages or [p.entry for p in projection.entries] != [
        p.entry for p in reference.entries
    ]:
        problems.append("live projection differs from projection_of_path")
    ctx = [[loaded.ref(p.entry), p.entry.type, len(p.messages)] for p in projection.entries]
    if "contextEntries" in target and not same_rows(target["contextEntries"], ctx):
        problems.append(f"contextEntries {ctx!r:.300} != {target['contextEntries']!r:.300}")
    rows: list[list[Any]] = []
    messages = []
    for p in projection.entries:
        stored = p.entry.data.get("message") if p.entry.type == "message" else None
        for message in p.messages:
            key = "=" if message is stored else f"m:{message_key(message)}"
            rows.append([loaded.ref(p.entry), message.get("role"), estimate_tokens(message), key])
            messages.append(message)
    expected_rows = target.get("messages")
    if expected_rows is None:
        pass
    elif isinstance(expected_rows, list):
        if len(expected_rows) != len(rows):
            problems.append(f"{len(rows)} messages != {len(expected_rows)}")
        for ours, theirs, message in zip(rows, expected_rows, messages, strict=False):
            if ours[:3] != theirs[:3]:
                problems.append(f"message row {ours[:3]} != {theirs[:3]}")
                continue
            want = _expected_message(loaded, theirs)
            if ours[3] != theirs[3]:
                problems.append(f"message {theirs[:2]} ref {ours[3]} != {theirs[3]}")
            elif want is not ... and message != want:
                problems.append(f"message {theirs[:2]} differs: {message!r:.200} != {want!r:.200}")
    elif not same_rows(expected_rows, rows):
        problems.append("message rows digest differs")
    roles = dict(Counter(m["role"] for m in convert_to_llm(messages)))
    if (problem := _differs(target, "llmRoles", roles)) is not None:
        problems.append(problem)
    return problems


def load_case(path: Path) -> tuple[Loaded, bytes]:
    golden = registry.load_golden(path)
    data = (registry.conformance_dir() / golden["input"]["file"]).read_bytes()
    return Loaded(golden), data
