"""docs/integrations.md: each framework's example runs as written and compacts."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import pi_context

DOC = Path(__file__).resolve().parents[2] / "docs" / "integrations.md"
FRAMEWORK_MODULES = {
    "openai-agents": "agents",
    "pydantic-ai": "pydantic_ai",
    "langchain": "langchain",
}


def _examples() -> dict[str, str]:
    text = DOC.read_text(encoding="utf-8")
    found = re.findall(r"```python\n# example: ([a-z-]+)\n(.*?)```", text, flags=re.DOTALL)
    return dict(found)


def test_the_doc_has_one_example_per_framework() -> None:
    assert sorted(_examples()) == sorted(FRAMEWORK_MODULES)


@pytest.mark.parametrize("framework", sorted(FRAMEWORK_MODULES))
def test_the_example_runs_and_compacts(framework: str, tmp_path: Path) -> None:
    pytest.importorskip(FRAMEWORK_MODULES[framework])
    script = tmp_path / "example.py"
    script.write_text(_examples()[framework], encoding="utf-8")
    env = dict(os.environ)
    env["PYTHONPATH"] = str(Path(pi_context.__file__).parents[1])
    env["TMPDIR"] = str(tmp_path)
    done = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Every VALUE is ten times larger now." in done.stdout
    assert re.search(r"^[1-9]\d* compactions", done.stdout, flags=re.MULTILINE), done.stdout
