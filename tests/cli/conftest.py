"""Fixtures for driving ``pictx`` in-process with a scripted model."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from prompt_toolkit.input import PipeInput, create_pipe_input

from pi_context.cli.main import main
from tests.cli.helpers import InProcessRun
from tests.cli.replay_world import ReplayWorld
from tests.providers.replay_server import ReplayServer


@pytest.fixture
def pipe() -> Iterator[PipeInput]:
    """Keys for a prompt_toolkit application under test (`pipe.send_text(...)`)."""
    with create_pipe_input() as keys:
        yield keys


@pytest.fixture
def replay_world(tmp_path: Path) -> Iterator[ReplayWorld]:
    """A project and agent dir whose models (``replay/tiny``, ``replay/thinker``) answer from a
    replay server on 127.0.0.1, for running ``pictx`` as a subprocess or in a terminal."""
    with ReplayServer() as server:
        yield ReplayWorld(tmp_path, server)


@pytest.fixture
def project_as_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project directory made the cwd, with ``HOME`` and the agent dir (``PI_CODING_AGENT_DIR``)
    set to private folders beside it."""
    work = tmp_path / "proj"
    work.mkdir()
    (tmp_path / "home").mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    monkeypatch.delenv("PI_CODING_AGENT_SESSION_DIR", raising=False)
    monkeypatch.delenv("PICTX_SCRIPTED_MODEL", raising=False)
    return work


@pytest.fixture
def replies(tmp_path: Path) -> Callable[[Sequence[Any]], str]:
    """Write a replies file; returns the ``--model`` value for it."""
    counter = iter(range(1000))

    def write(items: Sequence[Any]) -> str:
        path = tmp_path / f"replies{next(counter)}.json"
        path.write_text(json.dumps(list(items)), encoding="utf-8")
        return f"scripted:{path}"

    return write


@pytest.fixture
def pictx_in_process() -> Callable[..., InProcessRun]:
    """Run ``pictx ARGS`` in-process with ``stdin`` (not a terminal)."""

    def run(*args: str, stdin: str = "") -> InProcessRun:
        runner = CliRunner()
        with runner.isolation(input=stdin) as (out, err, _):
            code = main(list(args))
            return InProcessRun(code, out.getvalue().decode(), err.getvalue().decode())

    return run
