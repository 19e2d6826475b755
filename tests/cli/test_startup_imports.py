"""``pictx -p`` and ``pictx --mode rpc`` load no terminal UI: neither prompt_toolkit's
application code nor any module of ``pi_context.cli.interactive``. Each mode runs to its end in a
fresh interpreter, which then lists what it imported."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

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


def _loaded(project: Path, args: Sequence[str], stdin: str) -> list[str]:
    dump = project / "modules.json"
    done = subprocess.run(
        [sys.executable, "-c", DUMP, str(dump), *args],
        cwd=project,
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
    project: Path, replies: Callable[[Sequence[Any]], str]
) -> None:
    modules = _loaded(project, ["-p", "--model", replies(["done"]), "hello"], "")
    assert "pi_context.cli.print_mode" in modules  # the run happened
    assert _ui(modules) == []


def test_rpc_mode_loads_no_terminal_ui(
    project: Path, replies: Callable[[Sequence[Any]], str]
) -> None:
    request = json.dumps({"id": "1", "type": "get_state"}) + "\n"
    modules = _loaded(project, ["--mode", "rpc", "--model", replies([])], request)
    assert "pi_context.cli.rpc.commands" in modules
    assert _ui(modules) == []
