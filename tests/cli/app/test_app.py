"""Which model bare ``pictx`` uses, and what it says when there is none."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pi_context.cli.app.agent_api import NO_MODEL_HELP
from pi_context.cli.app.app import AppConfig, resolve_cli_model
from pi_context.providers import registry as model_registry
from pi_context.testing import ScriptedModel
from tests.cli.helpers import sessions_of

KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_OAUTH_TOKEN")


@pytest.fixture
def no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in KEYS:
        monkeypatch.delenv(name, raising=False)


def _local_extra(monkeypatch: pytest.MonkeyPatch, installed: bool) -> None:
    monkeypatch.setattr(model_registry, "local_model_installed", lambda: installed)


def test_without_keys_the_embedded_local_model_is_the_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _local_extra(monkeypatch, True)
    model = resolve_cli_model(None, {}, agent_dir=tmp_path)
    assert model is not None
    assert (model.info.provider, model.info.api) == ("local", "llama-cpp")


def test_a_key_wins_over_the_local_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _local_extra(monkeypatch, True)
    model = resolve_cli_model(None, {"OPENAI_API_KEY": "sk-test"}, agent_dir=tmp_path)
    assert model is not None
    assert model.info.provider == "openai"


def test_no_keys_and_no_local_extra_means_no_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _local_extra(monkeypatch, False)
    assert resolve_cli_model(None, {}, agent_dir=tmp_path) is None


def test_models_json_of_the_agent_dir_is_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _local_extra(monkeypatch, False)
    (tmp_path / "models.json").write_text(
        json.dumps(
            {
                "providers": {
                    "mine": {
                        "baseUrl": "http://127.0.0.1:9/v1",
                        "api": "openai-completions",
                        "apiKey": "local-key",
                        "models": [{"id": "tiny"}],
                    }
                }
            }
        )
    )
    model = resolve_cli_model("mine/tiny", {}, agent_dir=tmp_path)
    assert model is not None
    assert (model.info.provider, model.info.id) == ("mine", "tiny")


def test_scripted_spec_needs_no_registry(tmp_path: Path) -> None:
    replies = tmp_path / "r.json"
    replies.write_text('["hi"]')
    model = resolve_cli_model(f"scripted:{replies}", {})
    assert isinstance(model, ScriptedModel)
    assert resolve_cli_model(None, {"PICTX_SCRIPTED_MODEL": str(replies)}) is not None


def test_print_mode_without_any_model_says_how_to_get_one(
    project_as_cwd: Path,
    no_keys: None,
    monkeypatch: pytest.MonkeyPatch,
    pictx_in_process: Callable[..., Any],
) -> None:
    _local_extra(monkeypatch, False)
    run = pictx_in_process("-p", "hello")
    assert run.code == 1
    assert NO_MODEL_HELP in run.err
    assert "pip install 'pi-context[local]'" in run.err
    assert sessions_of(project_as_cwd.parent / "agent", project_as_cwd) == []


async def test_new_sessions_are_named_after_their_header(tmp_path: Path) -> None:
    replies = tmp_path / "r.json"
    replies.write_text('["hi"]')
    config = AppConfig(cwd=str(tmp_path), agent_dir=tmp_path / "agent", session_dir=tmp_path / "s")
    agent = await config.create(resolve_cli_model(f"scripted:{replies}", {}))
    try:
        async for _event in agent.prompt("hello"):
            pass
        path = agent.session.file_path
        assert path is not None
        assert path.exists()
        header = json.loads(path.read_text().splitlines()[0])
        assert path.name.endswith(f"_{header['id']}.jsonl")
        assert path.name.startswith(header["timestamp"].replace(":", "-").replace(".", "-"))
    finally:
        agent.close()


def test_starting_pictx_imports_no_provider_sdk(tmp_path: Path) -> None:
    """Every spawned ``pictx`` pays for its imports: a scripted run and picking the local
    default model (no key) load no provider SDK."""
    replies = tmp_path / "r.json"
    replies.write_text('["hi"]')
    code = (
        "import sys\n"
        "from pi_context.cli.main import main\n"
        "from pi_context.cli.app.app import resolve_cli_model\n"
        f"assert main(['--no-session', '-p', '--model', 'scripted:{replies}', 'x']) == 0\n"
        "resolve_cli_model(None, {})  # the local model when the extra is installed\n"
        "heavy = {'openai', 'anthropic', 'llama_cpp'} & set(sys.modules)\n"
        "assert not heavy, heavy\n"
    )
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(tmp_path / "agent"), "HOME": str(tmp_path)}
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "hi\n"


def _session_with_model(path: Path, provider: str, model_id: str) -> Path:
    lines = [
        {"type": "session", "version": 3, "id": "s1", "timestamp": "2026-01-05T10:00:00.000Z"},
        {
            "type": "model_change",
            "id": "00000001",
            "parentId": None,
            "timestamp": "2026-01-05T10:00:01.000Z",
            "provider": provider,
            "modelId": model_id,
        },
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


BOTH_KEYS = {"OPENAI_API_KEY": "sk-test", "ANTHROPIC_API_KEY": "sk-ant-test"}


def test_a_resumed_session_keeps_the_model_of_its_branch(tmp_path: Path) -> None:
    fresh = resolve_cli_model(None, BOTH_KEYS, agent_dir=tmp_path)
    assert fresh is not None
    assert fresh.info.provider == "anthropic"  # the built-in default order
    resumed = _session_with_model(tmp_path / "s.jsonl", "openai", "gpt-4.1")
    model = resolve_cli_model(None, BOTH_KEYS, agent_dir=tmp_path, resumed=resumed)
    assert model is not None
    assert (model.info.provider, model.info.id) == ("openai", "gpt-4.1")
    # --model still wins
    named = resolve_cli_model("openai/gpt-5-mini", BOTH_KEYS, agent_dir=tmp_path, resumed=resumed)
    assert named is not None
    assert named.info.id == "gpt-5-mini"


def test_the_recorded_model_is_skipped_without_its_key(tmp_path: Path) -> None:
    resumed = _session_with_model(tmp_path / "s.jsonl", "openai", "gpt-4.1")
    only_anthropic = {"ANTHROPIC_API_KEY": "sk-ant-test"}
    model = resolve_cli_model(None, only_anthropic, agent_dir=tmp_path, resumed=resumed)
    assert model is not None
    assert model.info.provider == "anthropic"


def test_default_model_settings_come_before_the_built_in_default(tmp_path: Path) -> None:
    (tmp_path / "settings.json").write_text(
        json.dumps({"defaultProvider": "openai", "defaultModel": "gpt-5-nano"})
    )
    model = resolve_cli_model(None, BOTH_KEYS, agent_dir=tmp_path)
    assert model is not None
    assert (model.info.provider, model.info.id) == ("openai", "gpt-5-nano")
    resumed = _session_with_model(tmp_path / "s.jsonl", "anthropic", "claude-sonnet-4-5")
    again = resolve_cli_model(None, BOTH_KEYS, agent_dir=tmp_path, resumed=resumed)
    assert again is not None
    assert again.info.provider == "anthropic"
