"""pi's provider request settings: ``retry.provider.*``, ``httpIdleTimeoutMs`` and ``httpProxy``
reach the provider clients as pi applies them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pi_context.errors import SettingsError
from pi_context.model import complete
from pi_context.providers import load_registry
from pi_context.providers.anthropic import AnthropicModel
from pi_context.providers.openai import OpenAIChatModel
from pi_context.resources.settings import (
    ProviderRequestSettings,
    apply_http_proxy,
    http_idle_timeout_ms_for,
    load_settings,
    provider_request_settings_for,
)
from tests.providers.adapters import ask, track
from tests.providers.anthropic_stream import info as anthropic_info
from tests.providers.anthropic_stream import reply_text
from tests.providers.replay_server import ReplayServer, json_reply
from tests.providers.test_openai import info as openai_info

OVERLOADED = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}


def test_pi_defaults() -> None:
    assert provider_request_settings_for({}) == ProviderRequestSettings(
        timeout_seconds=300.0, max_retries=0, max_retry_delay_seconds=60.0
    )
    assert http_idle_timeout_ms_for({}) == 300_000


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        ({"httpIdleTimeoutMs": 30_000}, (30.0, 0, 60.0)),
        ({"httpIdleTimeoutMs": "disabled"}, (None, 0, 60.0)),
        ({"httpIdleTimeoutMs": " 120000 "}, (120.0, 0, 60.0)),
        ({"httpIdleTimeoutMs": 0}, (None, 0, 60.0)),
        (
            {"httpIdleTimeoutMs": 30_000, "retry": {"provider": {"timeoutMs": 5_000}}},
            (5.0, 0, 60.0),
        ),
        ({"retry": {"provider": {"maxRetries": 2, "maxRetryDelayMs": 0}}}, (300.0, 2, None)),
        ({"retry": {"provider": {"maxRetryDelayMs": 1500}}}, (300.0, 0, 1.5)),
    ],
)
def test_settings_resolve_as_pi_reads_them(
    settings: dict[str, Any], expected: tuple[float | None, int, float | None]
) -> None:
    got = provider_request_settings_for(settings)
    assert (got.timeout_seconds, got.max_retries, got.max_retry_delay_seconds) == expected


def test_a_bad_value_names_the_key_and_the_file(tmp_path: Path) -> None:
    (tmp_path / "settings.json").write_text('{"httpIdleTimeoutMs": "soon"}', encoding="utf-8")
    with pytest.raises(SettingsError, match=r"Invalid httpIdleTimeoutMs setting: soon") as err:
        provider_request_settings_for(load_settings(tmp_path))
    assert str(tmp_path / "settings.json") in str(err.value)
    with pytest.raises(SettingsError, match=r"retry\.provider\.maxRetries"):
        provider_request_settings_for({"retry": {"provider": {"maxRetries": -1}}})
    with pytest.raises(SettingsError, match=r"retry\.provider\.timeoutMs"):
        provider_request_settings_for({"retry": {"provider": {"timeoutMs": -5}}})


def test_http_proxy_fills_only_unset_variables(tmp_path: Path) -> None:
    (tmp_path / "settings.json").write_text(
        '{"httpProxy": " http://proxy:3128 "}', encoding="utf-8"
    )
    settings = load_settings(tmp_path)
    env: dict[str, str] = {}
    apply_http_proxy(settings, env)
    assert env == {"HTTP_PROXY": "http://proxy:3128", "HTTPS_PROXY": "http://proxy:3128"}
    env = {"HTTPS_PROXY": "http://mine:1"}
    apply_http_proxy(settings, env)
    assert env == {"HTTP_PROXY": "http://proxy:3128", "HTTPS_PROXY": "http://mine:1"}


def test_http_proxy_is_read_from_the_global_file_only(tmp_path: Path) -> None:
    agent, project = tmp_path / "agent", tmp_path / "project"
    agent.mkdir()
    (project / ".pi").mkdir(parents=True)
    (project / ".pi" / "settings.json").write_text(
        '{"httpProxy": "http://project:1"}', encoding="utf-8"
    )
    env: dict[str, str] = {}
    apply_http_proxy(load_settings(agent, project), env)
    assert env == {}


async def test_anthropic_retries_when_asked(server: ReplayServer) -> None:
    server.add(json_reply(529, OVERLOADED, {"retry-after-ms": "1"}), reply_text("back"))
    m = track(AnthropicModel(anthropic_info(), api_key="k", base_url=server.url, max_retries=1))
    done = await complete(m, ask())
    assert done.error is None
    assert len(server.requests) == 2


async def test_a_server_wait_over_the_limit_is_not_retried(server: ReplayServer) -> None:
    server.add(json_reply(529, OVERLOADED, {"retry-after": "120"}), reply_text("back"))
    m = track(
        AnthropicModel(
            anthropic_info(), api_key="k", base_url=server.url, max_retries=3, max_retry_delay=60
        )
    )
    done = await complete(m, ask())
    assert done.error is not None
    assert done.error.retry_after == 120.0
    assert len(server.requests) == 1


async def test_x_should_retry_false_is_not_retried(server: ReplayServer) -> None:
    server.add(
        json_reply(503, {"error": {"message": "down"}}, {"x-should-retry": "false"}),
        json_reply(503, {"error": {"message": "down"}}),
    )
    m = track(
        OpenAIChatModel(openai_info(), api_key="k", base_url=server.url + "/v1", max_retries=2)
    )
    done = await complete(m, ask())
    assert done.error is not None
    assert len(server.requests) == 1


async def test_the_registry_applies_the_agent_dir_settings(
    tmp_path: Path, server: ReplayServer
) -> None:
    (tmp_path / "models.json").write_text(
        json.dumps({"providers": {"anthropic": {"baseUrl": server.url}}}), encoding="utf-8"
    )
    (tmp_path / "settings.json").write_text(
        json.dumps({"retry": {"provider": {"maxRetries": 1}}}), encoding="utf-8"
    )
    reg = load_registry(tmp_path, env={"ANTHROPIC_API_KEY": "a"})
    assert reg.request.max_retries == 1
    server.add(json_reply(529, OVERLOADED, {"retry-after-ms": "1"}), reply_text("back"))
    model = track(reg.create(reg.lookup("anthropic/claude-custom").entry))
    done = await complete(model, ask())
    assert done.error is None
    assert len(server.requests) == 2
