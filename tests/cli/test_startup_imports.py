"""``pictx -p`` and ``pictx --mode rpc`` load no terminal UI: neither prompt_toolkit's
application code nor any module of ``pi_context.cli.interactive``. Each mode runs to its end in a
fresh interpreter, which then lists what it imported."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tests.cli.replay_world import ReplayWorld

DUMP = """
import atexit, json, sys
def dump():
    with open(sys.argv[1], "w", encoding="utf-8") as out:
        json.dump(sorted(sys.modules), out)
atexit.register(dump)
from pi_context.cli.main import main
sys.exit(main(sys.argv[2:]))
"""

UI = ("prompt_toolkit.application", "pi_context.cli.interactive")


def _loaded(project_as_cwd: Path, args: Sequence[str], stdin: str) -> list[str]:
    dump = project_as_cwd / "modules.json"
    done = subprocess.run(
        [sys.executable, "-c", DUMP, str(dump), *args],
        cwd=project_as_cwd,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    modules: list[str] = json.loads(dump.read_text(encoding="utf-8"))
    return modules


def _ui(modules: Sequence[str]) -> list[str]:
    return [m for m in modules if m.startswith(UI)]


def test_print_mode_loads_no_terminal_ui(
    project_as_cwd: Path, replies: Callable[[Sequence[Any]], str]
) -> None:
    modules = _loaded(project_as_cwd, ["-p", "--model", replies(["done"]), "hello"], "")
    assert "pi_context.cli.print_mode" in modules  # the run happened
    assert _ui(modules) == []


def test_rpc_mode_loads_no_terminal_ui(
    project_as_cwd: Path, replies: Callable[[Sequence[Any]], str]
) -> None:
    request = json.dumps({"id": "1", "type": "get_state"}) + "\n"
    modules = _loaded(project_as_cwd, ["--mode", "rpc", "--model", replies([])], request)
    assert "pi_context.cli.rpc.commands" in modules
    assert _ui(modules) == []


# What ``pictx -p`` must not load before (or for) a plain one-shot answer: the compaction
# engine, its events, the branch summary and the summarizer (loaded on the first navigation or
# compaction), the MCP tools and prompt section (only with a configured server), the image
# decoder (only with an image), the MCP SDK, its client and codemode's V8 engine (only with a
# configured server; ``mcp`` also covers ``mcp_types``), the search index and SQLite (only with
# a recall), the extension machinery (only with an extension to load), the exports, the YAML
# parser and pathspec (only with skills that need them), the testing fakes and the terminal UI.
NOT_ON_THE_PRINT_PATH = (
    "pi_context.compaction.branch",
    "pi_context.compaction.summarize",
    "pi_context.compaction.offline",
    "pi_context.compaction.guard",
    "pi_context.compaction.engine",
    "pi_context.compaction.events",
    "pi_context.compaction.prepare",
    "pi_context.compaction.masking",
    "pi_context.compaction.retry_events",
    "pi_context.mcp.codemode",
    "pi_context.mcp.section",
    "pi_context.mcp.tools",
    "pi_context.mcp.command",
    "pi_context.mcp.connection",
    "pi_context.mcp.stdio",
    "pi_context.mcp.sdk",
    "mcp",
    "py_mini_racer",
    "pi_context.images.fitting",
    "pi_context.export.document",
    "pi_context.session.search.index",
    "sqlite3",
    "secrets",
    "pi_context.extensions.api",
    "pi_context.extensions.context",
    "pi_context.extensions.events",
    "pi_context.extensions.hooks",
    "pi_context.extensions.loader",
    "pi_context.extensions.runner",
    "pi_context.export.html",
    "pi_context.export.jsonl",
    "pi_context.export.markdown",
    "pi_context.testing",
    "ruamel",
    "pathspec",
    *UI,
)

CONSOLE = """
import atexit, gc, json, sys
def dataclasses():
    return sorted(
        f"{name}.{value.__qualname__}"
        for name, module in list(sys.modules.items())
        if name.startswith("pi_context") and module is not None
        for value in vars(module).values()
        if isinstance(value, type) and value.__module__ == name
        and "__dataclass_fields__" in vars(value)
    )
def dump():
    with open(DUMP, "w", encoding="utf-8") as out:
        json.dump({"modules": sorted(sys.modules), "gc": gc.isenabled(),
                   "frozen": gc.get_freeze_count(), "dataclasses": dataclasses()}, out)
DUMP = sys.argv.pop(1)
atexit.register(dump)
from pi_context.cli.main import main
sys.exit(main())
"""


def _print_run(world: ReplayWorld, tmp_path: Path) -> tuple[subprocess.CompletedProcess[str], Path]:
    """``pictx -p hi`` in ``world`` as the console script; the run and its report's path."""
    dump = tmp_path / "modules.json"
    done = subprocess.run(
        [sys.executable, "-c", CONSOLE, str(dump), "-p", "--model", "replay/tiny", "hi"],
        cwd=world.project,
        env=world.env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return done, dump


def test_print_mode_loads_only_what_a_plain_answer_needs(tmp_path: Path) -> None:
    """A provider over real HTTP (no scripted fakes), run as the console script runs it."""
    from tests.cli.replay_world import ReplayWorld, text_reply
    from tests.providers.replay_server import ReplayServer

    with ReplayServer() as server:
        world = ReplayWorld(tmp_path, server)
        server.add(text_reply("done"))
        done, dump = _print_run(world, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "done"
    report = json.loads(dump.read_text(encoding="utf-8"))
    modules: list[str] = report["modules"]
    assert "pi_context.cli.print_mode" in modules
    assert [m for m in modules if m.startswith(NOT_ON_THE_PRINT_PATH)] == []
    # the start-up ran with the collector paused; it is back on, the start-up's objects frozen
    assert report["gc"] is True
    assert report["frozen"] > 0
    # a dataclass compiles its methods at import (half a millisecond each): the values on this
    # path are msgspec Structs, except those users build and copy with dataclasses.replace
    assert [name for name in report["dataclasses"] if not name.startswith(USER_BUILT)] == []


USER_BUILT = (
    "pi_context.model.protocol.ModelCost",
    "pi_context.model.protocol.ModelInfo",
    "pi_context.model.protocol.ModelRequest",
    "pi_context.model.protocol.RequestOptions",
    "pi_context.prompt.sections.SystemPromptOptions",
    "pi_context.prompt.wording.PromptWording",
    "pi_context.providers.models_json.ModelEntry",
    "pi_context.resources.settings.",
    "pi_context.resources.loader.LoadedResources",
)
"""Dataclasses a plain ``-p`` run may define: model descriptions and requests, the prompt's
options and wording, settings and loaded resources, which callers build and copy
(``dataclasses.replace``)."""


def test_an_extension_still_loads_its_machinery(tmp_path: Path) -> None:
    """With an extension in the agent dir the runner is there and its hooks run."""
    from tests.cli.replay_world import ReplayWorld, text_reply
    from tests.providers.replay_server import ReplayServer

    with ReplayServer() as server:
        world = ReplayWorld(tmp_path, server)
        server.add(text_reply("done"))
        ext = world.agent_dir / "extensions"
        ext.mkdir()
        (ext / "shout.py").write_text(
            "def register(pi):\n"
            "    pi.on('agent_end', lambda event, ctx: print('EXT-SAW-END', flush=True))\n",
            encoding="utf-8",
        )
        done, dump = _print_run(world, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "EXT-SAW-END" in done.stdout + done.stderr
    assert "pi_context.extensions.runner" in json.loads(dump.read_text(encoding="utf-8"))["modules"]
