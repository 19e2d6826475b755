"""The settings' ``extensions`` lists: paths resolved from the file that lists them, folders
discovered, ``-path`` / ``!glob`` exclusions, ``builtin:`` entries skipped, and the listed
extensions loaded by an agent session (the project's list only when trusted)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pi_context.agent.session import AgentSession
from pi_context.extensions.discovery import settings_extension_paths
from pi_context.testing import ScriptedModel, reply

EXT = """
from pathlib import Path

def seen(event, ctx):
    with Path({log!r}).open("a") as log:
        log.write({name!r} + "\\n")


def register(pi):
    pi.on("agent_start", seen)
"""


def _ext(path: Path, log: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(EXT.format(log=str(log), name=path.stem), encoding="utf-8")
    return path


def test_entries_resolve_from_their_file_and_exclusions_apply(tmp_path: Path) -> None:
    log = tmp_path / "log"
    agent = tmp_path / "agent"
    project_pi = tmp_path / "proj" / ".pi"
    one = _ext(agent / "mine" / "one.py", log)
    _ext(agent / "folder" / "two.py", log)
    three = _ext(agent / "folder" / "three.py", log)
    _ext(agent / "folder" / "old_four.py", log)
    proj = _ext(project_pi / "exts" / "proj.py", log)
    user: dict[str, Any] = {
        "extensions": [
            "mine/one.py",
            "folder",
            "-folder/two.py",
            "!old_*",
            "builtin:mcp",
            "-builtin:codemode",
        ]
    }
    project = {"extensions": ["exts/proj.py", "missing.py"]}
    found, problems = settings_extension_paths(
        [(user, agent / "settings.json"), (project, project_pi / "settings.json")]
    )
    assert found == [one, three, proj]
    assert len(problems) == 1
    assert "missing.py" in problems[0]
    assert str(project_pi / "settings.json") in problems[0]


def test_a_list_that_is_not_of_paths_is_a_problem(tmp_path: Path) -> None:
    found, problems = settings_extension_paths([({"extensions": "one.py"}, tmp_path / "s.json")])
    assert found == []
    assert problems == [f'{tmp_path / "s.json"}: "extensions" must be a list of paths']


async def test_a_session_loads_the_listed_extensions(tmp_path: Path) -> None:
    log = tmp_path / "log"
    agent = tmp_path / "agent"
    project = tmp_path / "proj"
    _ext(tmp_path / "elsewhere" / "listed.py", log)
    _ext(project / ".pi" / "local.py", log)
    agent.mkdir()
    (agent / "settings.json").write_text(json.dumps({"extensions": ["../elsewhere/listed.py"]}))
    (project / ".pi" / "settings.json").write_text(json.dumps({"extensions": ["local.py"]}))
    for trusted in (False, True):
        sess = await AgentSession.create(
            cwd=project,
            model=ScriptedModel([reply("ok")]),
            agent_dir=agent,
            trusted=trusted,
            load_extensions=True,
        )
        await sess.run("hi")
        await sess.aclose()
        with log.open("a") as out:
            out.write("--\n")
    assert log.read_text().split("--\n")[:2] == ["listed\n", "listed\nlocal\n"]
