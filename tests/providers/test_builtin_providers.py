"""pi's built-in provider table and what ``--model provider/id`` resolves to on it."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from pi_context.errors import ModelNotFoundError, ProviderError
from pi_context.messages import user_message
from pi_context.model import ModelRequest, RequestOptions, complete
from pi_context.providers.builtin_providers import (
    BUILTIN_PROVIDERS,
    SUPPORTED_APIS,
    fill_base_url,
    provider_spec,
)
from pi_context.providers.google import GoogleModel
from pi_context.providers.openai import OpenAIChatModel
from pi_context.providers.openai_responses import OpenAIResponsesModel
from pi_context.providers.registry import load_registry
from tests.providers.adapters import track
from tests.providers.replay_server import ReplayServer, json_reply

NOWHERE = Path("/nonexistent")


def test_table_has_pis_43_providers() -> None:
    ids = [spec.id for spec in BUILTIN_PROVIDERS]
    assert len(ids) == 43
    assert len(set(ids)) == 43
    assert ids == sorted(ids)
    speaking = [spec.id for spec in BUILTIN_PROVIDERS if spec.supported_apis]
    not_speaking = sorted(set(ids) - set(speaking))
    assert not_speaking == [
        "amazon-bedrock",
        "google-vertex",
        "mistral",
        "openai-codex",
        "radius",
        "typesafe",
    ]
    openai = provider_spec("openai")
    assert openai is not None
    assert (openai.apis, openai.key_env, openai.base_url) == (
        ("openai-responses",),
        ("OPENAI_API_KEY",),
        "https://api.openai.com/v1",
    )
    opencode = provider_spec("opencode")
    assert opencode is not None
    assert set(opencode.supported_apis) == set(SUPPORTED_APIS)
    assert (
        opencode.base_url_for("google-generative-ai")
        == "https://opencode.ai/inference/google/v1beta"
    )
    assert opencode.base_url_for("openai-responses") == "https://opencode.ai/inference/openai/v1"


def test_base_url_placeholders() -> None:
    url = "https://gw/v1/{CLOUDFLARE_ACCOUNT_ID}/{CLOUDFLARE_GATEWAY_ID}/openai"
    assert fill_base_url(url, {}) == (None, "CLOUDFLARE_ACCOUNT_ID")
    assert fill_base_url(url, {"CLOUDFLARE_ACCOUNT_ID": "a", "CLOUDFLARE_GATEWAY_ID": "g"}) == (
        "https://gw/v1/a/g/openai",
        None,
    )


async def test_any_model_id_on_a_table_provider() -> None:
    reg = load_registry(NOWHERE, env={"GROQ_API_KEY": "gk"})
    found = reg.lookup("groq/llama-3.3-70b-versatile:high")
    assert found.warning == (
        'Model "llama-3.3-70b-versatile" not found for provider "groq". Using custom model id.'
    )
    info = found.entry.info
    assert (info.provider, info.id, info.api, info.base_url, info.reasoning) == (
        "groq",
        "llama-3.3-70b-versatile",
        "openai-completions",
        "https://api.groq.com/openai/v1",
        True,
    )
    assert found.thinking_level == "high"
    creds = reg.credentials(found.entry)
    assert (creds.api_key, creds.source) == ("gk", "GROQ_API_KEY")
    model = reg.create(found.entry)
    assert isinstance(model, OpenAIChatModel)
    assert model.base_url == "https://api.groq.com/openai/v1"
    await model.aclose()
    # --provider with a bare id means the same thing
    assert reg.lookup("llama-x", provider="groq").entry.info.base_url == info.base_url


async def test_catalog_providers_speak_pis_apis() -> None:
    reg = load_registry(NOWHERE, env={"GEMINI_API_KEY": "g", "OPENAI_API_KEY": "o"})
    gemini = reg.create(reg.lookup("google/gemini-2.5-pro").entry)
    assert isinstance(gemini, GoogleModel)
    assert gemini.key_source == "GEMINI_API_KEY"
    assert gemini.base_url == "https://generativelanguage.googleapis.com/v1beta"
    await gemini.aclose()
    gpt = reg.create(reg.lookup("openai/gpt-5").entry)
    assert isinstance(gpt, OpenAIResponsesModel)
    await gpt.aclose()
    xai = reg.create(reg.lookup("xai/grok-4").entry)
    assert isinstance(xai, OpenAIResponsesModel)
    assert xai.credential_error == 'No API key found for provider "xai": set XAI_API_KEY'
    await xai.aclose()


def test_providers_of_unsupported_apis_say_so() -> None:
    reg = load_registry(NOWHERE, env={"MISTRAL_API_KEY": "m"})
    assert "mistral" not in reg.providers()
    with pytest.raises(
        ModelNotFoundError,
        match='Provider "mistral" speaks mistral-conversations, which pictx does not support',
    ):
        reg.lookup("mistral/mistral-large")
    with pytest.raises(ModelNotFoundError, match='Provider "amazon-bedrock" speaks'):
        reg.lookup("claude", provider="amazon-bedrock")


async def test_placeholder_base_url_needs_its_variables() -> None:
    reg = load_registry(NOWHERE, env={"CLOUDFLARE_API_KEY": "c"})
    entry = reg.lookup("cloudflare-ai-gateway/claude-x").entry
    assert entry.info.api == "anthropic-messages"
    assert not reg.is_available(entry)
    model = reg.create(entry)
    assert model.credential_error is not None  # type: ignore[attr-defined]
    assert "set CLOUDFLARE_ACCOUNT_ID" in model.credential_error  # type: ignore[attr-defined]
    await model.aclose()  # type: ignore[attr-defined]
    env = {"CLOUDFLARE_API_KEY": "c", "CLOUDFLARE_ACCOUNT_ID": "acc", "CLOUDFLARE_GATEWAY_ID": "gw"}
    ready = load_registry(NOWHERE, env=env)
    entry = ready.lookup("cloudflare-ai-gateway/claude-x").entry
    assert ready.is_available(entry)
    model = ready.create(entry)
    assert model.info.base_url == "https://gateway.ai.cloudflare.com/v1/acc/gw/anthropic"
    await model.aclose()  # type: ignore[attr-defined]


async def test_models_json_settings_reach_custom_ids(tmp_path: Path, server: ReplayServer) -> None:
    (tmp_path / "models.json").write_text(
        json.dumps(
            {
                "providers": {
                    "groq": {"baseUrl": server.url + "/v1", "apiKey": "$MY_GROQ"},
                    "google": {
                        "modelOverrides": {
                            "gemini-2.5-flash": {
                                "thinkingLevelMap": {"off": None},
                                "compat": {"note": "kept"},
                            }
                        }
                    },
                }
            }
        ),
        encoding="utf-8",
    )
    reg = load_registry(tmp_path, env={"MY_GROQ": "secret"})
    assert reg.errors == []
    flash = reg.find("google", "gemini-2.5-flash")
    assert flash is not None
    assert dict(flash.info.thinking_level_map) == {"off": None}
    assert flash.info.compat == {"note": "kept"}
    model = track(reg.create(reg.lookup("groq/any-model").entry))
    server.add(json_reply(400, {"error": {"message": "nope"}}))
    await complete(model, ModelRequest(messages=[user_message("hi", timestamp=1)]))
    assert server.requests[0].path == "/v1/chat/completions"
    assert server.requests[0].headers["authorization"] == "Bearer secret"


def test_unsupported_api_on_create() -> None:
    reg = load_registry(NOWHERE, env={})
    entry = reg.lookup("openai/gpt-5").entry
    odd = dataclasses.replace(entry, info=dataclasses.replace(entry.info, api="pi-messages"))
    with pytest.raises(ProviderError, match='API "pi-messages" is not supported'):
        reg.create(odd)


async def test_long_cache_retention_from_the_environment(
    tmp_path: Path, server: ReplayServer
) -> None:
    (tmp_path / "models.json").write_text(
        json.dumps(
            {
                "providers": {
                    "openai": {"baseUrl": server.url + "/v1"},
                    "anthropic": {"baseUrl": server.url},
                    "groq": {"baseUrl": server.url + "/v1"},
                }
            }
        ),
        encoding="utf-8",
    )
    env = {
        "PI_CACHE_RETENTION": "long",
        "OPENAI_API_KEY": "o",
        "ANTHROPIC_API_KEY": "a",
        "GROQ_API_KEY": "g",
    }
    reg = load_registry(tmp_path, env=env)
    request = ModelRequest(
        messages=[user_message("hi", timestamp=1)],
        system_prompt="sys",
        options=RequestOptions(session_id="s1"),
    )
    for spec in ("openai/gpt-5", "anthropic/claude-custom", "groq/llama"):
        server.add(json_reply(400, {"error": {"type": "invalid_request_error", "message": "x"}}))
        model = track(reg.create(reg.lookup(spec).entry))
        await complete(model, request)
    responses, messages, chat = (r.json() for r in server.requests)
    assert responses["prompt_cache_retention"] == "24h"
    assert messages["system"][0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    assert messages["messages"][-1]["content"][-1]["cache_control"]["ttl"] == "1h"
    assert (chat["prompt_cache_retention"], chat["prompt_cache_key"]) == ("24h", "s1")
    # summaries never write the cache, long or not
    server.add(json_reply(400, {"error": {"message": "x"}}))
    summary = ModelRequest(messages=request.messages, options=RequestOptions(cache="none"))
    await complete(track(reg.create(reg.lookup("openai/gpt-5").entry)), summary)
    assert "prompt_cache_retention" not in server.requests[-1].json()


def test_models_json_rejects_bad_thinking_maps(tmp_path: Path) -> None:
    (tmp_path / "models.json").write_text(
        json.dumps(
            {
                "providers": {
                    "google": {
                        "compat": "yes",
                        "modelOverrides": {"gemini-2.5-pro": {"thinkingLevelMap": {"huge": "x"}}},
                    }
                }
            }
        ),
        encoding="utf-8",
    )
    reg = load_registry(tmp_path, env={})
    assert len(reg.errors) == 1
    assert "providers.google.compat: must be an object" in reg.errors[0]
    assert (
        "providers.google.modelOverrides.gemini-2.5-pro.thinkingLevelMap: must map thinking "
        "levels (off, minimal, low, medium, high, xhigh, max) to a string or null"
    ) in reg.errors[0]
    assert reg.errors[0].startswith(str(tmp_path / "models.json"))


def test_provider_compat_reaches_builtin_models(tmp_path: Path) -> None:
    (tmp_path / "models.json").write_text(
        json.dumps({"providers": {"openai": {"compat": {"supportsDeveloperRole": False}}}}),
        encoding="utf-8",
    )
    gpt = load_registry(tmp_path, env={}).find("openai", "gpt-5")
    assert gpt is not None
    assert gpt.info.compat == {"supportsDeveloperRole": False}
