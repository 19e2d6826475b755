"""codemode: the sandboxed script engine and the tool over MCP servers."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from pi_context.agent.session import AgentSession
from pi_context.mcp.codemode_shapes import mcp_shape
from pi_context.mcp.script import run_script
from pi_context.testing import ScriptedModel, SequentialIds, reply
from tests.jsonview import as_json
from tests.mcp.conftest import WriteConfig, stdio_entry


async def no_host(kind: str, payload: str) -> str:
    return json.dumps({"value": [] if kind == "all" else None})


async def test_the_sandbox_has_no_timers_modules_or_network() -> None:
    code = "return [typeof setTimeout, typeof setInterval, typeof require, typeof fetch, typeof process].join()"
    result = await run_script(code, no_host)
    assert result.ok
    assert result.outputs == ["undefined,undefined,undefined,undefined,undefined"]


async def test_a_busy_loop_is_stopped_and_errors_are_reported() -> None:
    stopped = await run_script("while (true) {}", no_host, timeout=0.5)
    assert (stopped.ok, stopped.error) == (False, "Script timed out after 0.5 seconds")
    broken = await run_script("this is not javascript", no_host)
    assert broken.error is not None
    assert broken.error.startswith("SyntaxError: ")
    thrown = await run_script("console.log('before'); throw new Error('boom')", no_host)
    assert (thrown.ok, thrown.logs, thrown.error) == (False, ["before"], "boom")


async def test_cancelling_a_script_ends_it() -> None:
    task = asyncio.ensure_future(run_script("while (true) {}", no_host))
    await asyncio.sleep(0.2)
    task.cancel()
    await asyncio.wait([task])
    assert task.cancelled()


def test_result_shapes() -> None:
    assert mcp_shape(None) == "`{ content, structuredContent?, isError? }`"
    schema = {
        "type": "object",
        "properties": {"city": {}, "temp_c": {}, "unit": {"const": "C"}},
        "required": ["city"],
    }
    assert (
        mcp_shape(schema)
        == '`{ content, structuredContent?: { city, temp_c?, unit: "C" }, isError? }`'
    )


async def test_codemode_over_a_server(
    project_dir: Path, agent_dir: Path, write_config: WriteConfig
) -> None:
    write_config({"cm": stdio_entry("cm", description="Echo and weather")})
    script = "\n".join(
        [
            "const found = await searchTools('weather city', {limit: 1});",
            "const ns = await describeNamespace('cm');",
            "const w = await tools.mcp__cm__weather({city: 'Oslo'});",
            "text(found.map(t => t.name));",
            "text(ns.tools.length > 5 && ns.description);",
            "console.log(ALL_TOOLS.some(t => t.name === 'read'));",
            "try { await tools.mcp__cm__nope({}); } catch (e) { console.log(e.message); }",
            "return w.structuredContent;",
        ]
    )
    model = ScriptedModel([])
    model.add(reply(tool_calls=[("codemode", {"code": script})]), reply("ok"))
    sess = await AgentSession.create(
        cwd=project_dir,
        model=model,
        agent_dir=agent_dir,
        trusted=True,
        ids=SequentialIds(),
        mcp=True,
    )
    try:
        events = await sess.run("weather?")
    finally:
        await sess.aclose()
    first = model.requests[0]
    declared: dict[str, Any] = {t["name"]: t for t in first.tools}
    # the server's tools (and its resource tools) are reached through the script only
    assert list(declared) == ["read", "bash", "edit", "write", "codemode"]
    assert declared["read"]["description"].endswith(
        "\n\nCodemode: `tools.read(args)` resolves to a string."
    )
    assert "Codemode:" not in declared["codemode"]["description"]
    end = next(e for e in events if e.type == "tool_execution_end")
    text = as_json(end.to_json())["result"]["content"][0]["text"]
    assert text.startswith("Script completed\nWall time ")
    body = text.split("Output:\n", 1)[1]
    assert body.startswith(
        '==> text 1/3 <==\n[\n  "mcp__cm__weather"\n]\n==> text 2/3 <==\nEcho and weather\n'
    )
    assert '==> text 3/3 <==\n{\n  "city": "Oslo",\n  "temp_c": 21\n}\n' in body
    assert body.endswith(
        "<console_output>\ntrue\ntools.mcp__cm__nope does not exist. Use searchTools() or ALL_TOOLS to find tools.\n</console_output>"
    )
