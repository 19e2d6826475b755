"""The ``codemode`` tool: the model writes a JavaScript script that calls tools.

pi's default MCP exposure reaches server tools through this one declaration instead of one
declaration per tool: the script calls ``await tools.<id>(args)`` (MCP tools resolve to their
whole ``CallToolResult``, other tools to their text), can find tools with
``searchTools(query)``, read one with ``describeTool(name)`` and list a server's with
``describeNamespace(name)``, and returns only what the model needs — a large result can be
filtered before it ever reaches the context. While ``codemode`` is active every declared tool
says in its description what ``tools.<id>`` resolves to, because the model may call it both
ways.

The script runs in a fresh V8 isolate (:mod:`.script`); nested calls go through the same
validation as direct calls and are listed in the result's ``details.calls``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final, Protocol

from pi_context.messages import text_block
from pi_context.tools.base import (
    AbortSignal,
    Tool,
    ToolOutcome,
    UpdateCallback,
    run_tool,
    validate_arguments,
)

from .naming import tool_identifier
from .script import run_script
from .search import SearchDocument, rank_tools

__all__ = ["CodemodeHost", "CodemodeTool", "codemode_suffix", "resolves_to", "script_callable"]

CODEMODE: Final = "codemode"

DESCRIPTION: Final = """Run JavaScript to call tools. The code is the body of an async function \
(raw JavaScript: no JSON wrapper, no Markdown fence) run in a sandbox without Node, file \
system, network or timers. `await tools.<name>(args)` calls a tool and resolves to what its \
declaration says (MCP tools resolve to their whole result object). Use it to make several \
independent calls at once or to keep only the part of a large result you need.

Globals:
- `text(value)`: add a value to the output (strings as they are, other values as JSON)
- `console.log(...)`: add a line to the console output
- `return value`: add the value to the output and end the script
- `ALL_TOOLS`: every tool the script can call, as `{ name, description }`
- `await searchTools(query, { limit?, namespace? })`: tools matching keywords, best first
- `await describeTool(name)`: a tool's full description and parameters
- `await describeNamespace(name)`: an MCP server's description, instructions and tool names"""


class CodemodeHost(Protocol):
    """What the tool needs from the agent: the tools a script may call and their namespaces."""

    def script_tools(self) -> list[Tool]:
        """Deferred tools plus active direct tools, ``codemode`` excluded."""

    def namespaces(self) -> Mapping[str, Mapping[str, Any]]:
        """``mcp__<server>`` → ``{name, description?, instructions?, aliases}``."""

    async def wait_for_servers(self, code: str) -> None:
        """Wait for the servers the script may reach."""


def resolves_to(tool: Tool) -> str:
    """What ``tools.<id>`` resolves to, as the declaration suffix says it."""
    shape = getattr(tool, "codemode_shape", None)
    return str(shape) if shape else "a string"


def codemode_suffix(tool: Tool) -> str:
    return (
        f"\n\nCodemode: `tools.{tool_identifier(tool.name)}(args)` resolves to {resolves_to(tool)}."
    )


def _declaration_text(tool: Tool) -> str:
    lines = [tool.description.strip()]
    lines += [f"- {g}" for g in tool.prompt_guidelines]
    schema = json.dumps(tool.parameters, indent=2, ensure_ascii=False)
    lines.append(
        "codemode tool declaration:\n```ts\n"
        f"declare function {tool_identifier(tool.name)}(args: {schema}): Promise<{resolves_to(tool).strip('`')}>;\n```"
    )
    return "\n\n".join(lines)


class CodemodeTool(Tool):
    """Runs a script that calls the agent's tools."""

    name = CODEMODE
    exposure = "model-only"
    description = DESCRIPTION
    prompt_snippet = "Run a JavaScript script that calls tools and combines their results"
    prompt_guidelines = (
        "Use codemode to batch independent tool calls, or to filter a large tool result down "
        "to what you need before it reaches the conversation",
    )
    parameters: dict[str, Any] = {  # noqa: RUF012 - one schema shared by instances
        "type": "object",
        "required": ["code"],
        "properties": {
            "code": {
                "type": "string",
                "description": "Raw JavaScript source: the body of an async function",
            }
        },
    }

    def __init__(self, host: CodemodeHost) -> None:
        self._host = host

    async def execute(
        self,
        call_id: str,
        arguments: dict[str, Any],
        *,
        cwd: Path,
        signal: AbortSignal | None = None,
        on_update: UpdateCallback | None = None,
    ) -> ToolOutcome:
        del on_update
        code = str(arguments.get("code", ""))
        await self._host.wait_for_servers(code)
        tools = {tool_identifier(t.name): t for t in self._host.script_tools()}
        calls: list[dict[str, Any]] = []

        async def call(payload: Mapping[str, Any]) -> Any:
            identifier = str(payload.get("name"))
            tool = tools.get(identifier)
            if tool is None:
                raise LookupError(
                    f"tools.{identifier} does not exist. Use searchTools() or ALL_TOOLS to find tools."
                )
            args = payload.get("args")
            entry: dict[str, Any] = {
                "id": f"{call_id}/{len(calls) + 1}",
                "name": tool.name,
                "status": "running",
                "arguments": args,
            }
            calls.append(entry)
            started = time.monotonic()
            raw = getattr(tool, "call_raw", None)
            try:
                if raw is not None:
                    value = await raw(validate_arguments(tool, args))
                else:
                    outcome = await run_tool(tool, str(entry["id"]), args, cwd=cwd, signal=signal)
                    if outcome.is_error:
                        raise RuntimeError(outcome.text)
                    value = outcome.text
            except Exception as exc:
                entry.update(status="error", error=str(exc))
                raise
            finally:
                entry["durationMs"] = round((time.monotonic() - started) * 1000)
            entry["status"] = "ok"
            return value

        async def host(kind: str, payload_json: str) -> str:
            if signal is not None and signal.is_set():
                return json.dumps({"error": "Script aborted"})
            payload = json.loads(payload_json)
            if kind == "call":
                value = await call(payload)
            elif kind == "all":
                value = [{"name": i, "description": _declaration_text(t)} for i, t in tools.items()]
            elif kind == "search":
                value = self._search(tools, payload)
            elif kind == "describe":
                tool = tools.get(tool_identifier(str(payload.get("name"))))
                value = _declaration_text(tool) if tool is not None else None
            elif kind == "namespace":
                value = self._namespace(tools, str(payload.get("name")))
            else:
                raise LookupError(f"unknown host call {kind}")
            return json.dumps({"value": value}, ensure_ascii=False)

        started = time.monotonic()
        result = await run_script(code, host)
        wall = time.monotonic() - started
        head = "Script completed" if result.ok else "Script failed"
        parts = [f"{head}\nWall time {wall:.1f} seconds\nOutput:\n"]
        outputs = result.outputs
        for index, item in enumerate(outputs, start=1):
            parts.append(
                f"==> text {index}/{len(outputs)} <==\n{item}\n"
                if len(outputs) > 1
                else f"{item}\n"
            )
        if result.logs:
            parts.append("<console_output>\n" + "\n".join(result.logs) + "\n</console_output>\n")
        if not result.ok:
            parts.append(f"Script error: {result.error}\n")
        text = "".join(parts).rstrip("\n")
        details = {"calls": [{k: v for k, v in c.items() if k != "arguments"} for c in calls]}
        return ToolOutcome([text_block(text)], details, not result.ok)

    def _search(
        self, tools: Mapping[str, Tool], payload: Mapping[str, Any]
    ) -> list[dict[str, str]]:
        options = payload.get("options") or {}
        limit = options.get("limit", 8)
        limit = int(limit) if isinstance(limit, (int, float)) and limit >= 1 else 8
        wanted = options.get("namespace")
        pool = list(tools.items())
        if isinstance(wanted, str) and wanted:
            keys = self._namespace_keys(wanted)
            pool = [(i, t) for i, t in pool if tool_identifier(getattr(t, "namespace", "")) in keys]
        docs = [
            SearchDocument(t.name, t.description, t.parameters, getattr(t, "namespace_text", ""))
            for _, t in pool
        ]
        ranked = rank_tools(str(payload.get("query", "")), docs, limit)
        by_name = {t.name: (i, t) for i, t in pool}
        return [
            {"name": by_name[d.name][0], "description": _declaration_text(by_name[d.name][1])}
            for d in ranked
        ]

    def _namespace_keys(self, name: str) -> set[str]:
        """A namespace by its name or alias, also spelled as an identifier."""
        return {tool_identifier(name), tool_identifier(f"mcp__{name}")}

    def _namespace(self, tools: Mapping[str, Tool], name: str) -> dict[str, Any] | None:
        keys = self._namespace_keys(name)
        for namespace, info in self._host.namespaces().items():
            if tool_identifier(namespace) in keys:
                out: dict[str, Any] = {"name": namespace}
                if info.get("description"):
                    out["description"] = info["description"]
                if info.get("instructions"):
                    out["instructions"] = info["instructions"]
                out["tools"] = [
                    i for i, t in tools.items() if getattr(t, "namespace", "") == namespace
                ]
                return out
        return None


def script_callable(tools: Sequence[Tool], active: Sequence[str]) -> list[Tool]:
    """Deferred tools and active direct tools (never ``codemode`` or other model-only tools)."""
    live = set(active)
    return [
        t
        for t in tools
        if t.name != CODEMODE
        and (t.exposure == "deferred" or (t.exposure == "direct" and t.name in live))
    ]
