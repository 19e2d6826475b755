"""Conformance checks for compaction: token accounting, cut points, preparation, serialization,
file operations and branch summaries, against pi 1.6.0's goldens.

Each ``check_*`` function returns a list of mismatch descriptions (empty = conformant), so a
test can report every difference of a golden at once.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pi_context import _json
from pi_context.compaction.accounting import (
    calculate_context_tokens,
    estimate_context_tokens,
    estimate_projected_context_tokens,
    get_last_assistant_usage,
    should_compact,
)
from pi_context.compaction.branch import collect_branch_entries_from_tree, prepare_branch_entries
from pi_context.compaction.cut_points import find_cut_point, find_turn_start_index
from pi_context.compaction.file_ops import (
    FileOperations,
    compute_file_lists,
    format_file_operations,
)
from pi_context.compaction.prepare import prepare_compaction
from pi_context.compaction.serialize import serialize_conversation
from pi_context.resources.settings import CompactionSettings
from pi_context.session._load.scan import migrate_entries, scan_lines
from pi_context.session.entries import Entry
from pi_context.session.projection import (
    ProjectedEntry,
    convert_to_llm,
    entry_messages,
    projection_of_path,
)
from pi_context.session.tree import TreeIndex
from pi_context.testing import SequentialIds
from pi_context.tokens import estimate_tokens
from tests.conformance import registry
from tests.conformance.digests import same_rows, text_matches, well_formed

registry.claim(
    "units",
    "calculateContextTokens",
    "estimateContextTokens",
    "messageLists",
    "getLastAssistantUsage",
    "defaults",
    "rows",
    "messages",
    "steps",
    "computeFileLists",
    "formatFileOperations",
    "messagesJson",
    "sequences",
    "truncation",
    "oddArguments",
    "constants",
    "lists",
)
registry.claim(
    "session.target",
    "findCutPoint",
    "findTurnStartIndex",
    "prepareCompaction",
    "serialized",
    "estimateContextTokens",
    "estimateProjectedContextTokens",
    "lastAssistantUsage",
    "shouldCompact",
)
registry.claim("session", "branchSummaries")

EXPECTED_DIFFERENCES: dict[str, str] = {
    "units/serialize:oddArguments.args_null": (
        "pi throws a TypeError on a tool call whose arguments are null; we serialize `name()`"
    ),
    "units/serialize:constants.SUMMARIZATION_SYSTEM_PROMPT": (
        "our summarization system prompt is our own wording (same role and instructions)"
    ),
}


# -- digests -------------------------------------------------------------------------------


def message_rows(ids: list[str], messages: list[Any], s: LoadedSession) -> list[list[Any]]:
    """pi's harness rows: the source id and ``=`` only for a stored message used unchanged,
    else ``null`` and ``m:<first 16 hex of sha256(JSON.stringify(message))>``."""
    rows: list[list[Any]] = []
    for entry_id, message in zip(ids, messages, strict=True):
        entry = s.by_id.get(entry_id)
        stored = entry.message if entry is not None else None
        if stored is not None and stored is message:
            rows.append([s.ref(entry_id), message.get("role"), estimate_tokens(message), "="])
        else:
            text = _json.js_stringify(message)
            key = hashlib.sha256(well_formed(text).encode("utf-8")).hexdigest()[:16]
            rows.append([None, message.get("role"), estimate_tokens(message), f"m:{key}"])
    return rows


# -- units ---------------------------------------------------------------------------------


UNIT_NAMES = frozenset({"context_tokens", "should_compact", "file_ops", "serialize", "cut_points"})
"""The ``units/*`` goldens checked here (``estimate_tokens``/``timestamps``: tokens_checks)."""


def check_unit(case: str, golden: dict[str, Any]) -> list[str]:
    name = case.split("/", 1)[1]
    checker = _UNIT_CHECKS.get(name)
    return checker(golden) if checker else []


def _check_context_tokens(g: dict[str, Any]) -> list[str]:
    out: list[str] = []
    for name, row in g.get("calculateContextTokens", {}).items():
        got = calculate_context_tokens(row["usage"])
        if got != row["calculateContextTokens"]:
            out.append(f"calculateContextTokens[{name}]: {got} != {row['calculateContextTokens']}")
    for name, row in g.get("estimateContextTokens", {}).items():
        messages = g["messageLists"][name]
        got_e = estimate_context_tokens(messages).to_json()
        if got_e != row["estimateContextTokens"]:
            out.append(f"estimateContextTokens[{name}]: {got_e} != {row['estimateContextTokens']}")
    for name, expected in g.get("getLastAssistantUsage", {}).items():
        entries = [
            Entry.from_data(
                {"type": "message", "id": f"m{i}", "parentId": None, "message": message}
            )
            for i, message in enumerate(g["messageLists"][name])
        ]
        got_u = get_last_assistant_usage(entries)
        if got_u != expected:
            out.append(f"getLastAssistantUsage[{name}]: {got_u} != {expected}")
    return out


def _check_should_compact(g: dict[str, Any]) -> list[str]:
    out = []
    for tokens, window, reserve, enabled, expected in g.get("rows", []):
        settings = CompactionSettings(enabled=enabled, reserve_tokens=reserve)
        if should_compact(tokens, window, settings) != expected:
            out.append(f"shouldCompact({tokens}, {window}, {reserve}, {enabled}) != {expected}")
    return out


def _check_file_ops(g: dict[str, Any]) -> list[str]:
    out = []
    ops = FileOperations()
    steps = g.get("steps")
    for i, message in enumerate(g["messages"]):
        ops.add_message(message)
        if steps is not None and ops.to_json() != steps[i]:
            out.append(f"file ops after message {i}: {ops.to_json()} != {steps[i]}")
    read, modified = compute_file_lists(ops)
    if (
        "computeFileLists" in g
        and {"readFiles": read, "modifiedFiles": modified} != g["computeFileLists"]
    ):
        out.append(f"computeFileLists: {read}, {modified}")
    lists = {
        "empty": ([], []),
        "read_only": (["a", "b"], []),
        "modified_only": ([], ["m"]),
        "both": (read, modified),
    }
    for name, expected in g.get("formatFileOperations", {}).items():
        if name in lists and format_file_operations(*lists[name]) != expected:
            out.append(f"formatFileOperations[{name}]")
    return out


def _check_serialize(g: dict[str, Any]) -> list[str]:
    out = []
    messages = {name: _json.loads(text) for name, text in g.get("messagesJson", {}).items()}
    for name, seq in g.get("sequences", {}).items():
        msgs = [messages[m] for m in seq["messages"]]
        converted = convert_to_llm(msgs)
        if "serialized" in seq and serialize_conversation(converted) != seq["serialized"]:
            out.append(f"sequence {name}: serialized text differs")
    for row in g.get("truncation", []):
        message = {
            "role": "toolResult",
            "toolCallId": "t",
            "toolName": "bash",
            "content": [{"type": "text", "text": row["input"]}],
            "isError": False,
            "timestamp": 1,
        }
        got = serialize_conversation([message])
        if got != row["serialized"]:
            out.append(f"truncation {row['name']}: differs")
    for name, row in g.get("oddArguments", {}).items():
        message = {
            "role": "assistant",
            "content": [
                {"type": "toolCall", "id": "t", "name": "read", "arguments": row["arguments"]}
            ],
            "timestamp": 1,
        }
        if estimate_tokens(message) != row["estimateTokens"]:
            out.append(f"oddArguments[{name}]: estimateTokens")
        key = f"units/serialize:oddArguments.{name}"
        if "serialized" in row and serialize_conversation([message]) != row["serialized"]:
            out.append(f"oddArguments[{name}]: serialized")
        elif "error" in row and key not in EXPECTED_DIFFERENCES:
            out.append(f"oddArguments[{name}]: pi raised, no recorded difference")
    return out


def _items(entries: list[Entry]) -> list[ProjectedEntry]:
    return [ProjectedEntry(e, entry_messages(e)) for e in entries]


def _raw_tokens(item: Any) -> int:
    return sum(estimate_tokens(m) for m in item.messages)


def _check_cut_points(g: dict[str, Any]) -> list[str]:
    out = []
    for name, case in g.get("lists", {}).items():
        entries = [Entry.from_data(dict(e)) for e in case["entries"]]
        items = _items(entries)
        tokens = [_raw_tokens(i) for i in items]
        if tokens != case["entryTokens"]:
            out.append(f"{name}: entryTokens {tokens}")
        for start, end, keep, first, turn, split in case["findCutPointRows"]:
            if start >= end:
                continue  # pi indexes past the range here; nothing meaningful to compare
            cp = find_cut_point(items, start, end, keep, _raw_tokens)
            got = [cp.first_kept_index, cp.turn_start_index, cp.is_split_turn]
            if got != [first, turn, split]:
                out.append(
                    f"{name}: findCutPoint({start},{end},{keep}) {got} != {[first, turn, split]}"
                )
        got_ts = [find_turn_start_index(items, i, 0) for i in range(len(items))]
        if got_ts != case["findTurnStartIndex"]:
            out.append(f"{name}: findTurnStartIndex {got_ts}")
        for keep, expected in case["prepareCompaction"].items():
            prep = prepare_compaction(entries, CompactionSettings(keep_recent_tokens=int(keep)))
            if expected is None:
                if prep is not None:
                    out.append(f"{name}: prepareCompaction({keep}) expected none")
                continue
            if prep is None:
                out.append(f"{name}: prepareCompaction({keep}) returned none")
                continue
            got_p = {
                "firstKeptEntryId": prep.first_kept_entry_id,
                "tokensBefore": prep.tokens_before,
                "isSplitTurn": prep.is_split_turn,
                "messagesToSummarize": [m["role"] for m in prep.messages_to_summarize],
                "turnPrefixMessages": [m["role"] for m in prep.turn_prefix_messages],
                "previousSummary": prep.previous_summary,
            }
            if got_p != expected:
                out.append(f"{name}: prepareCompaction({keep}) {got_p} != {expected}")
    return out


_UNIT_CHECKS = {
    "context_tokens": _check_context_tokens,
    "should_compact": _check_should_compact,
    "file_ops": _check_file_ops,
    "serialize": _check_serialize,
    "cut_points": _check_cut_points,
}


# -- sessions ------------------------------------------------------------------------------


class LoadedSession:
    """A golden's session file as our reader sees it, with pi's ``#N`` id references."""

    def __init__(self, golden: dict[str, Any], root: Path) -> None:
        data = (root / golden["input"]["file"]).read_bytes()
        scan = scan_lines(data)
        entries: Sequence[Entry] = scan.entries
        self.ref_of: dict[str, str] = {}
        if golden.get("idsAreIndexRefs") and scan.header is not None:
            _, entries = migrate_entries(dict(scan.header), list(entries), SequentialIds())
            for index, entry in enumerate(entries, start=1):
                self.ref_of[entry.id] = f"#{index}"
        self.entries = entries
        self.tree = TreeIndex(entries)
        self.by_id = {e.id: e for e in entries}
        self.by_ref = {self.ref(e.id): e for e in entries}

    def ref(self, entry_id: str | None) -> str | None:
        if entry_id is None:
            return None
        return self.ref_of.get(entry_id, entry_id)

    def get(self, ref: str | None) -> Entry | None:
        return None if ref is None else self.by_ref.get(ref)


def check_target(golden: dict[str, Any], s: LoadedSession, target: dict[str, Any]) -> list[str]:
    out: list[str] = []
    leaf_ref = target["leaf"]
    leaf = s.get(leaf_ref)
    path = s.tree.path(leaf) if leaf is not None else []
    if leaf is None and leaf_ref is not None and s.entries:
        ctx_path = s.tree.path(s.entries[-1])  # pi falls back to the last entry
    else:
        ctx_path = path
    projection = projection_of_path(ctx_path)
    messages = projection.messages
    if "estimateContextTokens" in target:
        got = estimate_context_tokens(messages).to_json()
        if got != target["estimateContextTokens"]:
            out.append(f"estimateContextTokens {got} != {target['estimateContextTokens']}")
    if "estimateProjectedContextTokens" in target:
        got = estimate_projected_context_tokens(projection, path).to_json()
        if got != target["estimateProjectedContextTokens"]:
            out.append(
                f"estimateProjectedContextTokens {got} != {target['estimateProjectedContextTokens']}"
            )
    if "lastAssistantUsage" in target:
        usage = get_last_assistant_usage(path)
        expected = target["lastAssistantUsage"]
        got_u = (
            None if usage is None else {**usage, "contextTokens": calculate_context_tokens(usage)}
        )
        if got_u != expected:
            out.append(f"lastAssistantUsage {got_u} != {expected}")
    if "shouldCompact" in target:
        # pi's agent decides on the projected estimate (usage invalidated by a later compaction
        # or context edit falls back to chars/4), and so do the goldens
        tokens = estimate_projected_context_tokens(projection, path).tokens
        for window, expected in target["shouldCompact"].items():
            if should_compact(tokens, int(window), CompactionSettings()) != expected:
                out.append(f"shouldCompact[{window}] != {expected}")
    if "serialized" in target:
        text = serialize_conversation(convert_to_llm(messages))
        if not text_matches(target["serialized"], text):
            out.append("serialized transcript differs")
    items = _items(path)
    token_memo = {id(item): _raw_tokens(item) for item in items}  # large sessions: measure once

    def tokens_of(item: Any) -> int:
        return token_memo[id(item)]

    for row in target.get("findCutPoint", []):
        cp = find_cut_point(
            items, row["startIndex"], row["endIndex"], row["keepRecentTokens"], tokens_of
        )
        first_kept_id = (
            s.ref(items[cp.first_kept_index].entry.id) if cp.first_kept_index < len(items) else None
        )
        found: dict[str, Any] = {
            "firstKeptEntryIndex": cp.first_kept_index,
            "firstKeptEntryId": first_kept_id,
            "turnStartIndex": cp.turn_start_index,
            "isSplitTurn": cp.is_split_turn,
        }
        got_cut = [value for key, value in found.items() if key in row]
        exp = [row[key] for key in found if key in row]
        if got_cut != exp:
            out.append(
                f"findCutPoint {row['startIndex']},{row['endIndex']},{row['keepRecentTokens']}: {got_cut} != {exp}"
            )
    for row in target.get("findTurnStartIndex", []):
        got_t = find_turn_start_index(items, row["entryIndex"], row["startIndex"])
        if got_t != row["result"]:
            out.append(f"findTurnStartIndex {row}: {got_t}")
    done: dict[int, Any] = {}
    for row in target.get("prepareCompaction", []):
        keep = row["keepRecentTokens"]
        expected = row.get("result")
        if "sameAs" in row:
            expected = done[row["sameAs"]]
        done[keep] = expected
        out.extend(
            f"prepareCompaction({keep}): {m}"
            for m in _check_prepare(golden, s, path, keep, expected)
        )
    return out


def _check_prepare(
    golden: dict[str, Any], s: LoadedSession, path: list[Entry], keep: int, expected: Any
) -> list[str]:
    prep = prepare_compaction(path, CompactionSettings(keep_recent_tokens=keep))
    if expected is None:
        return [] if prep is None else [f"expected none, got cut at {prep.first_kept_entry_id}"]
    if prep is None:
        return ["returned none"]
    out = []
    scalar = {
        "firstKeptEntryId": s.ref(prep.first_kept_entry_id),
        "firstKeptPathIndex": prep.first_kept_path_index,
        "tokensBefore": prep.tokens_before,
        "isSplitTurn": prep.is_split_turn,
        "settings": prep.settings.to_json(),
    }
    for key, value in scalar.items():
        if key in expected and expected[key] != value:
            out.append(f"{key}: {value} != {expected[key]}")
    if "previousSummary" in expected:
        prev = expected["previousSummary"]
        if (prev is None) != (prep.previous_summary is None) or (
            prev is not None
            and prep.previous_summary is not None
            and not text_matches(prev, prep.previous_summary)
        ):
            out.append("previousSummary differs")
    rows = message_rows(prep.summarize_entry_ids, prep.messages_to_summarize, s)
    if "messagesToSummarize" in expected and not same_rows(expected["messagesToSummarize"], rows):
        out.append("messagesToSummarize differ")
    prefix_rows = message_rows(prep.turn_prefix_entry_ids, prep.turn_prefix_messages, s)
    if "turnPrefixMessages" in expected and not same_rows(
        expected["turnPrefixMessages"], prefix_rows
    ):
        out.append("turnPrefixMessages differ")
    for key, got_rows in (("messagesToSummarizeTokens", rows), ("turnPrefixTokens", prefix_rows)):
        if key in expected and expected[key] != sum(r[2] for r in got_rows):
            out.append(f"{key} differs")
    ops = expected.get("fileOps")
    if ops is not None:
        got_ops = _file_ops_json(prep.file_ops)
        if got_ops != ops:
            out.append(f"fileOps {got_ops} != {ops}")
    if "serializedHistory" in expected and not text_matches(
        expected["serializedHistory"], prep.serialized_history()
    ):
        out.append("serializedHistory differs")
    if "serializedTurnPrefix" in expected and not text_matches(
        expected["serializedTurnPrefix"], prep.serialized_turn_prefix()
    ):
        out.append("serializedTurnPrefix differs")
    return out


def _file_ops_json(file_ops: FileOperations) -> dict[str, Any]:
    read, modified = file_ops.lists()
    return {
        **file_ops.to_json(),
        "readFiles": read,
        "modifiedFiles": modified,
        "formatted": format_file_operations(read, modified),
    }


def check_branch_summary(s: LoadedSession, case: dict[str, Any]) -> list[str]:
    out: list[str] = []
    from_entry = s.get(case["from"])
    to_entry = s.get(case["to"])
    from_id = from_entry.id if from_entry else None
    to_id = to_entry.id if to_entry else case["to"]
    collected = collect_branch_entries_from_tree(s.tree, from_id, to_id)
    got_entries = [[s.ref(e.id), e.type] for e in collected.entries]
    if (
        "commonAncestorId" in case
        and s.ref(collected.common_ancestor_id) != case["commonAncestorId"]
    ):
        out.append(f"commonAncestorId {collected.common_ancestor_id} != {case['commonAncestorId']}")
    if "entries" in case and not same_rows(case["entries"], got_entries):
        out.append(f"entries {dump(got_entries)} != {dump(case['entries'])}")
        return out
    done: dict[int, Any] = {}
    for index, row in enumerate(case.get("prepare", [])):
        expected = done[row["sameAs"]] if "sameAs" in row else row
        done[index] = expected
        prepared = prepare_branch_entries(collected.entries, row["tokenBudget"])
        tag = f"budget {row['tokenBudget']}"
        if "messages" in expected:
            rows = message_rows(prepared.entry_ids, prepared.messages, s)
            if not same_rows(expected["messages"], rows):
                out.append(f"{tag}: messages {dump(rows)} != {dump(expected['messages'])}")
        if "totalTokens" in expected and prepared.total_tokens != expected["totalTokens"]:
            out.append(f"{tag}: totalTokens {prepared.total_tokens} != {expected['totalTokens']}")
        got_ops = _file_ops_json(prepared.file_ops)
        if "fileOps" in expected and got_ops != expected["fileOps"]:
            out.append(f"{tag}: fileOps {got_ops} != {expected['fileOps']}")
        if "serialized" in expected:
            text = serialize_conversation(convert_to_llm(prepared.messages))
            if not text_matches(expected["serialized"], text):
                out.append(f"{tag}: serialized differs")
    return out


def dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)[:400]
