from __future__ import annotations

import json
from pathlib import Path

import pytest

from pi_context.errors import SettingsError
from pi_context.resources import (
    ResourceLoader,
    TrustStore,
    agent_dir,
    compaction_settings_for,
    load_settings,
    resolve_project_trust,
    retry_settings_for,
)
from pi_context.resources.settings import bash_settings_for, deep_merge_settings
from pi_context.resources.trust import project_needs_trust


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_agent_dir_env_override(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("PI_CODING_AGENT_DIR", raising=False)
    assert agent_dir() == tmp_path / ".pi" / "agent"
    monkeypatch.setenv("PI_CODING_AGENT_DIR", "~/custom")
    assert agent_dir() == tmp_path / "custom"
    assert agent_dir({}) == tmp_path / ".pi" / "agent"  # an explicit environment wins
    assert agent_dir({"PI_CODING_AGENT_DIR": "/elsewhere"}) == Path("/elsewhere")


def test_merge_rules() -> None:
    merged = deep_merge_settings(
        {"a": {"x": 1, "y": 2}, "list": [1], "defaultTools": ["read", "bash"], "k": 1},
        {"a": {"y": 3}, "list": [2], "defaultTools": ["+grep", "-bash"], "k": None},
    )
    assert merged == {
        "a": {"x": 1, "y": 3},
        "list": [2],
        "defaultTools": ["read", "bash", "+grep", "-bash"],
        "k": None,
    }
    assert deep_merge_settings({"defaultTools": ["a"]}, {"defaultTools": ["b"]}) == {
        "defaultTools": ["b"]
    }


def test_compaction_overrides_fall_back_per_key(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    write(
        agent / "settings.json",
        json.dumps(
            {
                "compaction": {
                    "reserveTokens": 1000,
                    "modelOverrides": {"anthropic/claude-x": {"keepRecentTokens": 5}},
                }
            }
        ),
    )
    write(tmp_path / "p" / ".pi" / "settings.json", json.dumps({"compaction": {"enabled": False}}))
    s = load_settings(agent, tmp_path / "p")
    c = compaction_settings_for(s, "anthropic", "claude-x")
    assert (c.enabled, c.reserve_tokens, c.keep_recent_tokens) == (False, 1000, 5)
    other = compaction_settings_for(s, "openai", "gpt")
    assert (other.reserve_tokens, other.keep_recent_tokens) == (1000, 20000)
    assert compaction_settings_for(None).to_json() == {
        "enabled": True,
        "reserveTokens": 16384,
        "keepRecentTokens": 20000,
    }
    # untrusted: project file ignored
    assert compaction_settings_for(load_settings(agent, tmp_path / "p", trusted=False)).enabled


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"compaction": {"reserveTokens": -1}}, "Invalid compaction.reserveTokens setting: -1."),
        (
            {"compaction": {"modelOverrides": {"p/m": 3}}},
            'Invalid compaction.modelOverrides["p/m"] setting: 3. Expected an object.',
        ),
        (
            {"compaction": {"modelOverrides": {"p/m": {"keepRecentTokens": 1.5}}}},
            'Invalid compaction.modelOverrides["p/m"].keepRecentTokens setting: 1.5.',
        ),
    ],
)
def test_invalid_compaction_values(data: dict, message: str) -> None:  # type: ignore[type-arg]
    with pytest.raises(SettingsError) as info:
        compaction_settings_for(data, "p", "m")
    assert message in str(info.value)


def test_retry_settings_defaults_and_values() -> None:
    r = retry_settings_for({"retry": {"maxRetries": 5, "enabled": False}})
    assert (r.enabled, r.max_retries, r.base_delay_ms, r.max_delay_ms) == (
        False,
        5,
        2000,
        60000,
    )


def test_broken_settings_file_is_an_error_naming_it(tmp_path: Path) -> None:
    bad = write(tmp_path / "agent" / "settings.json", "{not json")
    with pytest.raises(SettingsError) as info:
        load_settings(tmp_path / "agent", tmp_path)
    assert str(bad) in str(info.value)
    write(bad, "[1, 2]")
    with pytest.raises(SettingsError, match="JSON object"):
        load_settings(tmp_path / "agent")
    write(bad, "\ufeff")
    assert load_settings(tmp_path / "agent").data == {}


def test_trust_store_format_and_nearest_ancestor(tmp_path: Path) -> None:
    store = TrustStore(tmp_path / "agent" / "trust.json")
    proj = tmp_path / "work" / "proj"
    proj.mkdir(parents=True)
    store.set(tmp_path / "work", True)
    store.set(proj, False)
    text = (tmp_path / "agent" / "trust.json").read_text()
    assert (
        text
        == json.dumps(
            {str(tmp_path.resolve() / "work"): True, str(proj.resolve()): False},
            indent=2,
            sort_keys=True,
        )
        + "\n"
    )
    fresh = TrustStore(tmp_path / "agent" / "trust.json")
    assert fresh.get(proj / "sub") is False
    assert fresh.get(tmp_path / "work" / "other") is True
    fresh.set(proj, None)
    assert TrustStore(tmp_path / "agent" / "trust.json").get(proj) is True


def test_invalid_trust_store(tmp_path: Path) -> None:
    write(tmp_path / "trust.json", '{"/x": "yes"}')
    with pytest.raises(SettingsError, match="Invalid trust store"):
        TrustStore(tmp_path / "trust.json").get(tmp_path)


def test_trust_decision_order(tmp_path: Path) -> None:
    home = tmp_path / "home"
    store = TrustStore(tmp_path / "trust.json")
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / ".pi").mkdir()  # a bare .pi does not need trust
    assert resolve_project_trust(plain, store, home=home).trusted is True
    risky = tmp_path / "risky"
    write(risky / ".pi" / "SYSTEM.md", "x")
    assert project_needs_trust(risky, home)
    assert resolve_project_trust(risky, store, home=home).trusted is False
    assert resolve_project_trust(risky, store, default="always", home=home).trusted is True
    assert resolve_project_trust(risky, store, override=True, home=home).source == "override"
    store.set(risky, True)
    decision = resolve_project_trust(risky, store, home=home)
    assert (decision.trusted, decision.source) == (True, "saved")
    write(home / ".agents" / "skills" / "s" / "SKILL.md", "x")
    assert not project_needs_trust(home, home)


def test_untrusted_project_keeps_context_files_only(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    proj = tmp_path / "proj"
    write(proj / "AGENTS.md", "ctx")
    write(proj / ".pi" / "SYSTEM.md", "project system")
    write(proj / ".pi" / "APPEND_SYSTEM.md", "project append")
    write(proj / ".pi" / "settings.json", '{"compaction": {"reserveTokens": 1}}')
    write(proj / ".pi" / "skills" / "p" / "SKILL.md", "---\ndescription: p\n---\n")
    write(agent / "APPEND_SYSTEM.md", "global append")
    home = tmp_path / "home"
    untrusted = ResourceLoader(proj, agent_dir=agent, home=home).load()
    assert untrusted.trusted is False
    assert [f.content for f in untrusted.context_files if f.path.startswith(str(tmp_path))] == [
        "ctx"
    ]
    assert untrusted.system_prompt is None
    assert untrusted.append_system_prompt == ["global append"]
    assert untrusted.skills == []
    assert compaction_settings_for(untrusted.settings).reserve_tokens == 16384
    TrustStore(agent / "trust.json").set(proj, True)
    trusted = ResourceLoader(proj, agent_dir=agent, home=home).load()
    assert trusted.system_prompt == "project system"
    assert trusted.append_system_prompt == ["project append"]
    assert [s.name for s in trusted.skills] == ["p"]
    assert compaction_settings_for(trusted.settings).reserve_tokens == 1


def test_reload_never_records_trust_for_resources_created_during_the_session(
    tmp_path: Path,
) -> None:
    """pi saves ``true`` here; a model that writes ``.pi/SYSTEM.md`` must not trust itself."""
    agent = tmp_path / "agent"
    proj = tmp_path / "proj"
    proj.mkdir()
    loader = ResourceLoader(proj, agent_dir=agent, home=tmp_path / "home")
    assert loader.load().trusted is True  # nothing needs trust yet
    write(proj / ".pi" / "SYSTEM.md", "made during the session")
    write(proj / ".pi" / "settings.json", '{"compaction": {"reserveTokens": 1}}')
    reloaded = loader.reload()
    assert reloaded.trusted is False
    assert reloaded.trust.source == "default"
    assert reloaded.system_prompt is None
    assert compaction_settings_for(reloaded.settings).reserve_tokens == 16384
    assert not (agent / "trust.json").exists()
    # the explicit user action is what trusts it; the next reload then uses the files
    TrustStore(agent / "trust.json").set(proj, True)
    again = loader.reload()
    assert again.trusted is True
    assert again.system_prompt == "made during the session"
    assert compaction_settings_for(again.settings).reserve_tokens == 1


def test_a_broken_settings_file_of_an_untrusted_project_is_not_read(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    proj = tmp_path / "proj"
    write(proj / ".pi" / "settings.json", "{not json")
    res = ResourceLoader(proj, agent_dir=agent, home=tmp_path / "home").load()
    assert res.trusted is False
    assert res.settings.project_data == {}
    assert (proj / ".pi" / "settings.json").read_text() == "{not json"


def test_bash_default_timeout_setting() -> None:
    assert bash_settings_for(None).default_timeout_seconds == 120.0
    assert bash_settings_for({"bash": {"defaultTimeoutSeconds": 5}}).default_timeout_seconds == 5
    assert bash_settings_for({"bash": {"defaultTimeoutSeconds": 0}}).default_timeout_seconds is None
    assert bash_settings_for({"bash": {}}).default_timeout_seconds == 120.0


@pytest.mark.parametrize("value", [-1, "60", True, 1e300, [], {"s": 1}])
def test_a_bad_bash_default_timeout_names_the_key_and_file(tmp_path: Path, value: object) -> None:
    agent = tmp_path / "agent"
    write(agent / "settings.json", json.dumps({"bash": {"defaultTimeoutSeconds": value}}))
    settings = load_settings(agent)
    with pytest.raises(SettingsError) as caught:
        bash_settings_for(settings)
    message = str(caught.value)
    assert "bash.defaultTimeoutSeconds" in message
    assert str(agent / "settings.json") in message


def test_a_bash_section_that_is_not_an_object_is_an_error() -> None:
    with pytest.raises(SettingsError, match="Invalid bash setting"):
        bash_settings_for({"bash": 30})
