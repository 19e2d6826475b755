"""The optional built-ins ``grep``, ``find`` and ``ls``: registered in every session, active only
when ``--tools`` or ``defaultTools`` names them."""

from __future__ import annotations

from pathlib import Path

from pi_context.agent.tool_selection import parse_tool_selection
from pi_context.testing import ScriptedModel, reply

from .conftest import MakeSession


async def test_they_start_inactive(make_session: MakeSession) -> None:
    sess = await make_session(None)
    assert sess.get_active_tools() == ["read", "bash", "edit", "write"]
    sess.set_active_tools(["read", "ls"])  # registered: they can be switched on
    assert sess.get_active_tools() == ["read", "ls"]
    await sess.aclose()


async def test_tools_flag_and_default_tools_turn_them_on(make_session: MakeSession) -> None:
    sess = await make_session(None, tool_selection=parse_tool_selection("read,grep,find,ls"))
    assert sess.get_active_tools() == ["read", "grep", "find", "ls"]
    await sess.aclose()
    sess = await make_session(None, tool_selection=parse_tool_selection("+grep,-write"))
    assert sess.get_active_tools() == ["read", "bash", "edit", "grep"]
    await sess.aclose()
    sess = await make_session(None, settings={"defaultTools": ["read", "find"]})
    assert sess.get_active_tools() == ["read", "find"]
    await sess.aclose()


async def test_the_model_calls_them(make_session: MakeSession, project_dir: Path) -> None:
    (project_dir / "notes.txt").write_text("alpha\nbeta\n")
    model = ScriptedModel(
        [reply(tool_calls=[("grep", {"pattern": "bet"}), ("ls", {})]), reply("done")]
    )
    sess = await make_session(model, tool_selection=parse_tool_selection("grep,ls"))
    await sess.run("look")
    texts = [
        "".join(b["text"] for b in e.message["content"] if b["type"] == "text")
        for e in sess.session.entries
        if e.message is not None and e.message["role"] == "toolResult"
    ]
    declared = [t["name"] for t in model.requests[0].tools]
    await sess.aclose()
    assert declared == ["grep", "ls"]
    assert texts == ["notes.txt:2: beta", "notes.txt"]


async def test_tools_entries_that_no_tool_answers_to(make_session: MakeSession) -> None:
    selection = parse_tool_selection("read,grep,nosuch,mcp__x__y,gr*,zz*", exclude="gone")
    sess = await make_session(None, tool_selection=selection)
    registered = sess.get_all_tools()
    await sess.aclose()
    assert registered == ["read", "grep"]
    assert selection.unknown_names(registered) == ["nosuch", "zz*"]
    assert parse_tool_selection("+ls,+nope,-write").unknown_names(registered) == ["ls", "nope"]
    assert parse_tool_selection("x", exclude="x").unknown_names(registered) == []
