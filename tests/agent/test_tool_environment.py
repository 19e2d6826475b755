"""What the model's tools get from the session they run in: the bash tool's ``PI_*`` session
variables and shell settings, and the ``recall`` tool beside a caller's own tool list."""

from __future__ import annotations

from pathlib import Path

import pytest

from pi_context.model import ModelInfo
from pi_context.session import Session
from pi_context.testing import ScriptedModel, reply
from pi_context.tools import FunctionTool, default_tools

from .conftest import MakeSession

_PRINT_ENV = (
    'printf \'%s|%s|%s|%s|%s\' "$PI_SESSION_ID" "${PI_SESSION_FILE-unset}" '
    '"$PI_PROVIDER" "$PI_MODEL" "$PI_REASONING_LEVEL"'
)


def _tool_texts(session: Session) -> list[str]:
    out = []
    for entry in session.entries:
        message = entry.message
        if message is not None and message["role"] == "toolResult":
            out.append("".join(b["text"] for b in message["content"] if b["type"] == "text"))
    return out


def _model(provider: str, model_id: str, *replies: object) -> ScriptedModel:
    info = ModelInfo(
        provider=provider, id=model_id, api="scripted", context_window=128_000, max_tokens=1024
    )
    return ScriptedModel(list(replies), model_info=info)  # type: ignore[arg-type]


async def test_bash_commands_see_the_live_session_variables(
    make_session: MakeSession, project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PI_MODEL", "inherited")  # a value from pi's own parent is replaced
    monkeypatch.setenv("PI_SESSION_FILE", "/inherited")
    first = _model("acme", "m1", reply(tool_calls=[("bash", {"command": _PRINT_ENV})]), reply("ok"))
    path = project_dir / "s.jsonl"
    sess = await make_session(first, session_file=path)
    await sess.run("go")
    second = _model(
        "other", "m2", reply(tool_calls=[("bash", {"command": _PRINT_ENV})]), reply("ok")
    )
    sess.set_model(second)
    await sess.run("again")
    texts = _tool_texts(sess.session)
    await sess.aclose()
    sid = sess.session.id
    assert texts == [
        f"{sid}|{path}|acme|m1|off",
        f"{sid}|{path}|other|m2|off",
    ]


async def test_an_in_memory_session_leaves_pi_session_file_unset(
    make_session: MakeSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PI_SESSION_FILE", "/inherited")
    model = _model("acme", "m1", reply(tool_calls=[("bash", {"command": _PRINT_ENV})]), reply("k"))
    sess = await make_session(model)
    await sess.run("go")
    texts = _tool_texts(sess.session)
    await sess.aclose()
    assert texts == [f"{sess.session.id}|unset|acme|m1|off"]


async def test_a_forked_session_object_gives_its_own_id(
    make_session: MakeSession, project_dir: Path
) -> None:
    model = _model(
        "acme",
        "m1",
        reply(tool_calls=[("bash", {"command": 'printf %s "$PI_SESSION_ID"'})]),
        reply("ok"),
    )
    sess = await make_session(model, session_file=project_dir / "a.jsonl")
    other = Session.in_memory(cwd=str(project_dir))
    sess.session = other  # what a fork or /new hands the running agent
    await sess.run("go")
    await sess.aclose()
    assert _tool_texts(other) == [other.id]


async def test_bash_tool_uses_the_shell_settings(
    make_session: MakeSession, project_dir: Path, tmp_path: Path
) -> None:
    shell = tmp_path / "myshell"
    shell.write_text('#!/bin/sh\necho "via myshell"\nexec /bin/sh "$@"\n')
    shell.chmod(0o755)
    model = _model("acme", "m1", reply(tool_calls=[("bash", {"command": "echo $GREETING"})]))
    model.add(reply("ok"))
    settings = {"shellPath": str(shell), "shellCommandPrefix": "GREETING=hello"}
    sess = await make_session(model, settings=settings)
    await sess.run("go")
    texts = _tool_texts(sess.session)
    await sess.aclose()
    assert texts == ["via myshell\nhello\n"]


async def test_a_missing_shell_path_is_the_tool_calls_error(make_session: MakeSession) -> None:
    model = _model("acme", "m1", reply(tool_calls=[("bash", {"command": "true"})]), reply("ok"))
    sess = await make_session(model, settings={"shellPath": "/nonexistent/shell"})
    await sess.run("go")
    texts = _tool_texts(sess.session)
    await sess.aclose()
    assert texts == ["Custom shell path not found: /nonexistent/shell"]


async def test_recall_stays_beside_a_callers_tool_list(
    make_session: MakeSession, project_dir: Path
) -> None:
    sess = await make_session(None, tools=default_tools(project_dir), recall="always")
    assert "recall" in sess.get_active_tools()
    await sess.aclose()

    async def hello(args: dict[str, object], cwd: Path) -> str:
        return "hi"

    mine = FunctionTool("hello", "h", {"type": "object", "properties": {}}, hello)
    sess = await make_session(None, tools=[mine], recall="always")
    assert sess.get_active_tools() == ["hello", "recall"]
    await sess.aclose()
    sess = await make_session(None, tools=[mine], recall="off")
    assert sess.get_active_tools() == ["hello"]
    await sess.aclose()


async def test_a_callers_own_recall_tool_is_kept(
    make_session: MakeSession, project_dir: Path
) -> None:
    async def recall(args: dict[str, object], cwd: Path) -> str:
        return "mine"

    mine = FunctionTool("recall", "r", {"type": "object", "properties": {}}, recall)
    model = _model("acme", "m1", reply(tool_calls=[("recall", {})]), reply("ok"))
    sess = await make_session(model, tools=[mine], recall="always")
    assert sess.get_active_tools() == ["recall"]
    await sess.run("go")
    texts = _tool_texts(sess.session)
    await sess.aclose()
    assert texts == ["mine"]
