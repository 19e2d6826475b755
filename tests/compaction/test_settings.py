from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pytest

from pi_context.errors import ProviderError, SettingsError
from pi_context.model.retry import RetryPolicy
from pi_context.resources.settings import (
    CompactionSettings,
    RetrySettings,
    Settings,
    branch_summary_settings_for,
    compaction_settings_for,
    retry_settings_for,
)


def resolve_compaction_settings(
    data: Mapping[str, Any], model_key: str | None = None
) -> CompactionSettings:
    """The settings for ``"<provider>/<modelId>"`` (the id may itself contain ``/``)."""
    if model_key is None:
        return compaction_settings_for(data)
    provider, _, model_id = model_key.partition("/")
    return compaction_settings_for(data, provider, model_id)


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
    r = retry_settings_for({"retry": {"maxRetries": 5, "baseDelayMs": 100, "maxAgentDelayMs": 250}})
    assert r.max_delay_ms == 250
    policy = RetryPolicy(r)
    assert [policy.delay_ms(n) for n in (1, 2, 3, 4)] == [100, 200, 250, 250]
    assert policy.delay_ms(1, retry_after=0.05) == 50
    assert policy.delay_ms(1, retry_after=10.0) == 250
    assert policy.max_attempts == 5
    assert RetryPolicy(retry_settings_for({"retry": {"enabled": False}})).max_attempts == 0
    assert RetryPolicy().delay_ms(1) == 2000
    assert RetryPolicy(RetrySettings()) == RetryPolicy()
    assert branch_summary_settings_for({"branchSummary": {"reserveTokens": 5}}).reserve_tokens == 5


def test_retry_policy_retries_only_transient_errors_within_the_limit() -> None:
    failed = {"role": "assistant", "stopReason": "error", "errorMessage": "529 overloaded_error"}
    policy = RetryPolicy(RetrySettings(max_retries=2))
    assert policy.should_retry(failed, None, 0)
    assert policy.should_retry(failed, None, 1)
    assert not policy.should_retry(failed, None, 2)
    assert not policy.should_retry({**failed, "stopReason": "stop"}, None, 0)
    quota = {**failed, "errorMessage": "You exceeded your current quota"}
    assert not policy.should_retry(quota, None, 0)
    transient = ProviderError("busy", kind="transient")
    assert policy.should_retry({**failed, "errorMessage": "busy"}, transient, 0)
    overflow = {**failed, "errorMessage": "prompt is too long: 250000 tokens > 200000 maximum"}
    assert not policy.should_retry(overflow, transient, 0)


def test_bad_value_names_the_file_it_came_from() -> None:
    settings = Settings(
        data={"retry": {"maxRetries": -1}},
        global_data={"retry": {"maxRetries": 2}},
        project_data={"retry": {"maxRetries": -1}},
        global_path="/home/u/.pi/agent/settings.json",
        project_path="/p/.pi/settings.json",
    )
    with pytest.raises(SettingsError) as info:
        retry_settings_for(settings)
    assert str(info.value) == (
        "/p/.pi/settings.json: Invalid retry.maxRetries setting: -1."
        " Expected a non-negative safe integer."
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
        (retry_settings_for, {"retry": "yes"}, "Invalid retry setting"),
        (retry_settings_for, {"retry": {"maxRetries": -2}}, "Invalid retry.maxRetries"),
        (branch_summary_settings_for, {"branchSummary": 5}, "Invalid branchSummary setting"),
        (
            branch_summary_settings_for,
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


def test_fit_to_window_leaves_windows_of_pis_design_size_alone() -> None:
    settings = CompactionSettings()
    for window in (200_000, 400_000, 1_000_000):
        assert settings.fit_to_window(window) is settings
    assert settings.fit_to_window(0) is settings


def test_fit_to_window_keeps_pis_proportions_on_smaller_windows() -> None:
    from pi_context.tokens import should_compact

    settings = CompactionSettings()
    # the reserve: pi's 16,384 down to 65,536 tokens, a third of the window at 32,768 and
    # below; in between, the mid-window rule (the next test)
    assert settings.fit_to_window(128_000).reserve_tokens == 16_384
    assert settings.fit_to_window(65_536).reserve_tokens == 16_384
    assert settings.fit_to_window(32_768).reserve_tokens == 32_768 // 3
    assert settings.fit_to_window(16_000).reserve_tokens == 16_000 // 3
    # the tail: a tenth of the window (pi's 20,000 of 200,000)
    assert settings.fit_to_window(128_000).keep_recent_tokens == 12_800
    assert settings.fit_to_window(48_000).keep_recent_tokens == 4_800
    # a 48k model with an 8,192-token answer: the reserve holds the answer and the output
    # cap's 4,096 margin, so the window does not cut the answer before compaction
    assert settings.fit_to_window(48_000).reserve_tokens >= 8192 + 4096
    assert should_compact(100, 8192, settings)  # pi: a 16k reserve always triggers on 8k
    small = settings.fit_to_window(8192)
    assert (small.reserve_tokens, small.keep_recent_tokens) == (2730, 819)
    assert not should_compact(100, 8192, small)
    assert should_compact(5500, 8192, small)
    assert small.summarizer == settings.summarizer


def test_fit_to_window_compacts_at_about_half_of_a_mid_sized_window() -> None:
    from pi_context.resources.settings import mid_window_reserve
    from pi_context.tokens import should_compact

    settings = CompactionSettings()
    # half the window at three times pi's reserve, pi's reserve at four times it
    assert settings.fit_to_window(49_152).reserve_tokens == 24_576
    fitted = settings.fit_to_window(48_000)
    assert (fitted.reserve_tokens, fitted.keep_recent_tokens) == (23_616, 4_800)
    assert not should_compact(24_384, 48_000, fitted)
    assert should_compact(24_385, 48_000, fitted)
    assert settings.fit_to_window(57_344).reserve_tokens == 20_480
    # only inside the band; the compaction point never falls as the window grows
    assert mid_window_reserve(32_768) == mid_window_reserve(65_536) == 0
    points = [w - settings.fit_to_window(w).reserve_tokens for w in range(16_000, 80_001, 64)]
    assert points == sorted(points)
    # a reserve the user set is kept; a tail the user set keeps room to grow
    reserve_set = compaction_settings_for({"compaction": {"reserveTokens": 16_000}})
    assert reserve_set.fit_to_window(48_000).reserve_tokens == 16_000
    long_tail = compaction_settings_for({"compaction": {"keepRecentTokens": 14_000}})
    fitted = long_tail.fit_to_window(48_000)
    assert (fitted.reserve_tokens, fitted.keep_recent_tokens) == (16_000, 14_000)
    # the lean settings (a cap below the band's point) compact where they did
    lean = compaction_settings_for(
        {"compaction": {"maxContextTokens": 20_000, "keepRecentTokens": 4_000}}
    )
    assert lean.fit_to_window(48_000).reserve_tokens == 28_000


def test_fit_to_window_keeps_sizes_the_user_set_when_they_fit() -> None:
    lean = compaction_settings_for(
        {"compaction": {"reserveTokens": 28_000, "keepRecentTokens": 4_000}}
    )
    assert lean.explicit == {"reserveTokens", "keepRecentTokens"}
    fitted = lean.fit_to_window(48_000)
    assert (fitted.reserve_tokens, fitted.keep_recent_tokens) == (28_000, 4_000)
    # only the reserve set: the default tail is still capped, the reserve kept
    reserve_only = compaction_settings_for({"compaction": {"reserveTokens": 28_000}})
    fitted = reserve_only.fit_to_window(48_000)
    assert (fitted.reserve_tokens, fitted.keep_recent_tokens) == (28_000, 4_800)
    # set, but no room left for both: capped like the defaults
    too_big = compaction_settings_for(
        {"compaction": {"reserveTokens": 16_384, "keepRecentTokens": 20_000}}
    )
    fitted = too_big.fit_to_window(8192)
    assert (fitted.reserve_tokens, fitted.keep_recent_tokens) == (2730, 819)
    # a model override counts as set; the defaults do not
    override = compaction_settings_for(
        {"compaction": {"modelOverrides": {"p/m": {"keepRecentTokens": 3000}}}}, "p", "m"
    )
    assert override.explicit == {"keepRecentTokens"}
    assert CompactionSettings().explicit == frozenset()
    assert CompactionSettings().with_keep_recent(5000).explicit == {"keepRecentTokens"}


def test_share_cache_is_read_from_the_compaction_settings() -> None:
    assert not compaction_settings_for({}).share_cache
    assert compaction_settings_for({"compaction": {"shareCache": True}}).share_cache


def test_max_context_tokens_moves_the_compaction_point_down() -> None:
    from pi_context.tokens import should_compact

    lean = compaction_settings_for(
        {"compaction": {"maxContextTokens": 20_000, "keepRecentTokens": 4_000}}
    )
    for window in (48_000, 200_000):
        fitted = lean.fit_to_window(window)
        assert not should_compact(20_000, window, fitted)
        assert should_compact(20_001, window, fitted)
        assert fitted.keep_recent_tokens == 4_000
    # never later than the reserve says, and ignored when not above the kept tail
    assert lean.fit_to_window(16_000).reserve_tokens == 16_000 // 3
    tail = compaction_settings_for({"compaction": {"maxContextTokens": 3_000}})
    assert tail.fit_to_window(200_000).reserve_tokens == tail.reserve_tokens
    assert compaction_settings_for({}).max_context_tokens == 0
    # under twice the tail a compaction could not get below it: every turn would compact
    close = compaction_settings_for({"compaction": {"maxContextTokens": 5_000}})
    default_48k = CompactionSettings().fit_to_window(48_000).reserve_tokens
    assert close.fit_to_window(48_000).reserve_tokens == default_48k  # tail 4,800: ignored
    assert close.fit_to_window(48_000).keep_recent_tokens == 4_800
    twice = compaction_settings_for({"compaction": {"maxContextTokens": 9_600}})
    assert twice.fit_to_window(48_000).reserve_tokens == 48_000 - 9_600


def test_idle_compaction_and_mask_batch_settings() -> None:
    plain = compaction_settings_for({})
    assert (plain.idle_compact_percent, plain.idle_seconds, plain.mask_batch_tokens) == (30, 300, 0)
    s = compaction_settings_for(
        {"compaction": {"idleCompactPercent": 40, "idleSeconds": 600, "maskBatchTokens": 9000}}
    )
    assert (s.idle_compact_percent, s.idle_seconds, s.mask_batch_tokens) == (40, 600, 9000)
    with pytest.raises(SettingsError, match=r"compaction\.idleCompactPercent.*0 to 100"):
        compaction_settings_for({"compaction": {"idleCompactPercent": 150}})
    with pytest.raises(SettingsError, match=r"compaction\.idleSeconds"):
        compaction_settings_for({"compaction": {"idleSeconds": -5}})
