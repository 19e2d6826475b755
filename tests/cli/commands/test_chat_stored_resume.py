"""``pictx --session URL#ID`` resumes a stored session by the rules of ``pictx --session FILE``:
it runs in the directory its header records (asking, or needing ``--use-session-cwd``, when
that is not this one), on the model its branch last used and at its recorded thinking level.
Each case runs on a session file and on the same session imported into a store (a directory
store: the rules are the command line's, not the store's)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from pi_context.cli.app.app import AppConfig, RunningAgent, resolve_cli_model
from pi_context.cli.commands.chat import _start
from pi_context.errors import PiContextError
from pi_context.model import Model
from pi_context.session.store import Session
from pi_context.store import open_store

KEYS = {"OPENAI_API_KEY": "sk-test", "ANTHROPIC_API_KEY": "sk-ant-test"}


def _session_lines(recorded_cwd: Path) -> list[dict[str, Any]]:
    stamp = "2026-01-05T10:00:0{}.000Z"
    return [
        {
            "type": "session",
            "version": 3,
            "id": "resumed-1",
            "timestamp": stamp.format(0),
            "cwd": str(recorded_cwd),
        },
        {
            "type": "model_change",
            "id": "00000001",
            "parentId": None,
            "timestamp": stamp.format(1),
            "provider": "openai",
            "modelId": "gpt-5-mini",
        },
        {
            "type": "thinking_level_change",
            "id": "00000002",
            "parentId": "00000001",
            "timestamp": stamp.format(2),
            "thinkingLevel": "high",
        },
    ]


def _world(tmp_path: Path) -> tuple[AppConfig, Path, Path]:
    here = tmp_path / "here"
    recorded = tmp_path / "recorded"
    here.mkdir()
    recorded.mkdir()
    agent_dir = tmp_path / "agent"
    agent_dir.mkdir()
    file = tmp_path / "sessions" / "resumed.jsonl"
    file.parent.mkdir()
    file.write_text("".join(json.dumps(line) + "\n" for line in _session_lines(recorded)))

    def resolver(spec: str | None, resumed: Path | Session | None) -> Model | None:
        return resolve_cli_model(spec, KEYS, agent_dir=agent_dir, resumed=resumed)

    config = AppConfig(
        cwd=str(here),
        agent_dir=agent_dir,
        session_dir=tmp_path / "sessions",
        model_resolver=resolver,
        discover_extensions=False,
        mcp=False,
    )
    return config, file, recorded


async def _resume(
    config: AppConfig, file: Path, how: str, *, interactive: bool = False, allowed: bool = True
) -> RunningAgent | None:
    if how == "file":
        return await _start(
            config,
            cont=False,
            resume=False,
            session_arg=str(file),
            model_spec=None,
            interactive=interactive,
            use_session_cwd=allowed,
        )
    folder = file.parent.parent / "store"
    store = await open_store(str(folder))
    try:
        await store.import_jsonl(file, tenant="acme")
    finally:
        await store.aclose()
    return await _start(
        config,
        cont=False,
        resume=False,
        session_arg=f"{folder}#resumed-1",
        model_spec=None,
        interactive=interactive,
        use_session_cwd=allowed,
        stored=(str(folder), "resumed-1"),
        tenant="acme",
    )


@pytest.mark.parametrize("how", ["file", "stored"])
def test_a_resumed_session_runs_where_it_was_recorded_on_its_model_and_level(
    tmp_path: Path, how: str
) -> None:
    config, file, recorded = _world(tmp_path)

    async def go() -> tuple[str, tuple[str, str] | None, str]:
        app = await _resume(config, file, how)
        assert app is not None
        try:
            model = app.agent.model_or_none
            chosen = (model.info.provider, model.info.id) if model is not None else None
            return app.agent.cwd, chosen, app.agent.thinking_level
        finally:
            await app.agent.aclose()
            await config.close_stores()

    cwd, model, level = asyncio.run(go())
    assert cwd == str(recorded)
    assert model == ("openai", "gpt-5-mini")
    assert level == "high"


@pytest.mark.parametrize("how", ["file", "stored"])
def test_print_mode_refuses_a_session_recorded_elsewhere_without_the_flag(
    tmp_path: Path, how: str
) -> None:
    config, file, recorded = _world(tmp_path)

    async def go() -> None:
        try:
            await _resume(config, file, how, allowed=False)
        finally:
            await config.close_stores()

    with pytest.raises(PiContextError, match="--use-session-cwd") as refused:
        asyncio.run(go())
    assert f"recorded in {recorded}" in str(refused.value)


@pytest.mark.parametrize("how", ["file", "stored"])
def test_a_missing_recorded_directory_is_an_error(tmp_path: Path, how: str) -> None:
    config, file, recorded = _world(tmp_path)
    recorded.rmdir()

    async def go() -> None:
        try:
            await _resume(config, file, how)
        finally:
            await config.close_stores()

    with pytest.raises(PiContextError, match="working directory does not exist"):
        asyncio.run(go())
