"""Compaction, branch-summary and retry settings, and their resolution per model.

pi 1.6.0 reads ``compaction.{enabled, reserveTokens, keepRecentTokens, modelOverrides}``,
``branchSummary.reserveTokens`` and ``retry.{enabled, maxRetries, baseDelayMs, maxAgentDelayMs}``
from the merged settings files. :func:`resolve_compaction_settings` applies pi's rules to a merged
settings mapping (so the resources layer and tests share one implementation), including the
per-model ``modelOverrides`` lookup keyed ``"<provider>/<modelId>"``.

Settings that go beyond pi live under the same ``compaction`` object with names pi does not use
(``summarizer``, ``maskObservations``, ``maskKeepTurns``, ``guard``, ``maxConsecutiveFailures``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Final, Literal

from pi_context.errors import SettingsError

__all__ = [
    "DEFAULT_KEEP_RECENT_TOKENS",
    "DEFAULT_RESERVE_TOKENS",
    "BranchSummarySettings",
    "CompactionSettings",
    "RetrySettings",
    "SummarizerMode",
    "resolve_branch_summary_settings",
    "resolve_compaction_settings",
    "resolve_retry_settings",
]

DEFAULT_RESERVE_TOKENS: Final = 16384
DEFAULT_KEEP_RECENT_TOKENS: Final = 20000
_MAX_SAFE_INTEGER: Final = 2**53 - 1

SummarizerMode = Literal["auto", "model", "offline"]
"""``auto``: the model when there is one, the offline summarizer otherwise and after a model
failure; ``model``: pi's behaviour (a failure is a failure); ``offline``: never call a model."""


@dataclass(frozen=True, slots=True)
class CompactionSettings:
    """Effective compaction settings for one model.

    The first three fields are pi's. The rest switch this project's additions; their defaults
    keep pi's behaviour except that a session without a model can still be compacted offline.
    """

    enabled: bool = True
    reserve_tokens: int = DEFAULT_RESERVE_TOKENS
    keep_recent_tokens: int = DEFAULT_KEEP_RECENT_TOKENS
    summarizer: SummarizerMode = "auto"
    mask_observations: bool = False
    """Replace tool results older than ``mask_keep_turns`` turns by a placeholder first."""
    mask_keep_turns: int = 3
    guard: bool = True
    """Reject a summary that would not shrink the context or that lost the file lists."""
    max_consecutive_failures: int = 3
    """Automatic compaction pauses after this many failures in a row (0: never pause)."""

    def with_keep_recent(self, keep_recent_tokens: int) -> CompactionSettings:
        return replace(self, keep_recent_tokens=keep_recent_tokens)

    def to_json(self) -> dict[str, Any]:
        """pi's ``settings`` object as it appears in a preparation."""
        return {
            "enabled": self.enabled,
            "reserveTokens": self.reserve_tokens,
            "keepRecentTokens": self.keep_recent_tokens,
        }


@dataclass(frozen=True, slots=True)
class RetrySettings:
    """Backoff for transient summarization errors (pi's ``retry`` settings)."""

    enabled: bool = True
    max_retries: int = 3
    base_delay_ms: int = 2000
    max_delay_ms: int = 60000

    @property
    def max_attempts(self) -> int:
        """Retries allowed after the first call."""
        return self.max_retries if self.enabled else 0

    def delay_ms(self, attempt: int) -> int:
        """Delay before retry number ``attempt`` (1-based): ``base * 2^(attempt-1)``, capped."""
        return int(min(self.base_delay_ms * 2 ** (attempt - 1), self.max_delay_ms))


@dataclass(frozen=True, slots=True)
class BranchSummarySettings:
    reserve_tokens: int = DEFAULT_RESERVE_TOKENS


def _is_safe_int(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return isinstance(value, int) and 0 <= value <= _MAX_SAFE_INTEGER


def _int_setting(value: Any, name: str) -> int | None:
    if value is None:
        return None
    if not _is_safe_int(value):
        raise SettingsError(
            f"Invalid {name} setting: {value!r}. Expected a non-negative safe integer."
        )
    return int(value)


def _section(settings: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    value = settings.get(name)
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise SettingsError(f"Invalid {name} setting: {value!r}. Expected an object.")
    return value


def resolve_compaction_settings(
    settings: Mapping[str, Any] | None = None, model_key: str | None = None
) -> CompactionSettings:
    """The effective compaction settings for the model ``"<provider>/<modelId>"``.

    ``settings`` is the merged settings mapping (global then project). Each of
    ``reserveTokens``/``keepRecentTokens`` resolves as ``override ?? ordinary ?? default``;
    ``enabled`` is never per model. Invalid values raise :class:`SettingsError` naming the key.
    """
    section = _section(settings or {}, "compaction")
    enabled = section.get("enabled")
    values: dict[str, int] = {}
    overrides_raw = section.get("modelOverrides")
    entry: Mapping[str, Any] | None = None
    if model_key is not None and isinstance(overrides_raw, Mapping):
        raw_entry = overrides_raw.get(model_key)
        if raw_entry is not None and not isinstance(raw_entry, Mapping):
            raise SettingsError(
                f'Invalid compaction.modelOverrides["{model_key}"] setting: {raw_entry!r}. '
                "Expected an object."
            )
        entry = raw_entry
    for field, default in (
        ("reserveTokens", DEFAULT_RESERVE_TOKENS),
        ("keepRecentTokens", DEFAULT_KEEP_RECENT_TOKENS),
    ):
        ordinary = _int_setting(section.get(field), f"compaction.{field}")
        override = None
        if entry is not None:
            override = _int_setting(
                entry.get(field), f'compaction.modelOverrides["{model_key}"].{field}'
            )
        values[field] = (
            override if override is not None else (ordinary if ordinary is not None else default)
        )
    summarizer = section.get("summarizer", "auto")
    if summarizer not in ("auto", "model", "offline"):
        raise SettingsError(
            f"Invalid compaction.summarizer setting: {summarizer!r}. "
            'Expected "auto", "model" or "offline".'
        )
    keep_turns = _int_setting(section.get("maskKeepTurns"), "compaction.maskKeepTurns")
    max_failures = _int_setting(
        section.get("maxConsecutiveFailures"), "compaction.maxConsecutiveFailures"
    )
    return CompactionSettings(
        enabled=enabled is not False,
        reserve_tokens=values["reserveTokens"],
        keep_recent_tokens=values["keepRecentTokens"],
        summarizer=summarizer,
        mask_observations=section.get("maskObservations") is True,
        mask_keep_turns=3 if keep_turns is None else keep_turns,
        guard=section.get("guard") is not False,
        max_consecutive_failures=3 if max_failures is None else max_failures,
    )


def resolve_retry_settings(settings: Mapping[str, Any] | None = None) -> RetrySettings:
    """pi's ``retry`` settings (``enabled``, ``maxRetries``, ``baseDelayMs``, ``maxAgentDelayMs``)."""
    section = _section(settings or {}, "retry")
    max_retries = _int_setting(section.get("maxRetries"), "retry.maxRetries")
    base = _int_setting(section.get("baseDelayMs"), "retry.baseDelayMs")
    cap = _int_setting(section.get("maxAgentDelayMs"), "retry.maxAgentDelayMs")
    return RetrySettings(
        enabled=section.get("enabled") is not False,
        max_retries=3 if max_retries is None else max_retries,
        base_delay_ms=2000 if base is None else base,
        max_delay_ms=60000 if cap is None else cap,
    )


def resolve_branch_summary_settings(
    settings: Mapping[str, Any] | None = None,
) -> BranchSummarySettings:
    section = _section(settings or {}, "branchSummary")
    reserve = _int_setting(section.get("reserveTokens"), "branchSummary.reserveTokens")
    return BranchSummarySettings(DEFAULT_RESERVE_TOKENS if reserve is None else reserve)
