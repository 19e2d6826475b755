"""System messages in the transcript: replay, diff, patches and request-time projections.

pi 1.6.0 stores the prompt and the tool loadout as ordinary ``role: "system"`` messages:
the first carries every section and ``toolsAdded`` for every tool; later ones carry only the
changed sections (``null`` deletes one) and the tool delta. Replaying them in order gives the
current state; diffing the desired sections against it gives the next patch, or nothing.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, cast

from msgspec import Struct, field

from pi_context._json import js_stringify
from pi_context.messages import SystemMessage, ToolDeclaration, now_ms, text_of
from pi_context.prompt.sections import render_prompt

__all__ = [
    "SystemState",
    "apply_forced_prompt",
    "collapse_system_messages",
    "declare_tool_changes",
    "diff_sections",
    "get_current_system_message",
    "get_current_system_prompt",
    "get_current_tools",
    "get_system_message_text",
    "render_system_message_update",
    "replay_system_state",
    "system_message_for_update",
    "to_tool_declaration",
    "tool_state_changes",
]


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return text_of(content, "\n")
    return ""


def _is_system(message: Mapping[str, Any]) -> bool:
    return message.get("role") == "system"


def _json_copy(value: Any) -> Any:
    return json.loads(json.dumps(value))


def to_tool_declaration(tool: Mapping[str, Any]) -> ToolDeclaration:
    """``{name, description, parameters, constrainedSampling?}`` with JSON copies (pi's
    ``toToolDeclaration``)."""
    decl: dict[str, Any] = {
        "name": tool["name"],
        "description": tool.get("description", ""),
        "parameters": _json_copy(tool.get("parameters", {})),
    }
    if tool.get("constrainedSampling") is not None:
        decl["constrainedSampling"] = _json_copy(tool["constrainedSampling"])
    return cast(ToolDeclaration, decl)


def get_current_tools(messages: Iterable[Mapping[str, Any]]) -> dict[str, ToolDeclaration]:
    """The declared tools after replaying every system message (ordered by name).

    Per message, removals first, then additions; re-setting an existing name keeps its place,
    a removed-then-added name moves to the end.
    """
    tools: dict[str, ToolDeclaration] = {}
    for message in messages:
        if not _is_system(message):
            continue
        for ref in message.get("toolsRemoved") or ():
            tools.pop(ref.get("name"), None)
        for decl in message.get("toolsAdded") or ():
            tools[decl["name"]] = decl
    return tools


class SystemState(Struct):
    """The replayed prompt and tool state of a transcript.

    ``content`` joins the non-empty ``content`` texts of all system messages with a blank line;
    ``timestamp`` is the first system message's (``None`` when there is none).
    """

    content: str = ""
    sections: dict[str, str] = field(default_factory=dict)
    tools: dict[str, ToolDeclaration] = field(default_factory=dict)
    timestamp: int | None = None

    @property
    def empty(self) -> bool:
        return self.timestamp is None and not self.tools

    @property
    def text(self) -> str:
        return get_system_message_text({"content": self.content, "sections": self.sections})

    def to_message(self) -> SystemMessage | None:
        """pi's replayed message (``getCurrentSystemMessage``), or ``None`` for no state."""
        if self.empty:
            return None
        msg: dict[str, Any] = {"role": "system", "content": self.content}
        if self.sections:
            msg["sections"] = dict(self.sections)
        if self.tools:
            msg["toolsAdded"] = list(self.tools.values())
        msg["timestamp"] = self.timestamp if self.timestamp is not None else 0
        return cast(SystemMessage, msg)


def replay_system_state(messages: Iterable[Mapping[str, Any]]) -> SystemState:
    """Replay every system message of ``messages`` in order."""
    system = [m for m in messages if _is_system(m)]
    state = SystemState()
    content: list[str] = []
    for message in system:
        if state.timestamp is None:
            state.timestamp = int(message.get("timestamp") or 0)
        text = _content_text(message.get("content"))
        if text:
            content.append(text)
        for name, value in (message.get("sections") or {}).items():
            if value is None:
                state.sections.pop(name, None)
            else:
                state.sections[name] = value
    state.content = "\n\n".join(content)
    state.tools = get_current_tools(system)
    return state


def get_current_system_message(messages: Iterable[Mapping[str, Any]]) -> SystemMessage | None:
    """The single system message equivalent to all system messages of ``messages``."""
    return replay_system_state(messages).to_message()


def get_system_message_text(message: Mapping[str, Any] | None) -> str:
    """Content text, then every non-null section, empty parts dropped, joined by a blank line."""
    if message is None:
        return ""
    return render_prompt(message.get("sections") or {}, _content_text(message.get("content")))


def get_current_system_prompt(messages: Iterable[Mapping[str, Any]]) -> str:
    return get_system_message_text(get_current_system_message(messages))


def render_system_message_update(message: Mapping[str, Any]) -> str:
    """A later system message as text for models that accept mid-conversation system messages."""
    parts = [_content_text(message.get("content"))]
    for name, value in (message.get("sections") or {}).items():
        if value is None:
            parts.append(f'Removed system prompt section "{name}".')
        else:
            parts.append(f'Updated system prompt section "{name}":\n\n{value}')
    return "\n\n".join(p for p in parts if p)


def diff_sections(
    previous: Mapping[str, str], current: Mapping[str, str]
) -> dict[str, str | None] | None:
    """The patch turning ``previous`` into ``current``: changed sections in current order, then
    deletions as ``None``; ``None`` when nothing changed."""
    patch: dict[str, str | None] = {}
    for name, text in current.items():
        if previous.get(name) != text:
            patch[name] = text
    for name in previous:
        if name not in current:
            patch[name] = None
    return patch or None


def tool_state_changes(
    previous: Mapping[str, ToolDeclaration], current: Sequence[ToolDeclaration]
) -> tuple[list[ToolDeclaration], list[dict[str, str]]]:
    """``(toolsAdded, toolsRemoved)``: a changed definition is a removal plus an addition."""
    now = {decl["name"]: decl for decl in current}
    added = [
        decl
        for decl in current
        if decl["name"] not in previous
        or js_stringify(previous[decl["name"]]) != js_stringify(decl)
    ]
    removed = [
        {"name": name}
        for name, decl in previous.items()
        if name not in now or js_stringify(now[name]) != js_stringify(decl)
    ]
    return added, removed


def _with_tool_fields(
    base: Mapping[str, Any], added: list[ToolDeclaration], removed: list[dict[str, str]]
) -> SystemMessage:
    # pi's key order: role, content, sections?, timestamp, toolsAdded?, toolsRemoved?
    msg: dict[str, Any] = {"role": "system", "content": base.get("content", "")}
    if "sections" in base:
        msg["sections"] = base["sections"]
    for key, value in base.items():
        if key not in ("role", "content", "sections", "timestamp", "toolsAdded", "toolsRemoved"):
            msg[key] = value
    msg["timestamp"] = base.get("timestamp", now_ms())
    if added:
        msg["toolsAdded"] = added
    if removed:
        msg["toolsRemoved"] = removed
    return cast(SystemMessage, msg)


def system_message_for_update(
    messages: Sequence[Mapping[str, Any]],
    sections: Mapping[str, str] | None,
    tools: Sequence[Mapping[str, Any]] | None = None,
    *,
    timestamp: int | None = None,
) -> SystemMessage | None:
    """The system message to append before the next request, or ``None`` when nothing changed.

    ``messages`` is the session's projected context; ``sections`` the freshly built sections
    (``None``: leave the prompt alone, e.g. under a forced prompt handled elsewhere); ``tools``
    the declared tools (``None``: leave the loadout alone). The agent loop calls this at run
    start and between turns.
    """
    state = replay_system_state(messages)
    patch = diff_sections(state.sections, sections) if sections is not None else None
    added: list[ToolDeclaration] = []
    removed: list[dict[str, str]] = []
    if tools is not None:
        added, removed = tool_state_changes(state.tools, [to_tool_declaration(t) for t in tools])
    if patch is None and not added and not removed:
        return None
    base: dict[str, Any] = {"role": "system", "content": ""}
    if patch is not None:
        base["sections"] = patch
    base["timestamp"] = now_ms() if timestamp is None else timestamp
    return _with_tool_fields(base, added, removed)


def declare_tool_changes(
    transcript: Sequence[Mapping[str, Any]],
    batch: Sequence[Mapping[str, Any]],
    tools: Sequence[Mapping[str, Any]],
    *,
    timestamp: int | None = None,
) -> list[Mapping[str, Any]]:
    """pi-agent-core's ``declareToolChanges`` on a batch of messages about to be added.

    The tool delta rides on the batch's last system message when there is one; otherwise a new
    system message is inserted before the batch's first non-system message.
    """
    out = list(batch)
    pending_index = next((i for i in range(len(out) - 1, -1, -1) if _is_system(out[i])), None)
    baseline: list[Mapping[str, Any]] = []
    for i, m in enumerate(out):
        if i == pending_index:
            baseline.append({k: v for k, v in m.items() if k not in ("toolsAdded", "toolsRemoved")})
        else:
            baseline.append(m)
    previous = get_current_tools([*transcript, *baseline])
    added, removed = tool_state_changes(previous, [to_tool_declaration(t) for t in tools])
    if pending_index is not None:
        pending = out[pending_index]
        if added or removed or "toolsAdded" in pending or "toolsRemoved" in pending:
            out[pending_index] = _with_tool_fields(baseline[pending_index], added, removed)
        return out
    if added or removed:
        msg = _with_tool_fields(
            {
                "role": "system",
                "content": "",
                "timestamp": now_ms() if timestamp is None else timestamp,
            },
            added,
            removed,
        )
        at = next((i for i, m in enumerate(out) if not _is_system(m)), len(out))
        out.insert(at, msg)
    return out


def apply_forced_prompt(
    messages: Sequence[Mapping[str, Any]], forced: str, *, now: int | None = None
) -> list[Mapping[str, Any]]:
    """The forced-prompt projection: one head system message with the forced text and the
    replayed tools, then every non-system message. Request-time only; nothing is stored."""
    state = replay_system_state(messages)
    head: dict[str, Any] = {"role": "system", "content": forced}
    if state.tools:
        head["toolsAdded"] = list(state.tools.values())
    first_ts = next((m.get("timestamp") for m in messages if _is_system(m)), None)
    head["timestamp"] = first_ts if first_ts is not None else (now_ms() if now is None else now)
    return [head, *(m for m in messages if not _is_system(m))]


def collapse_system_messages(messages: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """For models without mid-conversation system messages: one leading replayed system
    message, every other system message dropped."""
    head = get_current_system_message(messages)
    rest = [m for m in messages if not _is_system(m)]
    return [head, *rest] if head is not None else rest
