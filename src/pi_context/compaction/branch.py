"""Branch summaries: what a user leaves behind when moving to another point of the tree.

:func:`collect_branch_entries` gathers the entries between the old leaf and the deepest common
ancestor with the target; :func:`prepare_branch_entries` turns them into messages newest-first
within a token budget (a summary entry that overflows is still kept while the total is under
90% of the budget, as pi does); :func:`generate_branch_summary` asks a model (or the offline
summarizer) for the summary; :func:`plan_navigation` and :func:`complete_navigation` are where the
leaf goes and the ``branch_summary`` entry is appended (where pi puts it), and
:func:`summarize_branch` runs the three. The agent session's ``navigate`` runs the same steps
with the extension hooks between them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from pi_context.compaction.file_ops import FileOperations, format_file_operations
from pi_context.compaction.prompts import BRANCH_PREAMBLE, branch_prompt
from pi_context.compaction.retry_events import SummarizationRetryEvent
from pi_context.compaction.serialize import serialize_conversation
from pi_context.compaction.summarize import fit_summary_prompt, request_summary
from pi_context.errors import CompactionError, TreeError
from pi_context.messages import AgentMessage, ThinkingLevel, Usage, text_of
from pi_context.model import Model
from pi_context.resources.settings import DEFAULT_RESERVE_TOKENS, RetrySettings
from pi_context.session.entries import Entry
from pi_context.session.projection import (
    context_edits_by_target,
    convert_to_llm,
    entry_messages,
    js_date_ms,
    project_entry,
)
from pi_context.session.store import Session
from pi_context.tokens import estimate_tokens

if TYPE_CHECKING:
    from pi_context.session.store import Session
    from pi_context.session.tree import TreeIndex

__all__ = [
    "NO_CONTENT_SUMMARY",
    "BranchCollection",
    "BranchPreparation",
    "BranchSummaryResult",
    "NavigationPlan",
    "branch_entry_message",
    "collect_branch_entries",
    "collect_branch_entries_from_tree",
    "complete_navigation",
    "generate_branch_summary",
    "plan_navigation",
    "prepare_branch_entries",
    "summarize_branch",
]

NO_CONTENT_SUMMARY = "No content to summarize"
_DEFAULT_WINDOW = 128000


@dataclass
class BranchCollection:
    entries: list[Entry]
    common_ancestor_id: str | None


@dataclass
class BranchPreparation:
    messages: list[AgentMessage]
    entry_ids: list[str]
    file_ops: FileOperations
    total_tokens: int


@dataclass
class BranchSummaryResult:
    summary: str
    usage: Usage | None = None
    read_files: list[str] = field(default_factory=list)
    modified_files: list[str] = field(default_factory=list)
    offline: bool = False

    @property
    def details(self) -> dict[str, list[str]]:
        return {"readFiles": self.read_files, "modifiedFiles": self.modified_files}


def collect_branch_entries_from_tree(
    tree: TreeIndex, old_leaf_id: str | None, target_id: str | None
) -> BranchCollection:
    """pi's ``collectEntriesForBranchSummary`` over a tree index."""
    if old_leaf_id is None:
        return BranchCollection([], None)
    old_leaf = tree.get(old_leaf_id)
    old_ids = {e.id for e in tree.path(old_leaf)} if old_leaf is not None else set()
    target = tree.get(target_id) if target_id is not None else None
    target_path = tree.path(target) if target is not None else []
    ancestor: str | None = None
    for entry in reversed(target_path):
        if entry.id in old_ids:
            ancestor = entry.id
            break
    collected: list[Entry] = []
    current = old_leaf
    seen = 0
    while current is not None and current.id != ancestor:
        collected.append(current)
        seen += 1
        if seen > len(tree.entries):  # pragma: no cover - cycles are broken on load
            raise TreeError(f"parent cycle through entry {current.id}")
        current = tree.parent_of(current)
    collected.reverse()
    return BranchCollection(collected, ancestor)


def collect_branch_entries(
    session: Session, old_leaf_id: str | None, target_id: str
) -> BranchCollection:
    """Entries of the branch being left when moving from ``old_leaf_id`` to ``target_id``."""
    tree = getattr(session, "tree", None)
    if tree is None:
        from pi_context.session.tree import TreeIndex

        tree = TreeIndex(session.entries)
    return collect_branch_entries_from_tree(tree, old_leaf_id, target_id)


def branch_entry_message(entry: Entry, edit: Entry | None = None) -> AgentMessage | None:
    """The message an entry contributes to a branch summary (tool results are left out)."""
    kind = entry.type
    if kind == "message":
        if entry.role == "toolResult":
            return None
        messages = project_entry(entry, edit)
        return messages[0] if messages else None
    if kind == "custom_message":
        messages = project_entry(entry, edit)
        return messages[0] if messages else None
    if kind == "branch_summary":
        data = entry.data
        ts = js_date_ms(data.get("timestamp")) if "timestamp" in data else None
        return cast(
            AgentMessage,
            {
                "role": "branchSummary",
                "summary": data.get("summary"),
                "fromId": data.get("fromId"),
                "timestamp": ts,
            },
        )
    if kind == "compaction":
        messages = entry_messages(entry)
        return messages[-1] if messages else None
    return None


def prepare_branch_entries(entries: Sequence[Entry], token_budget: int = 0) -> BranchPreparation:
    """Messages of ``entries`` fitted newest-first into ``token_budget`` (0: unlimited)."""
    ops = FileOperations()
    for entry in entries:
        if entry.type == "branch_summary" and not entry.get("fromHook"):
            ops.seed(entry.get("details"))
    edits = context_edits_by_target(entries)
    messages: list[AgentMessage] = []
    ids: list[str] = []
    total = 0
    for entry in reversed(entries):
        message = branch_entry_message(entry, edits.get(entry.id))
        if message is None:
            continue
        ops.add_message(message)
        tokens = estimate_tokens(message)
        if token_budget > 0 and total + tokens > token_budget:
            if entry.type in ("compaction", "branch_summary") and total < 0.9 * token_budget:
                messages.append(message)
                ids.append(entry.id)
                total += tokens
            break
        messages.append(message)
        ids.append(entry.id)
        total += tokens
    messages.reverse()
    ids.reverse()
    return BranchPreparation(messages, ids, ops, total)


async def generate_branch_summary(
    entries: Sequence[Entry],
    model: Model | None,
    *,
    reserve_tokens: int = DEFAULT_RESERVE_TOKENS,
    custom_instructions: str | None = None,
    replace_instructions: bool = False,
    retry: RetrySettings | None = None,
    thinking_level: ThinkingLevel = "off",
    offline: bool = False,
    on_event: Callable[[SummarizationRetryEvent], None] | None = None,
    sleep: Callable[[float], Any] | None = None,
) -> BranchSummaryResult:
    """Summarize a branch; with no model (or ``offline``) the offline summarizer writes it.

    Raises :class:`CompactionError` on a model failure (nothing is appended by this function).
    """
    window = (model.info.context_window if model is not None else 0) or _DEFAULT_WINDOW
    prepared = prepare_branch_entries(entries, window - reserve_tokens)
    if not prepared.messages:
        return BranchSummaryResult(NO_CONTENT_SUMMARY)
    read, modified = prepared.file_ops.lists()
    if model is None or offline:
        from pi_context.compaction.offline import offline_branch_summary

        text = offline_branch_summary(prepared.messages, read, modified)
        usage = None
        is_offline = True
    else:
        serialized = serialize_conversation(convert_to_llm(prepared.messages))
        prompt = fit_summary_prompt(
            model,
            serialized,
            lambda text: branch_prompt(text, custom_instructions, replace_instructions),
        )
        result = await request_summary(
            model,
            prompt,
            label="Branch summarization",
            source="branchSummary",
            retry=retry,
            thinking_level=thinking_level,
            on_event=on_event,
            sleep=sleep,
        )
        text, usage, is_offline = result.text, result.usage, False
    summary = BRANCH_PREAMBLE + text + format_file_operations(read, modified)
    return BranchSummaryResult(summary, usage, read, modified, is_offline)


@dataclass(frozen=True, slots=True)
class NavigationPlan:
    """Where a move to ``target`` (pi's ``/tree``) puts the leaf and what it leaves behind.

    A ``user`` message or ``custom_message`` target moves the leaf to its parent (so the
    message can be edited and resent: ``editor_text``); any other target becomes the leaf.
    """

    target: Entry
    old_leaf_id: str | None
    new_leaf_id: str | None
    editor_text: str | None
    branch: BranchCollection
    """The entries being left (newest path first) and the common ancestor."""


def plan_navigation(session: Session, target: Entry) -> NavigationPlan:
    """The move from the session's leaf to ``target`` (nothing changes yet)."""
    old_leaf = session.leaf_id
    editor_text: str | None = None
    if (target.type == "message" and target.role == "user") or target.type == "custom_message":
        new_leaf: str | None = target.parent_id
        message: Any = target.message if target.type == "message" else None
        content = message["content"] if message is not None else target.get("content")
        editor_text = text_of(content)
    else:
        new_leaf = target.id
    branch = collect_branch_entries(session, old_leaf, target.id)
    return NavigationPlan(target, old_leaf, new_leaf, editor_text, branch)


def complete_navigation(
    session: Session,
    plan: NavigationPlan,
    summary: str | None = None,
    *,
    details: Any = None,
    usage: Usage | None = None,
    from_hook: bool = False,
    label: str | None = None,
) -> Entry | None:
    """Carry out ``plan``: append the branch summary (when given) at the new leaf, or just move
    the leaf. A ``label`` is attached to the summary (or, without one, to the target) and, as
    in pi, the label entry becomes the leaf. Returns the summary entry, if any."""
    if summary is None:
        session.move_leaf(plan.new_leaf_id)
        if label:
            session.append_label(plan.target.id, label)
        return None
    entry: Entry = session.append_branch_summary(
        plan.old_leaf_id if plan.old_leaf_id is not None else "root",
        summary,
        parent_id=plan.new_leaf_id,
        details=details,
        usage=usage,
        from_hook=from_hook,
    )
    if label:
        session.append_label(entry.id, label)
    return entry


async def summarize_branch(
    session: Session,
    target_id: str,
    model: Model | None,
    *,
    summarize: bool = True,
    reserve_tokens: int = DEFAULT_RESERVE_TOKENS,
    custom_instructions: str | None = None,
    replace_instructions: bool = False,
    retry: RetrySettings | None = None,
    offline: bool = False,
    label: str | None = None,
    thinking_level: ThinkingLevel = "off",
    on_event: Callable[[SummarizationRetryEvent], None] | None = None,
    sleep: Callable[[float], Any] | None = None,
) -> Entry | None:
    """Move the session's leaf to ``target_id``, leaving a branch summary behind (pi's ``/tree``;
    :func:`plan_navigation`, :func:`generate_branch_summary`, :func:`complete_navigation`).

    Returns the appended ``branch_summary`` entry, or ``None`` when no summary was written. On
    failure nothing changes and :class:`CompactionError` is raised. The agent session's
    navigation runs the same steps with the extension hooks around them.
    """
    target = session.get(target_id)
    if target is None:
        raise CompactionError(f"Entry {target_id} not found")
    if session.leaf_id == target_id:
        return None
    plan = plan_navigation(session, target)
    if not summarize or not plan.branch.entries:
        complete_navigation(session, plan, label=label)
        return None
    result = await generate_branch_summary(
        plan.branch.entries,
        model,
        reserve_tokens=reserve_tokens,
        custom_instructions=custom_instructions,
        replace_instructions=replace_instructions,
        retry=retry,
        thinking_level=thinking_level,
        offline=offline,
        on_event=on_event,
        sleep=sleep,
    )
    return complete_navigation(
        session,
        plan,
        result.summary,
        details=result.details,
        usage=result.usage,
        label=label,
    )
