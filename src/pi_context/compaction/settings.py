"""Compaction, branch-summary and retry settings, and their resolution per model.

pi's own keys are resolved by :mod:`pi_context.resources.settings`
(:func:`~pi_context.resources.settings.compaction_settings_for` applies the per-model
``modelOverrides`` lookup keyed ``"<provider>/<modelId>"``, and
:func:`~pi_context.resources.settings.retry_settings_for` the ``retry`` keys); this module
adds what only compaction needs on top: the switches that go beyond pi, under the same
``compaction`` object with names pi does not use (``summarizer``, ``maskObservations``,
``maskKeepTurns``, ``guard``, ``maxConsecutiveFailures``), ``branchSummary.reserveTokens``, and
the retry backoff arithmetic.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

from pi_context.errors import SettingsError
from pi_context.resources.settings import (
    DEFAULT_KEEP_RECENT_TOKENS,
    DEFAULT_RESERVE_TOKENS,
    CompactionConfig,
    compaction_settings_for,
    retry_settings_for,
)

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

_MAX_SAFE_INTEGER = 2**53 - 1

SummarizerMode = Literal["auto", "model", "offline"]
"""``auto``: the model when there is one, the offline summarizer otherwise and after a model
failure; ``model``: pi's behaviour (a failure is a failure); ``offline``: never call a model."""


@dataclass(frozen=True, slots=True)
class CompactionSettings(CompactionConfig):
    """Effective compaction settings for one model.

    pi's fields (``enabled``, ``reserve_tokens``, ``keep_recent_tokens``, and ``to_json``) come
    from :class:`~pi_context.resources.settings.CompactionConfig`. The rest switch this
    project's additions; their defaults keep pi's behaviour except that a session without a
    model can still be compacted offline.
    """

    summarizer: SummarizerMode = "auto"
    mask_observations: bool = False
    """Replace tool results older than ``mask_keep_turns`` turns by a placeholder first."""
    mask_keep_turns: int = 3
    guard: bool = True
    """Reject a summary that would not shrink the context or that lost the file lists."""
    max_consecutive_failures: int = 3
    """Automatic compaction pauses after this many failures in a row (0: never pause)."""

    def with_keep_recent(self, keep_recent_tokens: int) -> CompactionSettings:
        """A copy keeping ``keep_recent_tokens`` (``--keep-recent-tokens``, tests)."""
        return replace(self, keep_recent_tokens=keep_recent_tokens)

    def fit_to_window(self, context_window: int) -> CompactionSettings:
        """These settings for a model whose window is ``context_window`` tokens.

        pi applies ``reserveTokens`` and ``keepRecentTokens`` whatever the window: on a small
        model (the embedded local one has 8,192 tokens) the default 16,384 reserve makes every
        check compact, and a 20,000-token tail keeps everything, so nothing can be summarized.
        Here each is capped at a quarter of the window; on windows of 80k tokens and more the
        defaults are untouched.
        """
        if context_window <= 0:
            return self
        quarter = context_window // 4
        if self.reserve_tokens <= quarter and self.keep_recent_tokens <= quarter:
            return self
        return replace(
            self,
            reserve_tokens=min(self.reserve_tokens, quarter),
            keep_recent_tokens=min(self.keep_recent_tokens, quarter),
        )


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
    """pi's ``branchSummary`` settings (the token reserve of a branch-summary request)."""

    reserve_tokens: int = DEFAULT_RESERVE_TOKENS


def _int_setting(value: Any, name: str) -> int | None:
    """A non-negative safe integer (a float with an integral value counts), ``None`` if unset."""
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= _MAX_SAFE_INTEGER:
        raise SettingsError(
            f"Invalid {name} setting: {value!r}. Expected a non-negative safe integer."
        )
    return value


def _section(settings: Mapping[str, Any] | None, name: str) -> Mapping[str, Any]:
    """The ``name`` object of the merged settings; anything but an object (or null) is an error.

    pi quietly ignores a section of the wrong type; a typo there would silently switch
    compaction back to its defaults, so it is an error here.
    """
    value = (settings or {}).get(name)
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise SettingsError(f"Invalid {name} setting: {value!r}. Expected an object.")
    return value


def resolve_compaction_settings(
    settings: Mapping[str, Any] | None = None, model_key: str | None = None
) -> CompactionSettings:
    """The effective compaction settings for the model ``"<provider>/<modelId>"``.

    ``settings`` is the merged settings mapping (global then project). pi's three fields come
    from :func:`~pi_context.resources.settings.compaction_settings_for` (``override ??
    ordinary ?? default`` per field); the switches beyond pi are read here. Invalid values
    raise :class:`SettingsError` naming the key.
    """
    section = _section(settings, "compaction")
    provider = model_id = None
    if model_key is not None:
        # the lookup key is "<provider>/<modelId>" again, however the id itself uses "/"
        provider, _, model_id = model_key.partition("/")
    pi = compaction_settings_for(settings, provider, model_id)
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
        enabled=pi.enabled,
        reserve_tokens=pi.reserve_tokens,
        keep_recent_tokens=pi.keep_recent_tokens,
        summarizer=summarizer,
        mask_observations=section.get("maskObservations") is True,
        mask_keep_turns=3 if keep_turns is None else keep_turns,
        guard=section.get("guard") is not False,
        max_consecutive_failures=3 if max_failures is None else max_failures,
    )


def resolve_retry_settings(settings: Mapping[str, Any] | None = None) -> RetrySettings:
    """pi's ``retry`` settings (``enabled``, ``maxRetries``, ``baseDelayMs``, ``maxAgentDelayMs``)."""
    _section(settings, "retry")
    pi = retry_settings_for(settings)
    return RetrySettings(pi.enabled, pi.max_retries, pi.base_delay_ms, pi.max_agent_delay_ms)


def resolve_branch_summary_settings(
    settings: Mapping[str, Any] | None = None,
) -> BranchSummarySettings:
    """``branchSummary.reserveTokens`` (default 16384)."""
    section = _section(settings, "branchSummary")
    reserve = _int_setting(section.get("reserveTokens"), "branchSummary.reserveTokens")
    return BranchSummarySettings(DEFAULT_RESERVE_TOKENS if reserve is None else reserve)
