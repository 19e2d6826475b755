"""``pictx compact FILE`` and ``pictx session compaction FILE ID``.

``compact`` appends a compaction to a session file and reports the preparation it used. With
``--dry-run`` it only reports what it would summarize and keep: nothing is masked or written,
and ``tokensAfter`` counts the system-prompt snapshot and the kept messages, not the summary.
Without ``--model`` the offline summarizer writes the summary, so the command works with no
provider configured. ``session compaction`` shows what an existing compaction replaced: the
summarized entries next to the summary.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import click

from pi_context import _json
from pi_context.cli.terminal_text import echo, json_for_terminal
from pi_context.compaction.accounting import estimate_kept_context_tokens
from pi_context.compaction.engine import Compactor
from pi_context.compaction.events import BeforeCompact
from pi_context.compaction.prepare import (
    NOTHING_TO_COMPACT,
    CompactionPreparation,
    require_preparation,
)
from pi_context.errors import CompactionError, ProviderError, SessionError
from pi_context.messages import text_of
from pi_context.model import Model, ModelInfo
from pi_context.resources.settings import (
    CompactionSettings,
    RetrySettings,
    compaction_settings_for,
    load_settings,
    retry_settings_for,
)
from pi_context.session import Entry, Session
from pi_context.session.projection import entry_messages
from pi_context.tokens import estimate_tokens

__all__ = ["compact_command", "compaction_report", "show_compaction_command"]

_FILE = click.Path(exists=True, dir_okay=False, path_type=Path)


def _print_json(value: Any) -> None:
    sys.stdout.buffer.write(json_for_terminal(_json.dumps(value).decode("utf-8")).encode() + b"\n")
    sys.stdout.flush()


def _unique(ids: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(ids))


def _resolve_model(spec: str) -> Model:
    """The model for ``--model SPEC`` (``scripted:<file>`` or the provider registry)."""
    from pi_context.cli.app.app import resolve_cli_model

    model = resolve_cli_model(spec)
    if model is None:  # pragma: no cover - a spec always resolves or raises
        raise ProviderError(f"Unknown model '{spec}'")
    return model


def _dry_run_tokens_after(prep: CompactionPreparation, session: Session) -> int:
    """Estimated context without the (not yet written) summary."""
    projection = session.stored_projection()
    start = prep.cut.first_kept_index if prep.cut is not None else len(projection.entries)
    return estimate_kept_context_tokens(projection, start)


def _session_model(session: Session) -> ModelInfo | None:
    """The known model the session's branch last used (its window sizes the settings)."""
    recorded = session.projection().model
    if recorded is None:
        return None
    from pi_context.providers.models import load_registry

    entry = load_registry().find(recorded["provider"], recorded["modelId"])
    return entry.info if entry is not None else None


def _why_nothing(
    reason: str, session: Session, settings: CompactionSettings, model: ModelInfo | None
) -> str:
    """``reason`` with the numbers behind it: the branch's size and what is kept verbatim."""
    if reason != NOTHING_TO_COMPACT:
        return reason
    size = sum(estimate_tokens(m) for m in session.projection().messages)
    source = (
        f"sized for {model.provider}/{model.id}'s {model.context_window}-token window"
        if model is not None
        else "no model known for this session; pass --model to size it"
    )
    return (
        f"{reason}: the branch holds about {size} tokens and the newest "
        f"{settings.keep_recent_tokens} are kept verbatim (keepRecentTokens, {source}); "
        "lower it with --keep-recent-tokens N"
    )


def compaction_report(prep: CompactionPreparation, tokens_after: int) -> dict[str, Any]:
    """The JSON report of ``pictx compact`` (same keys for dry runs and real runs)."""
    read, modified = prep.file_ops.lists()
    return {
        "firstKeptEntryId": prep.first_kept_entry_id,
        "tokensBefore": prep.tokens_before,
        "tokensAfter": tokens_after,
        "isSplitTurn": prep.is_split_turn,
        "messagesToSummarize": _unique(prep.summarize_entry_ids),
        "turnPrefixMessages": _unique(prep.turn_prefix_entry_ids),
        "readFiles": read,
        "modifiedFiles": modified,
        "serializedHistory": prep.serialized_history(),
        "serializedTurnPrefix": prep.serialized_turn_prefix(),
    }


@click.command("compact")
@click.argument("file", type=_FILE)
@click.option("--instructions", "instructions", default=None, help="Extra focus for the summary.")
@click.option(
    "--keep-recent-tokens",
    type=click.IntRange(min=0),
    default=None,
    help="Tokens of recent context to keep verbatim (default: settings, 20000, at most a tenth of the window of the model).",
)
@click.option("--offline", is_flag=True, help="Use the offline summarizer (no model).")
@click.option(
    "--model",
    "model_spec",
    default=None,
    help="Summarize with this model (e.g. scripted:replies.json).",
)
@click.option("--dry-run", is_flag=True, help="Only report what would be summarized and kept.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def compact_command(
    file: Path,
    instructions: str | None,
    keep_recent_tokens: int | None,
    offline: bool,
    model_spec: str | None,
    dry_run: bool,
    as_json: bool,
) -> None:
    """Compact the current branch of a session FILE (appends a compaction entry)."""
    if offline and model_spec:
        raise click.UsageError("--offline and --model exclude each other")
    data = load_settings().data
    model = None if offline or model_spec is None else _resolve_model(model_spec)
    retry: RetrySettings = retry_settings_for(data)
    with Session.open(file) as session:
        for problem in session.problems:
            echo(f"pictx: warning: {problem}", err=True)
        # the agent's window-aware settings: those of --model, else of the session's model
        target = model.info if model is not None else _session_model(session)
        settings: CompactionSettings = compaction_settings_for(
            data,
            target.provider if target is not None else None,
            target.id if target is not None else None,
        )
        if target is not None:
            settings = settings.fit_to_window(target.context_window)
        if keep_recent_tokens is not None:
            settings = settings.with_keep_recent(keep_recent_tokens)
        if model is None:
            settings = replace(settings, summarizer="offline")
        if dry_run:
            try:
                prep = require_preparation(
                    session.branch_view(), settings, projection=session.stored_projection()
                )
            except CompactionError as exc:
                raise CompactionError(_why_nothing(str(exc), session, settings, target)) from exc
            report = compaction_report(prep, _dry_run_tokens_after(prep, session))
        else:
            # report the preparation the compactor used (after any masking), not a second one
            used: list[CompactionPreparation] = []

            def keep_preparation(payload: BeforeCompact) -> None:
                used.append(payload.preparation)

            compactor = Compactor(
                session, model, settings, retry=retry, before_compact=keep_preparation
            )
            result = asyncio.run(compactor.compact(instructions))
            assert result is not None  # manual compaction raises on failure
            report = compaction_report(used[-1], result.estimated_tokens_after)
            report["entryId"] = result.entry.id
            report["offline"] = result.offline
    if as_json:
        _print_json(report)
        return
    verb = "would keep" if dry_run else "kept"
    echo(
        f"{'dry run: ' if dry_run else ''}summarized {len(report['messagesToSummarize'])} entries"
        f"{' (split turn)' if report['isSplitTurn'] else ''}; {verb} from "
        f"{report['firstKeptEntryId']}; tokens {report['tokensBefore']} -> {report['tokensAfter']}"
        f"{' + the summary' if dry_run else ''}"
    )
    if not dry_run:
        echo(f"appended compaction {report['entryId']}")


def _entry_line(entry: Entry) -> str:
    messages = entry_messages(entry)
    if not messages:
        return f"{entry.id}  {entry.type}"
    message: dict[str, Any] = dict(messages[-1])
    role = message.get("role")
    if role == "compactionSummary" or role == "branchSummary":
        text = str(message.get("summary", ""))
    elif role == "bashExecution":
        text = "$ " + str(message.get("command", ""))
    else:
        text = text_of(message.get("content"), " ")
        if not text and role == "assistant":
            calls = [
                b.get("name") for b in message.get("content", []) if b.get("type") == "toolCall"
            ]
            text = "tool calls: " + ", ".join(str(c) for c in calls)
    flat = " ".join(text.split())
    if len(flat) > 90:
        flat = flat[:89] + "…"
    return f"{entry.id}  {role:<17} {flat}"


def _replaced_entries(session: Session, compaction: Entry) -> tuple[list[Entry], list[Entry]]:
    """(summarized entries, kept entries) of a compaction on its own path."""
    path = session.branch_entries(compaction.id)[:-1]
    first_kept = compaction.get("firstKeptEntryId")
    start = 0
    for index in range(len(path) - 1, -1, -1):
        if path[index].type == "compaction":
            previous = path[index]
            prev_kept = previous.get("firstKeptEntryId")
            start = next((i for i, e in enumerate(path) if e.id == prev_kept), index + 1)
            if prev_kept == previous.id:
                start = index + 1
            break
    cut = next((i for i, e in enumerate(path) if e.id == first_kept), len(path))
    summarized = [e for e in path[start:cut] if e.type != "compaction"]
    return summarized, path[cut:]


@click.command("compaction")
@click.argument("file", type=_FILE)
@click.argument("entry_id")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def show_compaction_command(file: Path, entry_id: str, as_json: bool) -> None:
    """Show what compaction ENTRY_ID of FILE replaced: the summarized entries and the summary."""
    with Session.open(file) as session:
        entry = session.get(entry_id)
        if entry is None:
            raise SessionError(f"no entry with id {entry_id!r}", path=file)
        if entry.type != "compaction":
            raise SessionError(f"entry {entry_id} is a {entry.type}, not a compaction", path=file)
        summarized, kept = _replaced_entries(session, entry)
        tokens = sum(estimate_tokens(m) for e in summarized for m in entry_messages(e))
        data = entry.data
        if as_json:
            _print_json(
                {
                    "id": entry.id,
                    "summary": data.get("summary"),
                    "firstKeptEntryId": data.get("firstKeptEntryId"),
                    "tokensBefore": data.get("tokensBefore"),
                    "fromHook": data.get("fromHook"),
                    "details": data.get("details"),
                    "summarizedEntries": [
                        {"id": e.id, "type": e.type, "role": e.role} for e in summarized
                    ],
                    "summarizedTokens": tokens,
                    "keptEntries": [e.id for e in kept],
                }
            )
            return
        echo(
            f"compaction {entry.id}: {len(summarized)} entries (~{tokens} tokens) summarized, "
            f"kept from {data.get('firstKeptEntryId')}, tokensBefore {data.get('tokensBefore')}"
        )
        echo("\n== summarized entries ==")
        for item in summarized:
            echo(_entry_line(item))
        echo("\n== summary ==")
        echo(str(data.get("summary", "")))
