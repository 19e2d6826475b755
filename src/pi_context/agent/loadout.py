"""The tool loadout and the system prompt of an agent session.

:class:`Loadout` knows which tools exist (built-ins and extension tools), which are active
(pi's ``defaultTools`` setting, then ``set_active_tools``, or what the branch recorded), the
prompt options built from them and the loaded resources, the options a run uses (possibly
changed by ``before_agent_start``, possibly with a forced prompt), and the system message that
brings the stored prompt up to date at run start and between turns (nothing is stored when it
already matches).
"""

from __future__ import annotations

import logging
import operator
from collections.abc import Mapping, Sequence
from typing import Any, cast

from pi_context import _json
from pi_context.mcp.naming import is_mcp_tool_name
from pi_context.messages import AgentMessage, ToolDeclaration
from pi_context.prompt import (
    SystemPromptOptions,
    build_sections,
    build_system_prompt,
    default_tool_names,
    get_current_tools,
    prompt_options_for,
    system_message_for_update,
)
from pi_context.prompt.replay import tool_state_changes
from pi_context.session import ProjectedEntry
from pi_context.tools import BUILTIN_TOOL_NAMES, RecallTool, Tool, tool_declarations
from pi_context.tools.registry import is_optional_builtin

from ._state import AgentState
from ._transform import PrefixFlatMap

__all__ = ["Loadout"]


_entry_key = operator.attrgetter("key")
_log = logging.getLogger("pi_context.tools")


def _system_only(_index: int, item: ProjectedEntry) -> list[AgentMessage]:
    return [m for m in item.messages if m.get("role") == "system"]


class Loadout:
    """Tools, the active set, the run's prompt options and the system-prompt patch."""

    def __init__(self, state: AgentState, tools: Sequence[Tool]) -> None:
        self._state = state
        self._builtin_tools = list(tools)
        self._tools: dict[str, Tool] = {}
        self._active: list[str] = []
        self._run_options: SystemPromptOptions | None = None
        self.forced_prompt: str | None = None
        """The whole system prompt a run forces (``before_agent_start``), else ``None``."""
        # The system messages of the projection, redone only for entries new since last time
        # (keyed by entry id and edit generation, see .prefix_reuse).
        self._system_view: PrefixFlatMap[ProjectedEntry, AgentMessage] = PrefixFlatMap(
            _system_only, key=_entry_key
        )
        # The stored system messages and the wanted prompt (serialized) when last found in sync.
        self._prompt_in_sync: tuple[list[AgentMessage], bytes] | None = None
        self._started = False
        # restored MCP names kept until the first run starts (their servers may connect first)
        self._restored_pending: set[str] = set()
        self._recall_offered = False
        self.register_tools()
        if state.mcp is not None:
            state.mcp.all_tools = lambda: list(self._tools.values())
            state.mcp.on_tools_changed = self.register_tools
            state.mcp.activate_tools = self.activate
            state.mcp.active_tools = self.active_tools

    # -- tools ------------------------------------------------------------------------------------

    def register_tools(self, *, newly_default: Sequence[str] = ()) -> None:
        """Register built-in, extension and MCP tools. The first loadout follows the
        ``defaultTools`` setting (built-ins only; other ``direct`` tools are always active,
        ``deferred`` ones wait for ``tool_search``); later calls keep the loadout, add
        ``newly_default`` names and activate ``direct`` tools registered since (a server
        that connected)."""
        before = {n: t.exposure for n, t in self._tools.items()}
        all_tools = list(self._builtin_tools)
        if self._state.extensions is not None:
            all_tools.extend(self._state.extensions.tools())
        mcp = self._state.mcp
        if mcp is not None:
            taken = {t.name for t in all_tools}
            all_tools.extend(t for t in mcp.tools() if t.name not in taken)
        selection = self._state.tool_selection
        defaults = self.default_tool_names()
        if selection is not None:
            all_tools = [t for t in all_tools if selection.allows(t.name, defaults)]
        self._tools = {}
        for tool in all_tools:
            if tool.name in self._tools and tool.replaces_builtin:
                _log.info("tool %r replaces the built-in tool of that name", tool.name)
            self._tools[tool.name] = tool
        first = not self._active and not self._started
        self._started = True
        if first and selection is not None:
            chosen = selection.initially_active(
                [n for n, t in self._tools.items() if t.exposure == "direct"], defaults
            )
            self._active = chosen + [
                n
                for n in self._tools
                if n not in BUILTIN_TOOL_NAMES
                and n not in chosen
                and selection.plain is None
                and self._starts_active(n)
            ]
        elif first:
            self._active = [n for n in defaults if n in self._tools] + [
                n for n in self._tools if n not in BUILTIN_TOOL_NAMES and self._starts_active(n)
            ]
        else:
            kept = [
                n
                for n in self._active
                if (n in self._tools or n in self._restored_pending)
                and not _left_direct(before.get(n), self._tools.get(n))
            ]
            added = [
                n
                for n, t in self._tools.items()
                if before.get(n) != "direct"
                and n not in kept
                and t.exposure == "direct"
                and is_mcp_tool_name(n)
                and (selection is None or selection.activates(n))
                and n not in self._restored_pending
            ]
            self._active = (
                kept + [n for n in newly_default if n in self._tools and n not in kept] + added
            )
        if first and mcp is not None:
            self.activate(mcp.discovery_tools())

    def activate(self, names: Sequence[str]) -> None:
        """Append registered tools to the active set (``tool_search`` loading its matches,
        discovery tools at start); they are declared from the next request."""
        self._active += [
            n for n in dict.fromkeys(names) if n in self._tools and n not in self._active
        ]

    def settle_restored(self) -> None:
        """Drop restored names whose tools were not registered by the time a run starts (a
        server that has not connected, or a tool this agent does not have, like pi's
        ``codemode``)."""
        if self._restored_pending:
            self._restored_pending = set()
            self._active = [n for n in self._active if n in self._tools]

    def _starts_active(self, name: str) -> bool:
        """Whether a tool beside the built-ins is active from the start: all are, except the
        ``recall`` tool the agent adds itself, unless it is offered ``always``, the optional
        built-ins (``grep``, ``find``, ``ls``) and tools that are not ``direct``."""
        tool = self._tools.get(name)
        if tool is None or tool.exposure != "direct":
            return False  # deferred tools wait for tool_search, discovery tools for MCP
        if is_optional_builtin(tool):
            return False  # grep, find, ls: only when --tools or defaultTools names them
        return not isinstance(tool, RecallTool) or tool.offer == "always"

    def _offer_recall(self, entries: Sequence[ProjectedEntry]) -> bool:
        """Make the agent's ``recall`` tool active once the context ``entries`` start with a
        compaction (its ``auto`` offer), once per branch; ``True`` when it was just added. The
        change reaches the model in the system-prompt patch being computed (``toolsAdded``),
        after the summary, so the cached prefix before it stays."""
        if self._recall_offered:
            return False
        tool = self._tools.get(RecallTool.name)
        if not isinstance(tool, RecallTool) or tool.offer != "auto":
            return False
        if not entries or entries[0].entry.type != "compaction":
            return False
        self._recall_offered = True
        if RecallTool.name in self._active:
            return False
        self._active.append(RecallTool.name)
        return True

    def default_tool_names(self) -> list[str]:
        """The names pi's ``defaultTools`` setting makes active at start."""
        return default_tool_names(self._state.settings_data.get("defaultTools"))

    def active_tools(self) -> list[str]:
        return list(self._active)

    def registered_tools(self) -> list[str]:
        """Every tool the session has, active or not."""
        return list(self._tools)

    def registered_tool_objects(self) -> list[Tool]:
        """The tools of :meth:`registered_tools`, in the same order."""
        return list(self._tools.values())

    def set_active_tools(self, names: Sequence[str]) -> None:
        """Change the loadout; the prompt and declarations are patched at the next turn."""
        kept = [n for n in self._active if n in names]
        self._active = kept + [n for n in names if n in self._tools and n not in kept]

    def active_tool(self, name: str) -> Tool | None:
        """The tool the model may call under ``name`` (``None``: unknown or inactive)."""
        return self._tools.get(name) if name in self._active else None

    def _active_tool_objects(self) -> list[Tool]:
        return [self._tools[n] for n in self._active if n in self._tools]

    def declared_tools(self) -> list[ToolDeclaration]:
        """The declarations a request carries (hidden tools left out)."""
        hidden = set(self.options().hidden_tools)
        return self._declare([t for t in self._active_tool_objects() if t.name not in hidden])

    def _declare(self, tools: Sequence[Tool]) -> list[ToolDeclaration]:
        """Declarations of ``tools``; while ``codemode`` is active, every callable one says
        what ``tools.<id>(args)`` resolves to in a script (discovery tools excepted)."""
        declarations = tool_declarations(tools)
        if "codemode" not in self._active or "codemode" not in self._tools:
            return declarations
        from pi_context.mcp.codemode import codemode_suffix  # codemode is on: MCP is loaded

        out = []
        for tool, declaration in zip(tools, declarations, strict=True):
            if tool.exposure != "model-only":
                declaration = cast(
                    ToolDeclaration,
                    {
                        **declaration,
                        "description": declaration["description"].strip() + codemode_suffix(tool),
                    },
                )
            out.append(declaration)
        return out

    def restore_from_branch(self) -> None:
        """The loadout recorded on the branch, plus non-built-in tools it never mentions
        (after a resume or a navigation)."""
        systems: list[Mapping[str, Any]] = []
        for e in self._state.session.branch_view():
            if e.type == "message" and e.role == "system" and e.message is not None:
                systems.append(e.message)
            elif e.type == "compaction" and isinstance(e.get("systemMessage"), Mapping):
                systems.append(e.get("systemMessage"))
        self._recall_offered = False  # offered again if this branch holds a compaction
        recorded = list(get_current_tools(systems))
        if not recorded:
            return
        mentioned = set()
        for m in systems:
            for key in ("toolsAdded", "toolsRemoved"):
                for t in (m or {}).get(key) or ():
                    mentioned.add(t.get("name"))
        names = [n for n in recorded if n in self._tools or self._may_register(n)]
        self._restored_pending = {n for n in names if n not in self._tools}
        names += [
            n
            for n in self._tools
            if n not in mentioned
            and n not in names
            and n not in BUILTIN_TOOL_NAMES
            and self._starts_active(n)
        ]
        self._active = names
        if self._state.mcp is not None:  # discovery is switched on at every session start
            self.activate(self._state.mcp.discovery_tools())

    def _may_register(self, name: str) -> bool:
        """A tool an MCP server may still bring (its server has not connected yet)."""
        return self._state.mcp is not None and is_mcp_tool_name(name)

    # -- system prompt ----------------------------------------------------------------------------

    def base_options(self) -> SystemPromptOptions:
        """The prompt options from resources and the active tools (pi's base options), with
        the ``mcp_servers`` section when MCP servers are listed."""
        state = self._state
        options = prompt_options_for(
            state.resources, self._tools.values(), active=self._active, cwd=state.cwd
        )
        section = state.mcp.section() if state.mcp is not None else None
        if section is not None:
            options = options.evolve(sections={section[0]: section[1], **options.sections})
        return options

    def begin_run(self, options: SystemPromptOptions, forced: str | None) -> None:
        """Use ``options`` (and ``forced``, if any) until :meth:`end_run`."""
        self._run_options = options
        self.forced_prompt = forced

    def end_run(self) -> None:
        self._run_options = None
        self.forced_prompt = None

    def options(self) -> SystemPromptOptions:
        """The options in force: the run's, or the base options between runs."""
        return self._run_options if self._run_options is not None else self.base_options()

    def next_turn_options(self) -> SystemPromptOptions:
        """The run's options with the loadout as it stands now (it may change mid-run)."""
        options = self.options().evolve(selected_tools=tuple(self._active))
        if self._run_options is not None:
            self._run_options = options
        return options

    def system_prompt(self) -> str:
        """The prompt text as the model would get it now (forced text when a run forces one)."""
        if self.forced_prompt is not None:
            return self.forced_prompt
        return build_system_prompt(self.options())

    def system_patch(
        self, options: SystemPromptOptions, entries: Sequence[ProjectedEntry]
    ) -> AgentMessage | None:
        """The system message that brings the stored prompt and loadout of ``entries`` (the
        current projection's) up to ``options``, or ``None`` when they already match.

        Diffing the tool declarations is costly, and between turns nothing has usually
        changed: when the stored system messages are the same (the same entry keys give the
        very same cached messages) and the desired sections and declarations serialize to the
        same bytes as the last time nothing was due, the answer is again ``None``. A patch
        puts the loadout in the order the transcript will replay it (see
        :meth:`_follow_recorded_order`).
        """
        if self._offer_recall(entries):
            options = options.evolve(selected_tools=tuple(self._active))
            if self._run_options is not None:
                self._run_options = options
        systems = self._system_view(entries)  # they hold the state
        sections = build_sections(options)
        tools = self._declare(self._active_tool_objects())
        wanted = _json.dumps([list(sections.items()), tools])
        last = self._prompt_in_sync
        if last is not None and last[1] == wanted and _same_objects(last[0], systems):
            return None
        reordered = self._follow_recorded_order(options, systems, tools)
        if reordered is not options:
            options = reordered
            sections = build_sections(options)
            tools = self._declare(self._active_tool_objects())
            wanted = _json.dumps([list(sections.items()), tools])
        patch = system_message_for_update(
            systems, sections, tools, timestamp=self._state.session.now_ms()
        )
        self._prompt_in_sync = (systems, wanted) if patch is None else None
        return cast("AgentMessage | None", patch)

    def _follow_recorded_order(
        self,
        options: SystemPromptOptions,
        systems: Sequence[AgentMessage],
        tools: Sequence[ToolDeclaration],
    ) -> SystemPromptOptions:
        """Put the loadout in the order the transcript will replay it once ``tools`` are
        recorded, and return ``options`` with its selected tools in that order.

        Replaying a tool delta moves an added name (and a changed definition, which is a
        removal plus an addition) to the end. The next process restores the loadout in that
        replayed order (:meth:`restore_from_branch`); if this one kept its own order, the
        declarations and the tools section would change order between the two processes and
        the request after a tool change would miss the whole cached prefix (Anthropic's
        ``tools`` head it). Following the replayed order here makes both processes send the
        same bytes.
        """
        recorded = get_current_tools(systems)
        replayed = list(recorded)
        added, removed = tool_state_changes(recorded, tools)
        if added or removed:
            moved = {r["name"] for r in removed} | {d["name"] for d in added}
            replayed = [n for n in replayed if n not in moved] + [d["name"] for d in added]
        order = {name: i for i, name in enumerate(replayed)}
        active = _in_order(self._active, order)
        if active == self._active:
            return options
        self._active = active
        options = options.evolve(selected_tools=tuple(_in_order(options.tools, order)))
        if self._run_options is not None:
            self._run_options = options
        return options


def _left_direct(before: str | None, tool: Tool | None) -> bool:
    """A tool that was ``direct`` and is now reached only by discovery (not declared)."""
    return before == "direct" and tool is not None and tool.exposure != "direct"


def _in_order(names: Sequence[str], order: Mapping[str, int]) -> list[str]:
    """``names`` sorted by their place in ``order``; names it lacks keep their order, last."""
    last = len(order)
    ranked = sorted(enumerate(names), key=lambda item: (order.get(item[1], last), item[0]))
    return [name for _, name in ranked]


def _same_objects(a: Sequence[object], b: Sequence[object]) -> bool:
    return len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))
