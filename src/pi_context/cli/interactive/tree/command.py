"""``/tree`` in a terminal: the full-screen selector, then the summary choice, then the move
(agent-parity.md §5.4, branch-summary.md §1).

1. An empty session says ``No entries in session``. Otherwise the selector opens on the
   current leaf with the filter of setting ``treeFilterMode``; labels set there (Shift+L) are
   appended as ``label`` entries at once.
2. Selecting the current leaf says ``Already at this point``.
3. Unless setting ``branchSummary.skipPrompt`` is true, ``Summarize branch?`` asks ``No
   summary`` / ``Summarize`` / ``Summarize with custom prompt`` (which opens the instructions
   editor; Esc there returns to the dialog); Esc in the dialog reopens the tree where it was.
4. The move runs with a spinner (Esc aborts it): an aborted summary says ``Branch
   summarization cancelled`` and reopens the tree, an extension's cancel says ``Navigation
   cancelled``, success says ``Navigated to selected point`` and shows where the branch now
   ends. A selected user message goes back to the editor, only if the editor is empty.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol

from prompt_toolkit.input import Input
from prompt_toolkit.output import Output
from rich.console import Console
from rich.text import Text

from pi_context.cli.app.agent_api import AgentHost
from pi_context.cli.interactive.clipboard import copy_to_clipboard
from pi_context.cli.interactive.tree.selector import TreeSelector, choose_summary, edit_instructions
from pi_context.cli.interactive.tree.view import TreeView, tree_filter_setting, visible_height
from pi_context.errors import PiContextError
from pi_context.export import SessionDocument
from pi_context.export.document import entry_preview

__all__ = ["TreeHost", "run_tree_selector", "skip_summary_prompt"]

_CONVERSATION = frozenset({"message", "custom_message", "compaction", "branch_summary"})


class TreeHost(Protocol):
    """What the tree command needs from the interactive shell."""

    agent: AgentHost
    console: Console

    async def busy(self, label: str, work: Callable[[], Awaitable[Any]]) -> Any: ...

    def editor_text(self) -> str: ...

    def set_editor(self, text: str) -> None: ...


def skip_summary_prompt(settings: Mapping[str, Any] | None) -> bool:
    """Setting ``branchSummary.skipPrompt``: move without asking (and without a summary)."""
    section = (settings or {}).get("branchSummary")
    return isinstance(section, Mapping) and section.get("skipPrompt") is True


def _document(agent: AgentHost) -> SessionDocument:
    session = agent.session
    return SessionDocument.from_entries(
        session.header, [entry.data for entry in session.entries], session.leaf_id
    )


async def _summary_choice(
    skip: bool, pt_input: Input, pt_output: Output
) -> tuple[bool, str | None] | None:
    """``(summarize, instructions)``; ``None`` when the dialog was closed (back to the tree)."""
    if skip:
        return False, None
    while True:
        picked = await choose_summary(pt_input, pt_output)
        if picked is None:
            return None
        if picked != 2:
            return picked == 1, None
        instructions = await edit_instructions(pt_input, pt_output)
        if instructions is not None:
            return True, instructions.strip() or None


def _say(console: Console, text: str, style: str = "") -> None:
    console.print(Text(text, style=style))


async def run_tree_selector(
    shell: TreeHost,
    pt_input: Input,
    pt_output: Output,
    *,
    copy: Callable[[str], bool] = copy_to_clipboard,
) -> None:
    """Run ``/tree`` with the full-screen selector on ``pt_input``/``pt_output``."""
    agent = shell.agent
    doc = _document(agent)
    if not any(entry.get("type") in _CONVERSATION for entry in doc.entries):
        # pi checks for no entries at all; a new session already holds its model and
        # thinking level, which are no place to go back to
        _say(shell.console, "No entries in session", "yellow")
        return
    settings = agent.settings_data()
    view = TreeView(
        doc,
        filter_mode=tree_filter_setting(settings),
        height=visible_height(pt_output.get_size().rows),
    )

    def set_label(target: str, label: str | None) -> SessionDocument:
        agent.session.append_label(target, label)
        return _document(agent)

    while True:
        selector = TreeSelector(
            view, set_label=set_label, copy=copy, pt_input=pt_input, pt_output=pt_output
        )
        target = await selector.run()
        if target is None:
            return
        if target == agent.session.leaf_id:
            _say(shell.console, "Already at this point", "dim")
            return
        choice = await _summary_choice(skip_summary_prompt(settings), pt_input, pt_output)
        if choice is None:
            continue  # Esc in the dialog: back to the tree, at the same selection
        if await _navigate(shell, target, *choice):
            return
        view.reload(_document(agent))


async def _navigate(
    shell: TreeHost, target: str, summarize: bool, instructions: str | None
) -> bool:
    """Move the leaf; ``False`` when the tree should reopen (the summary was cancelled)."""
    agent = shell.agent

    async def work() -> Any:
        try:
            return await agent.navigate(target, summarize=summarize, instructions=instructions)
        except PiContextError as exc:  # shown below, in pi's words
            return exc

    label = "Summarizing branch… (Esc cancels)" if summarize else "Navigating…"
    result = await shell.busy(label, work)
    if isinstance(result, PiContextError):
        _say(shell.console, str(result), "red")
        return True
    if result is None or (
        getattr(result, "cancelled", False) and getattr(result, "aborted", False)
    ):
        _say(shell.console, "Branch summarization cancelled", "yellow")
        return False
    if getattr(result, "cancelled", False):
        _say(shell.console, "Navigation cancelled", "yellow")
        return True
    editor = getattr(result, "editor_text", None)
    if isinstance(editor, str) and editor and not shell.editor_text():
        shell.set_editor(editor)
    _show_branch_end(shell)
    _say(shell.console, "Navigated to selected point", "green")
    return True


def _show_branch_end(shell: TreeHost, count: int = 4) -> None:
    """The last user and assistant messages of the new branch (pi re-renders the chat)."""
    shown: list[tuple[str, str]] = []
    for entry in shell.agent.session.branch_view():
        if entry.type == "message" and entry.role in ("user", "assistant"):
            preview = entry_preview(entry.data)
            if preview:
                shown.append(("you" if entry.role == "user" else "assistant", preview))
    for who, preview in shown[-count:]:
        shell.console.print(Text.assemble((f"  {who}: ", "bold"), preview))
