"""Valid JSON with fields of the wrong type.

``content: 5``, ``provider: 5``, a tool call with ``name: 7``, ``sections: {"a": 5}``,
``toolsAdded: "x"``... used to give 17 internal errors across ``session info|context|tree``
and ``--export``, and ``AgentSession.open`` failed with ``TypeError``. Each field is now
checked when its entry is first read: the problem is reported with file and line, the field
(or block, or message) is left out, and everything else keeps working.
"""

from __future__ import annotations

import contextlib
import io
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pi_context.agent.session import AgentSession
from pi_context.cli.main import main as pictx_main
from pi_context.session import Session, convert_to_llm
from pi_context.session._load.checks import checked_entry
from pi_context.testing import ScriptedModel, reply
from pi_context.tokens import estimate_tokens
from tests.hostile.helpers import (
    assert_clean,
    content_of,
    entry,
    pictx_process,
    raw_assistant,
    raw_user,
    sha256,
    write_session,
)
from tests.hostile.wrong_types import (
    SYSTEM,
    TOOL_RESULT,
    WRONG_VALUES,
    entry_templates,
    key_paths,
    replaced_at,
)

pytestmark = pytest.mark.timeout(300)

# name -> (the bad entry's fields, a phrase its warning holds)
CASES: dict[str, tuple[dict[str, Any], str]] = {
    "assistant content 5": ({"message": raw_assistant(content=5)}, "message.content is a number"),
    "provider 5": ({"message": raw_assistant(provider=5)}, "message.provider is a number"),
    "tool call name 7": (
        {
            "message": raw_assistant(
                content=[{"type": "toolCall", "id": "c", "name": 7, "arguments": {}}]
            )
        },
        "(toolCall) name is a number",
    ),
    "sections a 5": ({"message": {**SYSTEM, "sections": {"a": 5}}}, "message.sections.a is a"),
    "toolsAdded x": ({"message": {**SYSTEM, "toolsAdded": "x"}}, "message.toolsAdded is a string"),
    "toolsRemoved name": (
        {"message": {**SYSTEM, "toolsRemoved": [{"name": {}}]}},
        "toolsRemoved[0].name is an object",
    ),
    "user content object": ({"message": raw_user("q") | {"content": {"a": 1}}}, "is an object"),
    "tool result call id": ({"message": TOOL_RESULT | {"toolCallId": 5}}, "toolCallId is a number"),
    "bash fields": (
        {"message": {"role": "bashExecution", "command": 5, "output": [1], "timestamp": 1}},
        "message.command is a number",
    ),
    "message is a string": ({"message": "hello"}, "message is a string"),
    "role 5": ({"message": {"role": 5, "content": "x"}}, "message.role is a number"),
    "usage string": ({"message": raw_assistant(usage="x")}, "message.usage is a string"),
}
OTHER: dict[str, tuple[dict[str, Any], str]] = {
    "model_change": ({"provider": 5, "modelId": [1]}, "provider is a number"),
    "thinking_level_change": ({"thinkingLevel": 5}, "thinkingLevel is a number"),
    "compaction": (
        {"summary": 5, "firstKeptEntryId": 7, "tokensBefore": "x", "systemMessage": 5},
        "summary is a number",
    ),
    "branch_summary": ({"summary": 5, "fromId": 7}, "summary is a number"),
    "custom_message": ({"customType": 5, "content": 5, "display": "x"}, "customType is a number"),
    "context_edit": ({"targetId": "u1", "replacement": 5}, "replacement is a number"),
}


def _case_file(directory: Path, fields: dict[str, Any], entry_type: str = "message") -> Path:
    return write_session(
        directory / "s.jsonl",
        [
            entry("u1", None, message=raw_user("first")),
            entry("x1", "u1", entry_type, **fields),
            entry("u2", "x1", message=raw_user("after")),
        ],
    )


ALL = {**CASES, **{f"{k} entry": (v[0], v[1]) for k, v in OTHER.items()}}


def _kind_of(name: str) -> str:
    return name.removesuffix(" entry") if name.endswith(" entry") else "message"


@pytest.mark.parametrize("name", list(ALL))
def test_library_reports_the_line_and_keeps_working(name: str, tmp_path: Path) -> None:
    fields, phrase = ALL[name]
    path = _case_file(tmp_path, fields, _kind_of(name))
    with Session.open(path) as session:
        problems = session.check()
        assert len(problems) == 1
        assert problems[0].line == 3
        assert phrase in problems[0].reason
        messages = session.messages()
        if _kind_of(name) != "compaction":
            assert content_of(messages[0]) == [{"type": "text", "text": "first"}]
        assert content_of(messages[-1]) == [{"type": "text", "text": "after"}]
        for message in convert_to_llm(messages):
            estimate_tokens(message)


@pytest.mark.parametrize(
    "name",
    ["assistant content 5", "tool call name 7", "sections a 5", "toolsAdded x", "compaction entry"],
)
def test_commands_warn_with_file_and_line(name: str, tmp_path: Path) -> None:
    fields, phrase = ALL[name]
    path = _case_file(tmp_path, fields, _kind_of(name))
    before = sha256(path)
    for args in (
        ("session", "info", str(path)),
        ("session", "tree", str(path)),
        ("session", "context", str(path)),
        ("session", "context", "--json", str(path)),
    ):
        run = pictx_process(*args)
        assert_clean(run, code=0)
        assert len(run.stderr_lines) == 1
        assert run.stderr_lines[0].startswith(f"pictx: warning: {path}:3: ")
        assert phrase in run.stderr
    run = pictx_process("--export", str(path), str(tmp_path / "out.html"))
    assert_clean(run, code=0)
    assert run.stderr_lines[0].startswith(f"pictx: warning: {path}:3: ")
    assert sha256(path) == before


@pytest.mark.parametrize(
    "name",
    [
        "assistant content 5",
        "provider 5",
        "tool call name 7",
        "sections a 5",
        "toolsAdded x",
        "model_change entry",
    ],
)
async def test_agent_session_opens_and_runs(name: str, tmp_path: Path) -> None:
    fields, _ = ALL[name]
    path = _case_file(tmp_path, fields, _kind_of(name))
    agent = await AgentSession.open(path, model=ScriptedModel([reply("fine")]), cwd=str(tmp_path))
    await agent.run("again")
    assert content_of(agent.session.messages()[-1]) == [{"type": "text", "text": "fine"}]
    assert [p.line for p in agent.session.problems] == [3]


# -- property: any wrong type in any interpreted field never crashes -----------------------


@given(st.data())
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_random_wrong_types_never_crash(data: st.DataObject) -> None:
    template = data.draw(st.sampled_from(entry_templates()))
    paths = [p for p in key_paths(template) if p and p[0] not in ("id", "type")]
    where = data.draw(st.sampled_from(paths))
    bad = replaced_at(template, where, data.draw(WRONG_VALUES))
    checked_entry(bad)  # the checker itself never raises
    with tempfile.TemporaryDirectory() as folder:
        path = _case_file(
            Path(folder),
            {k: v for k, v in bad.items() if k not in ("type", "id", "parentId", "timestamp")},
            bad["type"],
        )
        before = sha256(path)
        with Session.open(path) as session:
            session.check()
            for message in convert_to_llm(session.messages()):
                estimate_tokens(message)
            _ = session.name, session.labels, session.projection().model
        sink = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            for command in ("info", "tree", "context"):
                assert pictx_main(["session", command, str(path)]) == 0
            assert pictx_main(["session", "context", "--json", str(path)]) == 0
            assert pictx_main(["--export", str(path), str(Path(folder) / "o.html")]) == 0
        assert sha256(path) == before
        shutil.rmtree(folder, ignore_errors=True)


def test_well_typed_entries_are_returned_unchanged() -> None:
    for template in entry_templates():
        checked, faults = checked_entry(template)
        assert faults == []
        assert checked is template
