"""The model registry: built-ins, models.json in pi's layout, keys, resolution, the default."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pi_context.errors import ModelNotFoundError, ProviderError
from pi_context.providers.anthropic import AnthropicModel
from pi_context.providers.catalog import LOCAL_MODEL
from pi_context.providers.key_templates import resolve_key_template
from pi_context.providers.models_json import ModelEntry, parse_models_json
from pi_context.providers.openai_responses import OpenAIResponsesModel
from pi_context.providers.registry import (
    ModelRegistry,
    default_model,
    load_registry,
    resolve_model,
)


def write_models(tmp_path: Path, data: Any) -> Path:
    text = data if isinstance(data, str) else json.dumps(data)
    (tmp_path / "models.json").write_text(text, encoding="utf-8")
    return tmp_path


def test_builtins_have_limits_and_prices() -> None:
    reg = load_registry(Path("/nonexistent"), env={})
    sonnet = reg.find("anthropic", "claude-sonnet-4-5")
    assert sonnet is not None
    assert sonnet.info.context_window == 200_000
    assert sonnet.info.cost.cache_write > sonnet.info.cost.input > sonnet.info.cost.cache_read
    gpt = reg.find("openai", "gpt-5")
    assert gpt is not None
    assert gpt.info.max_tokens > 0
    assert gpt.info.system_messages_mid_conversation
    assert reg.find("local", LOCAL_MODEL.id) is not None


def test_key_templates() -> None:
    env = {"K": "abc", "EMPTY": ""}
    assert resolve_key_template("$K", env) == ("abc", None)
    assert resolve_key_template("pre-${K}-post", env) == ("pre-abc-post", None)
    assert resolve_key_template("a$$b$!c", env) == ("a$b!c", None)
    assert resolve_key_template("$MISSING", env) == (None, "MISSING")
    assert resolve_key_template("$EMPTY", env) == (None, "EMPTY")
    assert resolve_key_template("!printf ' k1 '", env) == ("k1", None)
    assert resolve_key_template("!exit 3", env) == (None, "!exit 3")
    assert resolve_key_template("literal", env) == ("literal", None)


def test_key_commands_run_once_per_registry(tmp_path: Path) -> None:
    log = tmp_path / "runs.log"
    (tmp_path / "models.json").write_text(
        '{"providers": {"corp": {"baseUrl": "https://llm.example.com/v1",'
        ' "api": "openai-completions", "apiKey": "!echo run >> '
        + str(log)
        + '; echo k-1", "models": [{"id": "a"}, {"id": "b"}]}}}',
        encoding="utf-8",
    )
    reg = load_registry(tmp_path, env={})
    entry = reg.default()
    assert entry is not None
    assert entry.info.provider == "corp"
    assert reg.credentials(entry).api_key == "k-1"
    other = reg.find("corp", "b" if entry.info.id == "a" else "a")
    assert other is not None
    assert reg.credentials(other).api_key == "k-1"
    assert log.read_text(encoding="utf-8") == "run\n"
    assert reg.credentials(entry).source == '"apiKey" of provider "corp" in models.json'


def test_env_keys_and_precedence() -> None:
    reg = load_registry(
        Path("/nonexistent"), env={"ANTHROPIC_API_KEY": "k", "ANTHROPIC_AUTH_TOKEN": "t"}
    )
    entry = reg.find("anthropic", "claude-haiku-4-5")
    assert entry is not None
    creds = reg.credentials(entry)
    assert (creds.api_key, creds.bearer) == (None, "t")
    assert creds.source == "ANTHROPIC_AUTH_TOKEN"
    keyed = load_registry(Path("/nonexistent"), env={"ANTHROPIC_API_KEY": "k"})
    assert keyed.credentials(entry).source == "ANTHROPIC_API_KEY"
    openai_entry = reg.find("openai", "gpt-5")
    assert openai_entry is not None
    assert not reg.credentials(openai_entry).ok
    assert "openai" in (reg.credentials(openai_entry).error or "")
    assert "set OPENAI_API_KEY" in (reg.credentials(openai_entry).error or "")


def test_missing_key_errors_say_what_to_set(tmp_path: Path) -> None:
    (tmp_path / "models.json").write_text(
        '{"providers": {"corp": {"baseUrl": "https://llm.example.com/v1",'
        ' "api": "openai-completions", "models": [{"id": "big"}]}}}',
        encoding="utf-8",
    )
    reg = load_registry(tmp_path, env={})
    claude = reg.find("anthropic", "claude-haiku-4-5")
    corp = reg.find("corp", "big")
    assert claude is not None
    assert corp is not None
    assert "set ANTHROPIC_API_KEY" in (reg.credentials(claude).error or "")
    assert '"apiKey" for provider "corp" in models.json' in (reg.credentials(corp).error or "")


def test_models_json_custom_provider_and_overrides(tmp_path: Path) -> None:
    agent = write_models(
        tmp_path,
        """// comments are allowed
        {
          "providers": {
            "ollama": {
              "baseUrl": "http://127.0.0.1:11434/v1",
              "api": "openai-completions",
              "apiKey": "ollama",
              "models": [{"id": "qwen3:8b", "contextWindow": 32768, "maxTokens": 4096,
                          "compat": {"supportsMidConvoSystemMessages": true}}]
            },
            "anthropic": {
              "baseUrl": "http://127.0.0.1:9999",  /* a proxy */
              "modelOverrides": {"claude-haiku-4-5": {"maxTokens": 1000, "cost": {"input": 9}}}
            },
            "proxy": {"baseUrl": "https://proxy.example", "api": "anthropic-messages",
                      "apiKey": "$PROXY_KEY", "headers": {"x-team": "${TEAM}"},
                      "models": [{"id": "claude-sonnet-4-5", "name": "Proxied Sonnet"}]}
          }
        }""",
    )
    reg = load_registry(agent, env={"PROXY_KEY": "pk", "TEAM": "core"})
    assert reg.errors == []
    qwen = reg.find("ollama", "qwen3:8b")
    assert qwen is not None
    assert (qwen.info.context_window, qwen.info.max_tokens) == (32768, 4096)
    assert qwen.info.system_messages_mid_conversation
    assert reg.credentials(qwen).api_key == "ollama"
    haiku = reg.find("anthropic", "claude-haiku-4-5")
    assert haiku is not None
    assert haiku.info.base_url == "http://127.0.0.1:9999"
    assert haiku.info.max_tokens == 1000
    assert haiku.info.cost.input == 9
    assert haiku.info.cost.output == 5  # other prices kept
    proxied = reg.find("proxy", "claude-sonnet-4-5")
    assert proxied is not None
    creds = reg.credentials(proxied)
    assert (creds.api_key, dict(creds.headers)) == ("pk", {"x-team": "core"})
    assert proxied.info.context_window == 128_000  # pi's default for custom models


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ("{not json", "Failed to parse models.json"),
        ({"nope": 1}, "Invalid models.json schema"),
        ({"providers": {"x": {"models": [{"id": ""}]}}}, "providers.x.models[0].id"),
        ({"providers": {"x": {"models": [{"id": "m", "contextWindow": -1}]}}}, "contextWindow"),
        (
            {"providers": {"x": {"baseUrl": "http://h", "models": [{"id": "m"}]}}},
            'no "api" specified',
        ),
        (
            {"providers": {"x": {"api": "openai-completions", "models": [{"id": "m"}]}}},
            '"baseUrl" is required',
        ),
        ({"providers": {"x": {"name": "X"}}}, "must specify"),
    ],
)
def test_broken_models_json_is_ignored_with_a_reason(
    tmp_path: Path, data: Any, message: str
) -> None:
    reg = load_registry(write_models(tmp_path, data), env={})
    assert len(reg.errors) == 1
    assert message in reg.errors[0]
    assert str(tmp_path / "models.json") in reg.errors[0]
    assert reg.find("anthropic", "claude-sonnet-4-5") is not None  # built-ins still there


def test_parse_accepts_bom() -> None:
    providers, errors = parse_models_json('\ufeff{"providers": {}}')
    assert (providers, errors) == ({}, [])


def test_resolution_rules() -> None:
    reg = load_registry(Path("/nonexistent"), env={"OPENAI_API_KEY": "k"})
    assert reg.lookup("gpt-5").entry.key == "openai/gpt-5"
    assert reg.lookup("GPT-5-MINI").entry.key == "openai/gpt-5-mini"
    assert reg.lookup("anthropic/claude-opus-4-5").entry.key == "anthropic/claude-opus-4-5"
    fuzzy = reg.lookup("sonnet")
    assert fuzzy.entry.key == "anthropic/claude-sonnet-4-5"  # largest undated id
    with_level = reg.lookup("opus-4-5:high")
    assert (with_level.entry.key, with_level.thinking_level) == (
        "anthropic/claude-opus-4-5",
        "high",
    )
    custom = reg.lookup("openai/gpt-9-preview")
    assert custom.entry.info.id == "gpt-9-preview"
    assert custom.warning is not None
    assert "custom model id" in custom.warning
    with pytest.raises(ModelNotFoundError, match="not found"):
        reg.lookup("no-such-model-anywhere")
    with pytest.raises(ModelNotFoundError, match="Unknown provider"):
        reg.lookup("gpt-5", provider="nope")


def test_ambiguous_exact_id_prefers_authenticated_provider(tmp_path: Path) -> None:
    agent = write_models(
        tmp_path,
        {
            "providers": {
                "mirror": {
                    "baseUrl": "https://m.example/v1",
                    "api": "openai-completions",
                    "apiKey": "$MIRROR",
                    "models": [{"id": "gpt-5"}],
                }
            }
        },
    )
    only_mirror = load_registry(agent, env={"MIRROR": "x"})
    assert only_mirror.lookup("gpt-5").entry.key == "mirror/gpt-5"
    neither = load_registry(agent, env={})
    with pytest.raises(ModelNotFoundError, match="ambiguous"):
        neither.lookup("gpt-5")


def test_default_prefers_keys_then_local() -> None:
    keyed = load_registry(Path("/nonexistent"), env={"OPENAI_API_KEY": "k"})
    default = keyed.default()
    assert default is not None
    assert default.key == "openai/gpt-5"
    offline = load_registry(Path("/nonexistent"), env={})
    entry = offline.default()
    if entry is not None:
        assert entry.info.provider == "local"


async def test_create_adapters() -> None:
    reg = load_registry(Path("/nonexistent"), env={"OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "a"})
    model = resolve_model("gpt-4.1", registry=reg)
    assert isinstance(model, OpenAIResponsesModel)  # pi's openai provider speaks Responses
    assert model.info.id == "gpt-4.1"
    assert (model.key_source, model.base_url) == ("OPENAI_API_KEY", "https://api.openai.com/v1")
    await model.aclose()
    other = resolve_model("claude-haiku-4-5", registry=reg)
    assert isinstance(other, AnthropicModel)
    assert (other.key_source, other.base_url) == ("ANTHROPIC_API_KEY", "https://api.anthropic.com")
    await other.aclose()
    chosen = default_model(registry=reg)
    assert isinstance(chosen, AnthropicModel)
    await chosen.aclose()
    odd = ModelRegistry(
        [
            ModelEntry(
                LOCAL_MODEL.__class__(
                    provider="g",
                    id="x",
                    api="bedrock-converse-stream",
                    context_window=1,
                    max_tokens=1,
                )
            )
        ],
        env={},
    )
    with pytest.raises(ProviderError, match="not supported"):
        odd.create(odd.entries[0])


def test_loopback_servers_need_no_key(tmp_path: Path) -> None:
    agent = write_models(
        tmp_path,
        {
            "providers": {
                "llamacpp": {
                    "baseUrl": "http://localhost:8080/v1",
                    "api": "openai-completions",
                    "models": [{"id": "any"}],
                }
            }
        },
    )
    reg = load_registry(agent, env={})
    entry = reg.find("llamacpp", "any")
    assert entry is not None
    assert reg.credentials(entry).ok


async def test_missing_key_fails_fast_as_authentication() -> None:
    from pi_context.messages import user_message
    from pi_context.model import ModelRequest, complete

    reg = load_registry(Path("/nonexistent"), env={})
    model = resolve_model("gpt-5", registry=reg)
    done = await complete(model, ModelRequest(messages=[user_message("hi", timestamp=1)]))
    assert done.error is not None
    assert done.error.kind == "authentication"
    assert "openai" in str(done.error)
    assert str(done.error).endswith("(openai/gpt-5 at https://api.openai.com/v1)")
    await model.aclose()  # type: ignore[attr-defined]
