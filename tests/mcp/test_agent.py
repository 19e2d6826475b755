"""MCP servers in an agent session: declarations, the section, calls, tool_search, restore."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from pi_context.agent.session import AgentSession
from pi_context.agent.tool_selection import parse_tool_selection
from pi_context.events import ToolExecutionEnd
from pi_context.prompt import build_system_prompt
from pi_context.testing import ScriptedModel, SequentialIds, reply
from tests.jsonview import as_json
from tests.mcp.conftest import WriteConfig, stdio_entry


async def session(
    project_dir: Path, agent_dir: Path, model: ScriptedModel, **kw: Any
) -> AgentSession:
    """A session with MCP on. Its first prompt waits for direct servers without pi's 10 s
    bound, so a slow machine does not change what the first request declares."""
    sess = await AgentSession.create(
        cwd=project_dir,
        model=model,
        agent_dir=agent_dir,
        trusted=True,
        ids=SequentialIds(),
        mcp=True,
        **kw,
    )
    assert sess.mcp is not None
    sess.mcp.first_prompt_wait = 600
    return sess


def names(request: Any) -> list[str]:
    return [t["name"] for t in request.tools]


def system_text(request: Any) -> str:
    return "\n".join(
        str(m.get("content") or m.get("sections"))
        for m in as_json(request.messages)
        if m.get("role") == "system"
    )


async def test_first_request_declares_direct_tools_and_lists_the_others(
    project_dir: Path, agent_dir: Path, write_config: WriteConfig
) -> None:
    write_config(
        {
            "direct-srv": stdio_entry(
                "direct-srv",
                exposure="direct",
                toolExposure={
                    "crash": "hidden",
                    "grow": "hidden",
                    "slow": "hidden",
                    "log": "hidden",
                    "big": "hidden",
                    "fail": "hidden",
                },
            ),
            "deferred": stdio_entry(
                "deferred", exposure="deferred", description="Deferred demo: echoes and weather"
            ),
            "cm": stdio_entry("cm"),
        }
    )
    model = ScriptedModel([])
    model.add(reply("hi"))
    sess = await session(project_dir, agent_dir, model)
    try:
        await sess.run("hello")
        first = model.requests[0]
        assert names(first) == [
            "read",
            "bash",
            "edit",
            "write",
            "codemode",
            "tool_search",
            "mcp__direct_srv__echo",
            "mcp__direct_srv__weather",
            "list_mcp_resources",
            "list_mcp_resource_templates",
            "read_mcp_resource",
        ]
        prompt = sess.system_prompt
        section = prompt[prompt.index("<mcp_servers>") :]
        assert section.endswith("</mcp_servers>")
        lines = section.splitlines()
        # the codemode server's summary comes from its instructions once connected
        assert lines[2].startswith("- mcp__cm (codemode)")
        assert lines[3] == "- mcp__deferred (tool_search): Deferred demo: echoes and weather"
        assert len(lines) == 5  # direct-srv is not listed: all its tools are declared
        assert prompt.index("<cwd>") < prompt.index("<mcp_servers>")
    finally:
        await sess.aclose()


async def test_direct_call_tool_search_and_loaded_declarations(
    project_dir: Path, agent_dir: Path, write_config: WriteConfig
) -> None:
    write_config(
        {
            "d": stdio_entry(
                "d", exposure="direct", toolExposure={"crash": "hidden", "grow": "hidden"}
            ),
            "lazy": stdio_entry("lazy", exposure="deferred", description="Weather lookups"),
        }
    )
    model = ScriptedModel([])
    model.add(
        reply(tool_calls=[("mcp__d__echo", {"text": "hi"}), ("mcp__d__fail", {})]),
        reply(tool_calls=[("tool_search", {"query": "weather city", "limit": 1})]),
        reply(tool_calls=[("mcp__lazy__weather", {"city": "Oslo"})]),
        reply("done"),
    )
    sess = await session(project_dir, agent_dir, model)
    try:
        events = await sess.run("go")
        # the two direct calls run side by side: their ends come in the order they finish
        order = ["mcp__d__echo", "mcp__d__fail", "tool_search", "mcp__lazy__weather"]
        results = sorted(
            (e for e in events if isinstance(e, ToolExecutionEnd)),
            key=lambda e: order.index(e.tool_name),
        )
        echo, fail, search, weather = (as_json(e.to_json())["result"] for e in results)
        assert echo["content"] == [{"type": "text", "text": "echo: hi"}]
        assert echo["details"] == {"server": "d", "tool": "echo"}
        assert fail["content"] == [{"type": "text", "text": "Error executing tool fail"}]
        assert [as_json(e.to_json())["isError"] for e in results] == [False, True, False, False]
        assert search["content"][0]["text"].startswith(
            "Loaded 1 tool. They are available from your next call:\n- mcp__lazy__weather: Current weather for a city"
        )
        assert search["details"] == {"loaded": ["mcp__lazy__weather"]}
        assert "mcp__lazy__weather" not in names(model.requests[1])
        assert names(model.requests[2])[-1] == "mcp__lazy__weather"
        assert weather["content"][0]["text"] == '{\n  "city": "Oslo",\n  "temp_c": 21\n}'
        # the loaded tool is recorded as a tool delta in the transcript
        added = [
            m
            for m in as_json(sess.session.messages())
            if m.get("role") == "system" and m.get("toolsAdded")
        ]
        assert any(t["name"] == "mcp__lazy__weather" for m in added for t in m["toolsAdded"])
    finally:
        await sess.aclose()


async def test_no_server_process_is_left_after_close(
    project_dir: Path, agent_dir: Path, write_config: WriteConfig
) -> None:
    mark = {"DEMO_MARK": str(agent_dir)}
    write_config(
        {
            "a": stdio_entry("a", exposure="direct", env=mark),
            "b": stdio_entry("b", exposure="deferred", env=mark),
        }
    )
    model = ScriptedModel([])
    model.add(reply("ok"))
    sess = await session(project_dir, agent_dir, model)
    await sess.run("x")
    assert sess.mcp is not None
    await sess.mcp.ready(None)
    assert len(server_pids(agent_dir)) == 2
    await sess.aclose()
    assert server_pids(agent_dir) == []


def server_pids(agent_dir: Path) -> list[int]:
    """Live demo servers started for this test (marked by the agent dir in their env)."""
    mark = f"DEMO_MARK={agent_dir}".encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as env, open(f"/proc/{entry}/stat") as stat:
                if mark in env.read().split(b"\0") and stat.read().split()[2] != "Z":
                    found.append(int(entry))
        except OSError:
            continue
    return found


async def test_a_broken_config_is_reported_and_the_agent_starts(
    project_dir: Path, agent_dir: Path, write_config: WriteConfig
) -> None:
    (agent_dir / "mcp.json").write_text("{not json")
    notices: list[tuple[str, str]] = []
    model = ScriptedModel([])
    model.add(reply("fine"))
    sess = await session(project_dir, agent_dir, model)

    class UI:
        def notify(self, message: str, kind: Any = None) -> None:
            notices.append((message, kind))

    sess.set_extension_ui(UI(), "rpc")  # type: ignore[arg-type]
    try:
        await sess.run("x")
        assert names(model.requests[0]) == ["read", "bash", "edit", "write"]
        assert "<mcp_servers>" not in build_system_prompt(sess._loadout.options())
        assert sess.mcp is not None
        assert sess.mcp.config.errors[0].startswith(f"{agent_dir / 'mcp.json'}: ")
    finally:
        await sess.aclose()


async def test_tools_allowlist_keeps_deferred_tools_searchable_but_not_direct_ones(
    project_dir: Path, agent_dir: Path, write_config: WriteConfig
) -> None:
    write_config(
        {"d": stdio_entry("d", exposure="direct"), "l": stdio_entry("l", exposure="deferred")}
    )
    model = ScriptedModel([])
    model.add(reply("ok"))
    sess = await session(
        project_dir, agent_dir, model, tool_selection=parse_tool_selection("read,mcp__d__echo")
    )
    try:
        await sess.run("x")
        assert names(model.requests[0]) == ["read", "mcp__d__echo"]
    finally:
        await sess.aclose()


async def test_a_session_that_used_pis_codemode_opens_and_continues(
    project_dir: Path, agent_dir: Path, write_config: WriteConfig, tmp_path: Path
) -> None:
    """pi records ``codemode`` in the loadout and its calls in the transcript; pictx restores
    it and the next script runs against the same server."""
    path = tmp_path / "pi.jsonl"
    source = Path(__file__).parent / "data" / "pi_codemode_session.jsonl"
    path.write_bytes(source.read_bytes())
    write_config({"cm": stdio_entry("cm")})
    script = "const r = await tools.mcp__cm__echo({text: 'again'});\nreturn r.content[0].text;"
    model = ScriptedModel([])
    model.add(reply(tool_calls=[("codemode", {"code": script})]), reply("continued"))
    sess = await AgentSession.open(
        path, cwd=project_dir, model=model, agent_dir=agent_dir, trusted=True, mcp=True
    )
    try:
        events = await sess.run("and now?")
        request = model.requests[0]
        assert names(request) == ["read", "bash", "edit", "write", "codemode"]
        texts = [str(m) for m in as_json(request.messages)]
        assert any("Script completed" in t for t in texts)  # pi's codemode result is kept
        end = next(e for e in events if e.type == "tool_execution_end")
        result = as_json(end.to_json())["result"]
        text = result["content"][0]["text"]
        assert text.startswith("Script completed\nWall time ")
        assert text.endswith(" seconds\nOutput:\necho: again")
        assert [c["name"] for c in result["details"]["calls"]] == ["mcp__cm__echo"]
        assert as_json(sess.session.messages())[-1]["content"][0]["text"] == "continued"
    finally:
        await sess.aclose()


async def test_unreachable_tools_are_reported_once_a_front_end_listens(
    project_dir: Path, agent_dir: Path, write_config: WriteConfig
) -> None:
    write_config({"cm": {"command": "/nonexistent/binary"}}, autoEnableCodemode=False)
    notices: list[tuple[str, Any]] = []

    class UI:
        def notify(self, message: str, kind: Any = None) -> None:
            notices.append((message, kind))

    sess = await session(project_dir, agent_dir, ScriptedModel([]))
    try:
        assert sess.mcp is not None
        await sess.mcp.ready(None)
        sess.set_extension_ui(UI(), "rpc")  # type: ignore[arg-type]
        await asyncio.sleep(0)
        assert notices[0] == (
            "MCP tools are only reachable from the codemode or tool_search tool, but neither is"
            " active (autoEnableCodemode is false); they cannot be called.",
            "warning",
        )
        assert notices[1] == (
            "MCP servers need attention:\n  cm: failed: spawn /nonexistent/binary ENOENT\n\n"
            "Run /mcp to fix.",
            "warning",
        )
        assert sess.mcp.status_text() == (
            "cm: failed (codemode)\n    spawn /nonexistent/binary ENOENT"
        )
    finally:
        await sess.aclose()


async def test_a_direct_server_late_for_the_first_prompt_is_declared_from_the_next(
    project_dir: Path, agent_dir: Path, write_config: WriteConfig, tmp_path: Path
) -> None:
    gate = tmp_path / "go"
    hidden = dict.fromkeys(("big", "fail", "slow", "log", "crash", "grow", "weather"), "hidden")
    write_config(
        {
            "late": stdio_entry(
                "late", exposure="direct", toolExposure=hidden, env={"DEMO_WAIT_FILE": str(gate)}
            )
        }
    )
    notices: list[tuple[str, Any]] = []

    class UI:
        def notify(self, message: str, kind: Any = None) -> None:
            notices.append((message, kind))

    model = ScriptedModel([])
    model.add(reply("one"), reply("two"))
    sess = await session(project_dir, agent_dir, model)
    sess.set_extension_ui(UI(), "rpc")  # type: ignore[arg-type]
    assert sess.mcp is not None
    sess.mcp.first_prompt_wait = 0.1  # the server waits for the gate, so this always expires
    try:
        await sess.run("first")
        assert notices == [
            (
                "MCP servers are still connecting; their tools become available once connected.",
                "info",
            )
        ]
        assert names(model.requests[0]) == ["read", "bash", "edit", "write"]
        gate.touch()
        await sess.mcp.ready(None)
        await sess.run("second")
        assert names(model.requests[1])[4:] == [
            "mcp__late__echo",
            "list_mcp_resources",
            "list_mcp_resource_templates",
            "read_mcp_resource",
        ]
        patch = [m for m in as_json(sess.session.messages()) if m.get("role") == "system"][-1]
        assert [t["name"] for t in patch["toolsAdded"]] == names(model.requests[1])[4:]
        assert "sections" not in patch  # a tool delta, the prompt text is unchanged
    finally:
        await sess.aclose()


async def test_loaded_tools_of_a_server_not_back_at_resume_are_dropped(
    project_dir: Path, agent_dir: Path, write_config: WriteConfig, tmp_path: Path
) -> None:
    """A tool tool_search loaded is recorded; on resume it comes back only if its server has
    registered it by the time the next run starts (pi does not wait for deferred servers)."""
    path = tmp_path / "s.jsonl"
    write_config({"lazy": stdio_entry("lazy", exposure="deferred")})
    model = ScriptedModel([])
    model.add(reply(tool_calls=[("tool_search", {"query": "echo", "limit": 1})]), reply("ok"))
    first = await AgentSession.create(
        cwd=project_dir, session_file=path, model=model, agent_dir=agent_dir, trusted=True, mcp=True
    )
    try:
        await first.run("load it")
    finally:
        await first.aclose()
    assert names(model.requests[1])[-1] == "mcp__lazy__echo"
    gate = tmp_path / "never"  # the server never starts this time
    write_config(
        {"lazy": stdio_entry("lazy", exposure="deferred", env={"DEMO_WAIT_FILE": str(gate)})}
    )
    model.add(reply("again"))
    second = await AgentSession.open(path, model=model, agent_dir=agent_dir, trusted=True, mcp=True)
    try:
        await second.run("and now")
    finally:
        await second.aclose()
    assert names(model.requests[2]) == ["read", "bash", "edit", "write", "tool_search"]
    patch = [m for m in as_json(second.session.messages()) if m.get("role") == "system"][-1]
    assert patch["toolsRemoved"] == [{"name": "mcp__lazy__echo"}]


async def test_reload_reads_mcp_json_again(
    project_dir: Path, agent_dir: Path, write_config: WriteConfig
) -> None:
    write_config({"a": stdio_entry("a", exposure="deferred", description="First")})
    model = ScriptedModel([])
    model.add(reply("one"), reply("two"))
    sess = await session(project_dir, agent_dir, model)
    try:
        await sess.run("x")
        write_config({"b": stdio_entry("b", exposure="deferred", description="Second")})
        await sess.reload()
        await sess.run("y")
        assert sess.mcp is not None
        assert list(sess.mcp.connections) == ["b"]
        assert "- mcp__b (tool_search): Second" in sess.system_prompt
        assert "mcp__a" not in sess.system_prompt
    finally:
        await sess.aclose()
