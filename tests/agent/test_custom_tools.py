"""Custom tools in a running session: any result is stored as the call's result, a plain
function runs, and a tool named like a built-in replaces it only when it asks to."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from pi_context.extensions import ExtensionAPI, load_extensions
from pi_context.session import Session
from pi_context.testing import ScriptedModel, reply
from pi_context.tools import FunctionTool, default_tools

from .conftest import MakeSession

_SCHEMA: dict[str, Any] = {"type": "object", "properties": {"n": {"type": "integer"}}}


def _results(session: Session) -> list[tuple[str, str, bool]]:
    out = []
    for entry in session.entries:
        message = entry.message
        if message is not None and message["role"] == "toolResult":
            text = "".join(b["text"] for b in message["content"] if b["type"] == "text")
            out.append((message["toolCallId"], text, message["isError"]))
    return out


async def test_data_results_and_plain_functions_leave_every_call_with_its_result(
    make_session: MakeSession, project_dir: Path
) -> None:
    async def stats(args: dict[str, Any], cwd: Path) -> dict[str, int]:
        return {"files": 3, "n": args.get("n", 0)}

    def count(args: dict[str, Any], cwd: Path) -> int:  # synchronous
        return 41 + int(args.get("n", 0))

    tools = [FunctionTool("stats", "s", _SCHEMA, stats), FunctionTool("count", "c", _SCHEMA, count)]
    model = ScriptedModel(
        [
            reply(tool_calls=[("stats", {"n": 2}), ("count", {"n": 1})]),
            reply("done"),
        ]
    )
    path = project_dir / "s.jsonl"
    sess = await make_session(model, tools=tools, session_file=path)
    await sess.run("go")
    await sess.aclose()
    calls = [
        c["id"]
        for m in model.requests[1].messages
        if m["role"] == "assistant"
        for c in m["content"]
        if c["type"] == "toolCall"
    ]
    assert _results(Session.open(path)) == [
        (calls[0], '{"files": 3, "n": 2}', False),
        (calls[1], "42", False),
    ]


async def test_a_second_tool_named_like_a_built_in_must_ask_to_replace_it(
    make_session: MakeSession, project_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async def fake_read(args: dict[str, Any], cwd: Path) -> str:
        return "fake"

    schema: dict[str, Any] = {"type": "object", "properties": {"path": {"type": "string"}}}
    unasked = FunctionTool("read", "r", schema, fake_read)
    with pytest.raises(ValueError, match=r"two tools named 'read' \(pass replaces_builtin=True"):
        await make_session(None, tools=[*default_tools(project_dir), unasked])

    asked = FunctionTool("read", "r", schema, fake_read, replaces_builtin=True)
    model = ScriptedModel([reply(tool_calls=[("read", {"path": "x"})]), reply("ok")])
    with caplog.at_level(logging.INFO, logger="pi_context.tools"):
        sess = await make_session(model, tools=[*default_tools(project_dir), asked])
    assert "tool 'read' replaces the built-in tool of that name" in caplog.text
    assert sess.get_active_tools() == ["read", "bash", "edit", "write"]
    await sess.run("read x")
    assert [text for _, text, _ in _results(sess.session)] == ["fake"]


def test_an_extension_tool_with_a_built_in_name_is_refused_unless_it_asks() -> None:
    async def fake(args: dict[str, Any], cwd: Path) -> str:
        return "fake"

    def unasked(pi: ExtensionAPI) -> None:
        pi.register_tool(FunctionTool("bash", "b", _SCHEMA, fake))

    def asked(pi: ExtensionAPI) -> None:
        pi.register_tool(FunctionTool("bash", "b", _SCHEMA, fake, replaces_builtin=True))

    runner = load_extensions(
        cwd=Path("."),
        entry_points=False,
        include_discovered=False,
        registrations=[("unasked", unasked), ("asked", asked)],
    )
    [error] = runner.load_errors
    assert str(error).endswith(
        "register_tool: 'bash' is a built-in tool's name; set replaces_builtin=True "
        "on the tool to replace the built-in"
    )
    assert "extension unasked" in str(error)
    assert [t.name for t in runner.tools()] == ["bash"]
