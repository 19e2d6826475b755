"""End to end: a multi-turn coding task through the real loop, tools, compaction and /tree.

A scripted model drives the agent in a temporary project: it reads a file, fixes a bug with
``edit``, runs the code with ``bash``, crosses the compaction threshold mid-run (the summary
comes from the same model), writes a test, then the user navigates back and leaves a branch
summary. Finally the session file is reopened from disk and its projection checked.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pi_context.agent.session import AgentSession
from pi_context.compaction.prompts import SUMMARY_SYSTEM_PROMPT
from pi_context.events import CompactionEnd, CompactionStart, MessageEnd, TreeNavigated
from pi_context.messages import text_of
from pi_context.model import ModelInfo, ModelRequest
from pi_context.session import Session, convert_to_llm
from pi_context.session.projection import SUMMARY_WRAPPERS
from pi_context.testing import ScriptedModel, ScriptedReply, SequentialIds, reply
from tests.helpers import no_sleep

BUGGY = (
    "def add(a, b):\n    return a - b\n\nprint(add(2, 3))\n\n"
    + "# Notes on the arithmetic helpers of this module.\n" * 40
)

TASK_SCRIPT: list[ScriptedReply] = [
    # prompt 1: fix the bug
    reply("Let me look.", tool_calls=[("read", {"path": "src/app.py"})], input_tokens=3000),
    reply(
        tool_calls=[
            ("edit", {"path": "src/app.py", "edits": [{"oldText": "a - b", "newText": "a + b"}]})
        ],
        input_tokens=6000,
    ),
    # This response reports a context close to the window: the next turn compacts first.
    reply(tool_calls=[("bash", {"command": f"{sys.executable} src/app.py"})], input_tokens=17_500),
    reply("Fixed: add() now adds; running it prints 5.", input_tokens=2500),
    # prompt 2: a test, on what will become the abandoned branch
    reply(
        tool_calls=[
            ("write", {"path": "tests/test_app.py", "content": "from src.app import add\n"})
        ],
        input_tokens=3000,
    ),
    reply("Added tests/test_app.py.", input_tokens=3200),
    # prompt 3, after navigating back
    reply("Understood: no test file; documenting instead.", input_tokens=3300),
]


class Router:
    """Answers summary requests with summaries and everything else from the task script."""

    def __init__(self) -> None:
        self.task = list(TASK_SCRIPT)
        self.summaries: list[str] = []

    def __call__(self, request: ModelRequest) -> ScriptedReply:
        if request.system_prompt == SUMMARY_SYSTEM_PROMPT:
            prompt = text_of(request.messages[-1]["content"])
            self.summaries.append(prompt)
            kind = "Branch" if "<conversation>" in prompt else "History"
            return reply(f"## Goal\n{kind} summary: fix add() in src/app.py", output_tokens=40)
        return self.task.pop(0)


def roles(messages: Sequence[Any]) -> list[str]:
    return [m["role"] for m in messages]


async def test_coding_task_compaction_and_branch_summary(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    (project / "src").mkdir(parents=True)
    (project / "src" / "app.py").write_text(BUGGY)
    (project / "AGENTS.md").write_text("Keep functions small.\n")
    agent_dir = tmp_path / "agent"
    agent_dir.mkdir()
    session_file = tmp_path / "session.jsonl"

    router = Router()
    info = ModelInfo(
        provider="scripted",
        id="scripted-model",
        api="scripted",
        context_window=20_000,
        max_tokens=4096,
    )
    model = ScriptedModel([router] * 20, model_info=info)

    sess = await AgentSession.create(
        cwd=project,
        model=model,
        session_file=session_file,
        agent_dir=agent_dir,
        trusted=True,
        settings={"compaction": {"reserveTokens": 4000, "keepRecentTokens": 60}},
        ids=SequentialIds(),
        sleep=no_sleep,
    )

    # --- turn 1: read, edit, run; the threshold is crossed between turns -----------------
    events = await sess.run("Fix the bug in src/app.py")
    assert (project / "src" / "app.py").read_text().startswith("def add(a, b):\n    return a + b")
    bash_result = next(
        e.message
        for e in events
        if isinstance(e, MessageEnd)
        and e.message["role"] == "toolResult"
        and e.message["toolName"] == "bash"
    )
    assert bash_result["role"] == "toolResult"
    assert text_of(bash_result["content"]).strip() == "5"
    starts = [e for e in events if isinstance(e, CompactionStart)]
    ends = [e for e in events if isinstance(e, CompactionEnd)]
    assert [s.reason for s in starts] == ["threshold"]
    assert ends[0].result is not None
    compaction = next(e for e in sess.session.entries if e.type == "compaction")
    assert "History summary" in compaction.get("summary")
    # The cut fell inside the running turn: the read is summarized as a split-turn prefix.
    assert "**Turn Context (split turn):**" in compaction.get("summary")
    assert "<read-files>\nsrc/app.py\n</read-files>" in compaction.get("summary")
    assert compaction.get("fromHook") is False
    assert compaction.get("systemMessage")["sections"]["project_context"].count("Keep functions")
    # The request after the compaction starts from the snapshot and the summary.
    after = model.requests[-1].messages
    assert after[0]["role"] == "system"
    assert text_of(after[1]["content"]).startswith(SUMMARY_WRAPPERS.compaction_prefix)
    assert len(router.summaries) == 1

    # --- turn 2: write a test (this branch is abandoned below) ----------------------------
    await sess.run("Add a test for add()")
    assert (project / "tests" / "test_app.py").exists()
    second_user = [e for e in sess.session.entries if e.role == "user"][-1]
    abandoned_leaf = sess.session.leaf_id

    # --- /tree back to before the second prompt, with a branch summary --------------------
    seen: list[Any] = []
    sess.subscribe(seen.append)
    nav = await sess.navigate(second_user.id, summarize=True, instructions="focus on tests")
    assert nav.editor_text == "Add a test for add()"
    assert isinstance(seen[-1], TreeNavigated)
    summary_entry = sess.session.get(nav.summary_entry_id)  # type: ignore[arg-type]
    assert summary_entry is not None
    assert summary_entry.type == "branch_summary"
    assert summary_entry.parent_id == second_user.parent_id
    assert summary_entry.get("fromId") == abandoned_leaf
    assert "Branch summary" in summary_entry.get("summary")
    assert "<modified-files>\ntests/test_app.py\n</modified-files>" in summary_entry.get("summary")
    assert "Additional focus: focus on tests" in router.summaries[-1]

    # --- turn 3 on the new branch -------------------------------------------------------------
    await sess.run("Skip the test; document add() instead")
    last_request = model.requests[-1].messages
    texts = [text_of(m["content"]) for m in last_request if m["role"] == "user"]
    assert any("Branch summary" in t for t in texts)
    assert "Add a test for add()" not in texts
    assert texts[-1] == "Skip the test; document add() instead"
    assert not router.task
    sess.close()

    # --- the file on disk loads and projects the same way ---------------------------------------
    reopened = Session.open(session_file)
    assert reopened.problems == []
    assert reopened.header["version"] == 3
    assert [e.id for e in reopened.entries] == [e.id for e in sess.session.entries]
    assert reopened.leaf_id == sess.session.leaf_id
    projection = reopened.projection()
    assert projection.messages == sess.session.projection().messages
    msgs = projection.messages
    assert msgs[0]["role"] == "system"  # the compaction's snapshot
    assert msgs[1]["role"] == "compactionSummary"
    assert "branchSummary" in roles(msgs)
    assert roles(msgs)[-2:] == ["user", "assistant"]
    assert all(
        m["role"] in ("system", "user", "assistant", "toolResult") for m in convert_to_llm(msgs)
    )
    # Both branches are still in the tree.
    leaf_ids = {e.id for e in reopened.leaves()}
    assert abandoned_leaf in leaf_ids
    assert reopened.leaf_id in leaf_ids

    # --- and the agent resumes from the file ---------------------------------------------------
    resumed_model = ScriptedModel([reply("Resumed.")], model_info=info)
    resumed = await AgentSession.open(
        session_file, model=resumed_model, agent_dir=agent_dir, trusted=True, sleep=no_sleep
    )
    await resumed.run("Status?")
    sent = resumed_model.requests[0].messages
    assert sent[0]["role"] == "system"
    assert text_of(sent[-1]["content"]) == "Status?"
    assert resumed.stats().requests == 8
    resumed.close()
