from __future__ import annotations

from collections.abc import Callable

import pytest

from pi_context.compaction.settings import (
    CompactionSettings,
    RetrySettings,
    resolve_branch_summary_settings,
    resolve_compaction_settings,
    resolve_retry_settings,
)
from pi_context.errors import SettingsError


def test_defaults_are_pis() -> None:
    s = resolve_compaction_settings({})
    assert (s.enabled, s.reserve_tokens, s.keep_recent_tokens) == (True, 16384, 20000)
    assert s.to_json() == {"enabled": True, "reserveTokens": 16384, "keepRecentTokens": 20000}
    assert s == CompactionSettings()


def test_model_override_beats_ordinary_value_per_field() -> None:
    data = {
        "compaction": {
            "enabled": False,
            "reserveTokens": 1000,
            "keepRecentTokens": 2000,
            "modelOverrides": {"anthropic/claude": {"reserveTokens": 400000}},
        }
    }
    s = resolve_compaction_settings(data, "anthropic/claude")
    assert (s.enabled, s.reserve_tokens, s.keep_recent_tokens) == (False, 400000, 2000)
    other = resolve_compaction_settings(data, "openai/gpt")
    assert other.reserve_tokens == 1000


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"compaction": {"reserveTokens": -1}}, "Invalid compaction.reserveTokens setting"),
        ({"compaction": {"keepRecentTokens": 1.5}}, "Invalid compaction.keepRecentTokens"),
        ({"compaction": {"modelOverrides": {"p/m": 3}}}, 'modelOverrides["p/m"] setting'),
        (
            {"compaction": {"modelOverrides": {"p/m": {"reserveTokens": "x"}}}},
            'modelOverrides["p/m"].reserveTokens',
        ),
        ({"compaction": {"summarizer": "gpt"}}, "compaction.summarizer"),
        ({"compaction": []}, "Invalid compaction setting"),
    ],
)
def test_invalid_values_name_the_setting(data: dict[str, object], message: str) -> None:
    with pytest.raises(SettingsError, match=message.replace("[", r"\[").replace(".", r"\.")):
        resolve_compaction_settings(data, "p/m")


def test_beyond_pi_settings() -> None:
    s = resolve_compaction_settings(
        {
            "compaction": {
                "summarizer": "offline",
                "maskObservations": True,
                "maskKeepTurns": 5,
                "guard": False,
                "maxConsecutiveFailures": 0,
            }
        }
    )
    assert (s.summarizer, s.mask_observations, s.mask_keep_turns, s.guard) == (
        "offline",
        True,
        5,
        False,
    )
    assert s.max_consecutive_failures == 0


def test_retry_settings_and_backoff() -> None:
    r = resolve_retry_settings(
        {"retry": {"maxRetries": 5, "baseDelayMs": 100, "maxAgentDelayMs": 250}}
    )
    assert [r.delay_ms(n) for n in (1, 2, 3, 4)] == [100, 200, 250, 250]
    assert r.max_attempts == 5
    assert resolve_retry_settings({"retry": {"enabled": False}}).max_attempts == 0
    assert RetrySettings().delay_ms(1) == 2000
    assert (
        resolve_branch_summary_settings({"branchSummary": {"reserveTokens": 5}}).reserve_tokens == 5
    )


def test_override_key_of_a_model_id_with_slashes() -> None:
    data = {
        "compaction": {"modelOverrides": {"openrouter/anthropic/claude": {"keepRecentTokens": 7}}}
    }
    assert resolve_compaction_settings(data, "openrouter/anthropic/claude").keep_recent_tokens == 7
    assert resolve_compaction_settings(data, "openrouter/anthropic").keep_recent_tokens == 20000


@pytest.mark.parametrize(
    ("resolve", "data", "message"),
    [
        (resolve_retry_settings, {"retry": "yes"}, "Invalid retry setting"),
        (resolve_retry_settings, {"retry": {"maxRetries": -2}}, "Invalid retry.maxRetries"),
        (resolve_branch_summary_settings, {"branchSummary": 5}, "Invalid branchSummary setting"),
        (
            resolve_branch_summary_settings,
            {"branchSummary": {"reserveTokens": True}},
            "Invalid branchSummary.reserveTokens",
        ),
        (
            resolve_compaction_settings,
            {"compaction": {"maskKeepTurns": -1}},
            "Invalid compaction.maskKeepTurns",
        ),
    ],
)
def test_invalid_retry_branch_and_extra_values_name_the_setting(
    resolve: Callable[[dict[str, object]], object], data: dict[str, object], message: str
) -> None:
    with pytest.raises(SettingsError, match=message.replace(".", r"\.")):
        resolve(data)


def test_fit_to_window_leaves_large_windows_alone() -> None:
    from pi_context.compaction.settings import CompactionSettings

    settings = CompactionSettings()
    assert settings.fit_to_window(128_000) is settings
    assert settings.fit_to_window(0) is settings


def test_fit_to_window_caps_reserve_and_tail_on_small_windows() -> None:
    from pi_context.compaction.settings import CompactionSettings
    from pi_context.tokens import should_compact

    settings = CompactionSettings()
    assert should_compact(100, 8192, settings)  # pi: a 16k reserve always triggers on 8k
    small = settings.fit_to_window(8192)
    assert (small.reserve_tokens, small.keep_recent_tokens) == (2048, 2048)
    assert not should_compact(100, 8192, small)
    assert should_compact(6200, 8192, small)
    assert small.summarizer == settings.summarizer
