"""``<agentDir>/auth.json``: pi's stored credentials, their precedence, expiry and safe writes."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from pi_context.errors import ResourceError
from pi_context.providers.auth_store import AuthStore, expired_oauth_error
from pi_context.providers.registry import load_registry

NOW = 1_767_225_600.0  # seconds


def _write(agent: Path, records: object) -> Path:
    agent.mkdir(parents=True, exist_ok=True)
    path = agent / "auth.json"
    path.write_text(json.dumps(records), encoding="utf-8")
    return path


def test_stored_key_wins_over_the_environment_and_models_json(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    _write(agent, {"openai": {"type": "api_key", "key": "sk-stored"}})
    (agent / "models.json").write_text(
        json.dumps({"providers": {"openai": {"apiKey": "sk-models-json"}}}), encoding="utf-8"
    )
    registry = load_registry(agent, env={"OPENAI_API_KEY": "sk-env"})
    entry = next(e for e in registry.entries if e.info.provider == "openai")
    creds = registry.credentials(entry)
    assert creds.api_key == "sk-stored"
    assert creds.source is not None
    assert "auth.json" in creds.source
    registry.key_overrides["openai"] = "sk-flag"  # --api-key beats everything
    assert registry.credentials(entry).api_key == "sk-flag"


def test_a_stored_key_makes_the_provider_available(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    agent.mkdir()
    before = load_registry(agent, env={})
    assert not any(e.info.provider == "openai" for e in before.available())
    _write(agent, {"openai": {"type": "api_key", "key": "sk-stored"}})
    after = load_registry(agent, env={})
    assert any(e.info.provider == "openai" for e in after.available())


def test_oauth_access_token_is_used_until_it_expires(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        {
            "anthropic": {"type": "oauth", "access": "tok-a", "refresh": "r", "expires": 2e12},
            "openai": {"type": "oauth", "access": "tok-o", "refresh": "r", "expires": 1000},
        },
    )
    store = AuthStore(path, clock=lambda: NOW)
    fresh = store.credential("anthropic")
    assert fresh is not None
    assert (fresh.key, fresh.oauth, fresh.error) == ("tok-a", True, None)
    stale = store.credential("openai")
    assert stale is not None
    assert stale.key is None
    assert stale.error == (
        'Authentication failed for "openai". Credentials may have expired or network is '
        "unavailable. Run '/login openai' to re-authenticate."
    )
    assert stale.error == expired_oauth_error("openai")


def test_expired_oauth_makes_the_model_unavailable_with_pi_s_error(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    _write(agent, {"anthropic": {"type": "oauth", "access": "old", "expires": 1000}})
    registry = load_registry(agent, env={"ANTHROPIC_API_KEY": "sk-env"})
    entry = next(e for e in registry.entries if e.info.provider == "anthropic")
    assert not registry.is_available(entry)
    assert registry.credentials(entry).error == expired_oauth_error("anthropic")


def test_a_fresh_anthropic_oauth_token_is_sent_as_bearer(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    _write(agent, {"anthropic": {"type": "oauth", "access": "oat-1", "expires": 4e12}})
    registry = load_registry(agent, env={})
    entry = next(e for e in registry.entries if e.info.provider == "anthropic")
    creds = registry.credentials(entry)
    assert (creds.api_key, creds.bearer) == (None, "oat-1")


@pytest.mark.parametrize(
    ("content", "why"),
    [
        ("{not json", "is not valid JSON"),
        ("[1, 2]", "is not a JSON object"),
    ],
)
def test_a_broken_file_is_a_warning_naming_it(tmp_path: Path, content: str, why: str) -> None:
    agent = tmp_path / "agent"
    agent.mkdir()
    path = agent / "auth.json"
    path.write_text(content, encoding="utf-8")
    registry = load_registry(agent, env={"OPENAI_API_KEY": "sk-env"})
    [warning] = [w for w in registry.warnings if "auth.json" in w]
    assert warning.startswith(f"{path}: {why}")
    assert warning.endswith("its stored credentials are ignored")
    entry = next(e for e in registry.entries if e.info.provider == "openai")
    assert registry.credentials(entry).api_key == "sk-env"  # the environment still works
    with pytest.raises(ResourceError, match="not changed, the file is broken"):
        AuthStore(path).set_api_key("openai", "sk-new")
    assert path.read_text(encoding="utf-8") == content  # nothing lost


def test_an_unknown_record_is_skipped_with_a_warning(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    _write(agent, {"openai": {"type": "password", "secret": "x"}})
    registry = load_registry(agent, env={"OPENAI_API_KEY": "sk-env"})
    assert any('record for "openai"' in w for w in registry.warnings)
    entry = next(e for e in registry.entries if e.info.provider == "openai")
    assert registry.credentials(entry).api_key == "sk-env"


def test_set_and_remove_keep_other_records_and_mode_0600(tmp_path: Path) -> None:
    path = _write(tmp_path / "agent", {"google": {"type": "oauth", "access": "a", "expires": 1}})
    path.chmod(0o644)
    store = AuthStore(path)
    store.set_api_key("openai", "sk-new")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data == {
        "google": {"type": "oauth", "access": "a", "expires": 1},
        "openai": {"type": "api_key", "key": "sk-new"},
    }
    assert store.remove("openai") is True
    assert store.remove("openai") is False
    assert json.loads(path.read_text(encoding="utf-8")) == {
        "google": {"type": "oauth", "access": "a", "expires": 1}
    }
    assert [p.name for p in path.parent.iterdir()] == ["auth.json"]  # no temporary file left


def test_first_login_creates_the_file_private(tmp_path: Path) -> None:
    path = tmp_path / "fresh" / "auth.json"
    AuthStore(path).set_api_key("openai", "sk-1")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert AuthStore(path).providers() == ["openai"]
