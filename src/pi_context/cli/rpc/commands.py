"""The 33 commands of pi's RPC protocol, one method each.

A handler gets the parsed :class:`~.records.Command` and returns the response's ``data``
(:data:`~.records.NO_DATA` for none) or raises :class:`~.records.RpcCommandError` with pi's
error text. ``prompt`` returns :class:`Started` so that the ``started`` response is written
before the run's first event.
"""

from __future__ import annotations

import base64
import binascii
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast

from pi_context import session_dirs
from pi_context.cli.app.agent_api import AgentApi
from pi_context.cli.app.session_replacement import (
    INVALID_FORK_ENTRY,
    SwitchCancelledError,
    fork_messages,
    user_text,
)
from pi_context.messages import AgentMessage, ImageContent
from pi_context.model import ModelInfo
from pi_context.model.thinking import cycle_thinking_level, supported_thinking_levels

from . import model_records
from .records import NO_DATA, Command, RpcCommandError
from .runtime import RpcRuntime
from .settings_file import set_global_setting
from .user_bash import run_user_bash

if TYPE_CHECKING:
    from pi_context.resources.types import SkillSourceInfo

__all__ = ["COMMAND_TYPES", "CommandHandlers", "Started"]


@dataclass(frozen=True, slots=True)
class Started:
    """``prompt`` accepted: respond ``started``, then call ``start``."""

    start: Callable[[], None]


Handler = Callable[[Command], Awaitable[Any]]

COMMAND_TYPES: tuple[str, ...] = (
    "prompt",
    "steer",
    "follow_up",
    "abort",
    "clear_queue",
    "new_session",
    "get_state",
    "get_messages",
    "set_model",
    "cycle_model",
    "get_available_models",
    "set_thinking_level",
    "cycle_thinking_level",
    "get_available_thinking_levels",
    "set_steering_mode",
    "set_follow_up_mode",
    "compact",
    "set_auto_compaction",
    "set_auto_retry",
    "abort_retry",
    "bash",
    "abort_bash",
    "get_session_stats",
    "export_html",
    "switch_session",
    "fork",
    "clone",
    "get_fork_messages",
    "get_entries",
    "get_tree",
    "get_last_assistant_text",
    "set_session_name",
    "get_commands",
)

_BUSY = (
    "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue "
    "the message."
)
_COMPACTING = (
    "Cannot submit a prompt while compaction is in progress. Wait for compaction to finish and "
    "retry."
)
_NO_MODEL = (
    "No model selected.\n\nSet an API key (e.g. ANTHROPIC_API_KEY or OPENAI_API_KEY) or add a "
    "provider to models.json.\n\nThen use set_model to select a model."
)
_NOT_SAVED = "This session has not been saved yet. Send a message before cloning or forking it."


def _no_auth(provider: str, error: str) -> str:
    """The ``prompt`` failure for a model without usable credentials."""
    if error.startswith("Authentication failed"):
        return error  # an expired OAuth record: the error already says to log in again
    if error.startswith("No API key found"):
        return (
            f"No API key found for {provider}.\n\n{error}\n\nSet the key in the environment, "
            f"store one with `/login {provider}` in interactive pictx, or give --api-key."
        )
    return error


def _string(command: Command, key: str, *, required: bool = True) -> str | None:
    value = command.fields.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str):
        raise RpcCommandError(f'"{key}" must be a string')
    return value


def _images(command: Command) -> tuple[ImageContent, ...]:
    raw = command.fields.get("images")
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise RpcCommandError('"images" must be a list of {type: "image", data, mimeType}')
    images: list[ImageContent] = []
    for index, item in enumerate(raw):
        ok = (
            isinstance(item, dict)
            and item.get("type") == "image"
            and isinstance(item.get("data"), str)
            and isinstance(item.get("mimeType"), str)
        )
        if not ok:
            raise RpcCommandError(f'images[{index}]: expected {{type: "image", data, mimeType}}')
        try:
            base64.b64decode(item["data"], validate=True)
        except (binascii.Error, ValueError) as exc:
            raise RpcCommandError(f"images[{index}]: data is not base64") from exc
        images.append(
            cast(
                ImageContent, {"type": "image", "data": item["data"], "mimeType": item["mimeType"]}
            )
        )
    return tuple(images)


class CommandHandlers:
    """Handlers bound to one RPC runtime."""

    def __init__(self, runtime: RpcRuntime) -> None:
        self.rt = runtime
        self.table: dict[str, Handler] = {
            name: getattr(self, f"cmd_{name}") for name in COMMAND_TYPES
        }

    # -- shorthands -------------------------------------------------------------------------------

    def _info(self) -> ModelInfo | None:
        return self.rt.agent.model_info()

    def _thinking_level(self) -> str:
        return self.rt.agent.session.projection().thinking_level

    def _set_level(self, requested: str) -> str:
        """pi's ``setThinkingLevel``: clamped; a change is recorded, told to extensions
        (``thinking_level_select``) and to the client (``thinking_level_changed``)."""
        before = self._thinking_level()
        level = self.rt.agent.set_thinking_level(requested)
        self._tell_level(before)
        return level

    def _tell_level(self, before: str) -> None:
        level = self._thinking_level()
        if level != before:
            self.rt.emit_record({"type": "thinking_level_changed", "level": level})

    def _switch_model(self, key: str) -> dict[str, Any]:
        """pi's model switch (``model_select`` source ``set``) with its level rule: the
        thinking level is clamped to the new model, and a change is told to the client."""
        before = self._thinking_level()
        self.rt.agent.select_model(key)
        self._tell_level(before)
        info = self.rt.agent.model_info()
        assert info is not None  # just switched to it
        return model_records.model_record(info)

    # -- prompting --------------------------------------------------------------------------------

    def _extension_command(self, text: str) -> tuple[str, str] | None:
        """``(name, args)`` when ``text`` invokes a registered extension command."""
        if not text.startswith("/"):
            return None
        name, _, args = text[1:].partition(" ")
        names = {c.name for c in self.rt.agent.extension_commands()}
        return (name, args) if name in names else None

    def _refuse_queued_command(self, text: str) -> None:
        invoked = self._extension_command(text)
        if invoked is not None:
            raise RpcCommandError(
                f'Extension command "/{invoked[0]}" cannot be queued. Use prompt() or execute '
                "the command when not streaming."
            )

    async def cmd_prompt(self, command: Command) -> Any:
        text = _string(command, "message")
        assert text is not None
        images = _images(command)
        behaviour = command.fields.get("streamingBehavior")
        agent = self.rt.agent
        invoked = self._extension_command(text)
        if invoked is not None:  # runs now, even while streaming
            await agent.run_extension_command(*invoked)
            return {"disposition": "handled"}
        if agent.compacting:
            raise RpcCommandError(_COMPACTING)
        submitted = await agent.handle_input(text, source="rpc")
        if submitted is None:
            return {"disposition": "handled"}
        text = submitted
        if self.rt.streaming:
            if behaviour == "steer":
                agent.steer(text, images=images)
                return {"disposition": "queued"}
            if behaviour == "followUp":
                agent.follow_up(text, images=images)
                return {"disposition": "queued"}
            raise RpcCommandError(_BUSY)
        info = agent.model_info()
        if info is None:
            raise RpcCommandError(_NO_MODEL)
        unusable = agent.credential_error()
        if unusable is not None:
            raise RpcCommandError(_no_auth(info.provider, unusable))
        return Started(lambda: self.rt.start_prompt(text, images))

    async def cmd_steer(self, command: Command) -> Any:
        text = _string(command, "message")
        assert text is not None
        self._refuse_queued_command(text)
        self.rt.agent.steer(text, images=_images(command))
        return {"disposition": "queued"}

    async def cmd_follow_up(self, command: Command) -> Any:
        text = _string(command, "message")
        assert text is not None
        self._refuse_queued_command(text)
        self.rt.agent.follow_up(text, images=_images(command))
        return {"disposition": "queued"}

    async def cmd_abort(self, command: Command) -> Any:
        self.rt.agent.abort()
        await self.rt.wait_idle()
        return NO_DATA

    async def cmd_clear_queue(self, command: Command) -> Any:
        steering, follow_up = self.rt.agent.clear_queue()
        return {"steering": steering, "followUp": follow_up}

    # -- state ------------------------------------------------------------------------------------

    async def cmd_get_state(self, command: Command) -> Any:
        agent = self.rt.agent
        session = agent.session
        state: dict[str, Any] = {}
        info = self._info()
        if info is not None:
            state["model"] = model_records.model_record(info)
        state["thinkingLevel"] = self._thinking_level()
        state["isStreaming"] = self.rt.streaming
        state["isCompacting"] = agent.compacting
        state["steeringMode"] = agent.steering_mode
        state["followUpMode"] = agent.follow_up_mode
        if session.file_path is not None:
            state["sessionFile"] = str(session.file_path)
        state["sessionId"] = session.id
        if session.name:
            state["sessionName"] = session.name
        state["autoCompactionEnabled"] = agent.auto_compaction_enabled()
        state["messageCount"] = len(session.projection().messages)
        state["pendingMessageCount"] = agent.pending_message_count
        return state

    async def cmd_get_messages(self, command: Command) -> Any:
        return {"messages": list(self.rt.agent.session.projection().messages)}

    # -- models and thinking ----------------------------------------------------------------------

    async def cmd_set_model(self, command: Command) -> Any:
        provider = _string(command, "provider")
        model_id = _string(command, "modelId")
        for info in self.rt.agent.usable_models():
            if info.provider == provider and info.id == model_id:
                return self._switch_model(f"{provider}/{model_id}")
        raise RpcCommandError(f"Model not found: {provider}/{model_id}")

    async def cmd_cycle_model(self, command: Command) -> Any:
        before = self._thinking_level()
        cycled = self.rt.agent.cycle()
        if cycled is None:
            return None
        self._tell_level(before)
        return {
            "model": model_records.model_record(cycled.model),
            "thinkingLevel": cycled.thinking_level,
            "isScoped": cycled.is_scoped,
        }

    async def cmd_get_available_models(self, command: Command) -> Any:
        models = self.rt.agent.usable_models()
        return {"models": [model_records.model_record(info) for info in models]}

    async def cmd_set_thinking_level(self, command: Command) -> Any:
        level = command.fields.get("level")
        self._set_level(level if isinstance(level, str) else "")
        return NO_DATA

    async def cmd_cycle_thinking_level(self, command: Command) -> Any:
        level = cycle_thinking_level(self._info(), self._thinking_level())
        if level is None:
            return None
        return {"level": self._set_level(level)}

    async def cmd_get_available_thinking_levels(self, command: Command) -> Any:
        return {"levels": list(supported_thinking_levels(self._info()))}

    # -- modes and switches (persisted in the global settings, as pi does) -------------------------

    def _mode(self, command: Command) -> Any:
        mode = command.fields.get("mode")
        if mode not in ("all", "one-at-a-time"):
            raise RpcCommandError(f'Invalid mode: {mode!r} (expected "all" or "one-at-a-time")')
        return mode

    async def cmd_set_steering_mode(self, command: Command) -> Any:
        mode = self._mode(command)
        self.rt.agent.steering_mode = mode
        set_global_setting(self.rt.agent.agent_dir, ["steeringMode"], mode)
        return NO_DATA

    async def cmd_set_follow_up_mode(self, command: Command) -> Any:
        mode = self._mode(command)
        self.rt.agent.follow_up_mode = mode
        set_global_setting(self.rt.agent.agent_dir, ["followUpMode"], mode)
        return NO_DATA

    def _switch(self, command: Command, key: str) -> bool:
        enabled = command.fields.get("enabled")
        if not isinstance(enabled, bool):
            raise RpcCommandError('"enabled" must be true or false')
        self.rt.agent.override_settings({key: {"enabled": enabled}})
        set_global_setting(self.rt.agent.agent_dir, [key, "enabled"], enabled)
        return enabled

    async def cmd_set_auto_compaction(self, command: Command) -> Any:
        self._switch(command, "compaction")
        return NO_DATA

    async def cmd_set_auto_retry(self, command: Command) -> Any:
        self._switch(command, "retry")
        return NO_DATA

    async def cmd_abort_retry(self, command: Command) -> Any:
        self.rt.agent.abort_retry()
        return NO_DATA

    # -- compaction -------------------------------------------------------------------------------

    async def cmd_compact(self, command: Command) -> Any:
        instructions = _string(command, "customInstructions", required=False)
        return dict(await self.rt.agent.compact(instructions))

    # -- bash -------------------------------------------------------------------------------------

    async def cmd_bash(self, command: Command) -> Any:
        text = _string(command, "command")
        assert text is not None
        flag = command.fields.get("excludeFromContext")
        exclude = flag if isinstance(flag, bool) else None  # pi writes only what was given
        agent = self.rt.agent

        def on_output(delta: str) -> None:
            record: dict[str, Any] = {"type": "bash_execution_update"}
            if command.id is not None:
                record["id"] = command.id
            record["delta"] = delta
            self.rt.emit_record(record)

        result, message = await run_user_bash(
            self.rt.bash,
            text,
            cwd=agent.cwd,
            settings=agent.settings_data(),
            timestamp=agent.session.now_ms,
            on_output=on_output,
            exclude_from_context=exclude,
        )
        self.rt.record_bash(cast(AgentMessage, message))
        return result.to_json()

    async def cmd_abort_bash(self, command: Command) -> Any:
        self.rt.bash.abort_all()
        return NO_DATA

    # -- session ----------------------------------------------------------------------------------

    async def cmd_get_session_stats(self, command: Command) -> Any:
        agent = self.rt.agent
        session = agent.session
        counts = {"user": 0, "assistant": 0, "toolResult": 0}
        tool_calls = total = 0
        for entry in session.entries:
            if entry.type != "message":
                continue
            total += 1
            if entry.role in counts:
                counts[entry.role] += 1
            if entry.role == "assistant":
                content = entry.data.get("message", {}).get("content") or []
                tool_calls += sum(
                    1 for b in content if isinstance(b, dict) and b.get("type") == "toolCall"
                )
        stats = agent.stats()
        record: dict[str, Any] = {}
        if session.file_path is not None:
            record["sessionFile"] = str(session.file_path)
        record["sessionId"] = session.id
        record["userMessages"] = counts["user"]
        record["assistantMessages"] = counts["assistant"]
        record["toolCalls"] = tool_calls
        record["toolResults"] = counts["toolResult"]
        record["totalMessages"] = total
        record["tokens"] = {
            "input": stats.input,
            "output": stats.output,
            "cacheRead": stats.cache_read,
            "cacheWrite": stats.cache_write,
            "total": stats.input + stats.output + stats.cache_read + stats.cache_write,
        }
        record["cost"] = stats.cost
        window = stats.context_window
        if window:
            used = stats.context_tokens
            record["contextUsage"] = {
                "tokens": used,
                "contextWindow": window,
                "percent": None if used is None else used / window * 100,
            }
        return record

    async def cmd_export_html(self, command: Command) -> Any:
        from pi_context.export import SessionDocument, default_html_name, export_html
        from pi_context.session_dirs import refuse_session_target

        session = self.rt.agent.session
        target = _string(command, "outputPath", required=False)
        if session.file_path is None:
            raise RpcCommandError("Cannot export in-memory session to HTML")
        if not session.is_persisted or not session.file_path.is_file():
            raise RpcCommandError("Nothing to export yet - start a conversation first")
        session.flush()
        out = Path(target) if target else Path(os.getcwd()) / default_html_name(session.file_path)
        # an export never takes the place of a session: the one being exported or any other
        refuse_session_target(out, session.file_path)
        written = export_html(SessionDocument.load(session.file_path), out)
        return {"path": str(written)}

    async def cmd_new_session(self, command: Command) -> Any:
        parent = _string(command, "parentSession", required=False)
        app = self.rt.agent
        return await self._replace(lambda: app.new_session(parent))

    async def cmd_switch_session(self, command: Command) -> Any:
        raw = _string(command, "sessionPath")
        assert raw is not None
        path = Path(raw)
        header = session_dirs.read_header(path) if path.is_file() else None
        work = header.get("cwd") if header else None
        if isinstance(work, str) and not os.path.isdir(work):
            raise RpcCommandError(
                f"Stored session working directory does not exist: {work}\n"
                f"Session file: {path}\nCurrent working directory: {os.getcwd()}"
            )
        app = self.rt.agent
        return await self._replace(lambda: app.open_session(path))

    async def cmd_fork(self, command: Command) -> Any:
        entry_id = _string(command, "entryId")
        session = self.rt.agent.session
        entry = session.get(entry_id) if entry_id is not None else None
        if entry is None or entry.type != "message" or entry.role != "user":
            raise RpcCommandError(INVALID_FORK_ENTRY)
        self._refuse_unsaved()
        app = self.rt.agent
        text: list[str] = []

        async def fork() -> AgentApi:
            forked, editor_text = await app.fork_before(entry.id)
            text.append(editor_text)
            return forked

        result = await self._replace(fork)
        return {"text": text[0], "cancelled": False} if text else result

    async def cmd_clone(self, command: Command) -> Any:
        if self.rt.agent.session.leaf_id is None:
            raise RpcCommandError("Cannot clone session: no current entry selected")
        self._refuse_unsaved()
        app = self.rt.agent
        return await self._replace(app.clone)

    def _refuse_unsaved(self) -> None:
        """pi forks and clones only a session whose file exists (an in-memory one is copied
        in memory)."""
        session = self.rt.agent.session
        if session.file_path is not None and not session.is_persisted:
            raise RpcCommandError(_NOT_SAVED)

    async def _replace(self, make: Callable[[], Awaitable[AgentApi]]) -> dict[str, Any]:
        """Replace the session; ``{"cancelled": true}`` when an extension said no."""
        try:
            await self.rt.replace(make)
        except SwitchCancelledError:
            return {"cancelled": True}
        return {"cancelled": False}

    async def cmd_get_fork_messages(self, command: Command) -> Any:
        rows = fork_messages(self.rt.agent.session)
        return {"messages": [{"entryId": row.entry_id, "text": row.text} for row in rows]}

    async def cmd_get_entries(self, command: Command) -> Any:
        session = self.rt.agent.session
        entries = list(session.entries)
        since = _string(command, "since", required=False)
        if since is not None:
            ids = [e.id for e in entries]
            if since not in ids:
                raise RpcCommandError(f"Entry not found: {since}")
            entries = entries[ids.index(since) + 1 :]
        return {"entries": [e.data for e in entries], "leafId": session.leaf_id}

    async def cmd_get_tree(self, command: Command) -> Any:
        session = self.rt.agent.session
        entries = list(session.entries)
        labels: dict[str, tuple[str, Any]] = {}
        for entry in entries:
            if entry.type == "label":
                target, label = entry.data.get("targetId"), entry.data.get("label")
                if isinstance(target, str):
                    if isinstance(label, str) and label:
                        labels[target] = (label, entry.data.get("timestamp"))
                    else:
                        labels.pop(target, None)
        nodes: dict[str, dict[str, Any]] = {}
        for entry in entries:
            node: dict[str, Any] = {"entry": entry.data, "children": []}
            if entry.id in labels:
                node["label"], node["labelTimestamp"] = labels[entry.id]
            nodes[entry.id] = node
        roots: list[dict[str, Any]] = []
        for entry in entries:
            parent = entry.parent_id
            if parent is None or parent == entry.id or parent not in nodes:
                roots.append(nodes[entry.id])
            else:
                nodes[parent]["children"].append(nodes[entry.id])
        for node in nodes.values():
            node["children"].sort(key=lambda n: str(n["entry"].get("timestamp", "")))
        return {"tree": roots, "leafId": session.leaf_id}

    async def cmd_get_last_assistant_text(self, command: Command) -> Any:
        for message in reversed(self.rt.agent.session.projection().messages):
            if message.get("role") != "assistant":
                continue
            text = user_text(message).strip()
            if message.get("stopReason") != "stop" and not text:
                continue
            return {"text": text} if text else {}
        return {}

    async def cmd_set_session_name(self, command: Command) -> Any:
        raw = _string(command, "name")
        name = (raw or "").strip()
        if not name:
            raise RpcCommandError("Session name cannot be empty")
        self.rt.agent.set_session_name(name)  # the runtime writes session_info_changed
        return NO_DATA

    async def cmd_get_commands(self, command: Command) -> Any:
        commands: list[dict[str, Any]] = []
        agent = self.rt.agent
        for registered in agent.extension_commands():
            entry: dict[str, Any] = {"name": registered.name}
            if registered.description:
                entry["description"] = registered.description
            entry["source"] = "extension"
            path, source = agent.extension_origin(registered.extension)
            if path is None and registered.extension.startswith("builtin:"):
                # the agent's own commands (``/mcp``), described as pi describes its built-ins
                entry["sourceInfo"] = {
                    "path": registered.extension,
                    "source": "builtin",
                    "scope": "temporary",
                    "origin": "top-level",
                }
            else:
                entry["sourceInfo"] = {"path": path or registered.extension, "source": source}
            commands.append(entry)
        commands += (_file_command(t.name, "prompt", t) for t in agent.prompt_templates())
        commands += (_file_command(f"skill:{s.name}", "skill", s) for s in agent.skills())
        return {"commands": commands}


class _FileResource(Protocol):
    """What a command read from a file (a prompt template, a skill) tells ``get_commands``."""

    @property
    def description(self) -> str: ...
    @property
    def file_path(self) -> str: ...
    @property
    def source_info(self) -> SkillSourceInfo | None: ...


def _file_command(name: str, source: str, resource: _FileResource) -> dict[str, Any]:
    """A ``get_commands`` record for a command read from a file, in pi's key order."""
    record: dict[str, Any] = {"name": name}
    if resource.description:
        record["description"] = resource.description
    record["source"] = source
    record["sourceInfo"] = (
        resource.source_info.to_json()
        if resource.source_info is not None
        else {"path": resource.file_path}
    )
    return record
