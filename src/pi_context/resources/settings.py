"""Settings files: ``<agentDir>/settings.json`` merged with ``<cwd>/.pi/settings.json``.

The project file is read only for trusted projects. Objects merge recursively, anything else
(arrays, ``null``) in the project file replaces the global value; ``defaultTools`` made only of
``+name``/``-name`` entries extends the global list. Unlike pi, which falls back to ``{}`` and
carries on, a settings file that is not valid JSON (or not an object) raises
:class:`~pi_context.errors.SettingsError` naming the file: a silent default would quietly change
compaction or trust behaviour.

This module is the one owner of the settings model: :class:`CompactionSettings`,
:class:`RetrySettings` and :class:`BranchSummarySettings` are resolved here and nowhere else
(:func:`compaction_settings_for`, :func:`retry_settings_for`, :func:`branch_summary_settings_for`,
:func:`bash_settings_for`, :func:`session_fsync_for`, :func:`provider_request_settings_for`,
:func:`http_idle_timeout_ms_for`): those functions are the one way to read a
section, from a :class:`Settings` or from its plain merged data alike.
The JSON keys are pi's wire names (``reserveTokens``, ``retry.maxAgentDelayMs``, ...); each
Python field has one snake_case spelling. A bad value is an error, as in pi: a
:class:`~pi_context.errors.SettingsError` naming the key, with pi's message, and the file it
came from when the caller passes a :class:`Settings`. A section (``compaction``, ``retry``,
``branchSummary``, ``bash``) that is not an object is an error too; pi ignores it, but a typo there would
silently switch compaction or retries back to their defaults.
"""

from __future__ import annotations

import copy
import math
import os
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, NoReturn

from pi_context._json import js_stringify, loads
from pi_context._keywords import keyword_checked
from pi_context.errors import SettingsError
from pi_context.resources.paths import agent_dir as default_agent_dir
from pi_context.resources.paths import project_config_dir

__all__ = [
    "DEFAULT_BASH_TIMEOUT_SECONDS",
    "DEFAULT_KEEP_RECENT_TOKENS",
    "DEFAULT_RESERVE_TOKENS",
    "BashSettings",
    "BranchSummarySettings",
    "CompactionSettings",
    "ProviderRequestSettings",
    "RetrySettings",
    "Settings",
    "SummarizerMode",
    "apply_http_proxy",
    "bash_settings_for",
    "branch_summary_settings_for",
    "compaction_settings_for",
    "deep_merge_settings",
    "http_idle_timeout_ms_for",
    "load_settings",
    "load_settings_file",
    "migrate_settings",
    "provider_request_settings_for",
    "read_config_text",
    "retry_settings_for",
    "session_fsync_for",
]

DEFAULT_RESERVE_TOKENS = 16384
DEFAULT_KEEP_RECENT_TOKENS = 20000
_MAX_SAFE_INTEGER = 2**53 - 1
DEFAULT_BASH_TIMEOUT_SECONDS = 120.0
"""The ``bash`` tool's timeout for a call that sets none (pi 1.6.0 has none)."""
DEFAULT_HTTP_IDLE_TIMEOUT_MS = 300_000
"""``httpIdleTimeoutMs`` when unset (pi's default)."""
_MAX_TIMER_SECONDS = 2147483.647
"""The longest timer JavaScript (and so pi's ``timeout`` argument) allows."""

ProjectTrustDefault = Literal["ask", "always", "never"]


def _js_str(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        return "[object Object]"
    if isinstance(value, list):
        return ",".join("" if v is None else _js_str(v) for v in value)
    return js_stringify(value)


def migrate_settings(data: dict[str, Any]) -> dict[str, Any]:
    """pi's on-load migrations of old keys (applied to a copy)."""
    data = copy.deepcopy(data)
    if "queueMode" in data:
        mode = data.pop("queueMode")
        data.setdefault("steeringMode", mode)
    if isinstance(data.get("websockets"), bool) and "transport" not in data:
        data["transport"] = "websocket" if data.pop("websockets") else "sse"
    skills = data.get("skills")
    if isinstance(skills, Mapping):
        if "enableSkillCommands" in skills and "enableSkillCommands" not in data:
            data["enableSkillCommands"] = skills["enableSkillCommands"]
        custom = skills.get("customDirectories")
        if isinstance(custom, list) and custom:
            data["skills"] = list(custom)
        else:
            data.pop("skills")
    retry = data.get("retry")
    if isinstance(retry, dict) and "maxDelayMs" in retry:
        value = retry.pop("maxDelayMs")
        provider = retry.setdefault("provider", {})
        if isinstance(provider, dict):
            provider.setdefault("maxRetryDelayMs", value)
    return data


def read_config_text(path: str | Path) -> str | None:
    """A JSON config file's text without BOM; ``None`` when the file is missing or blank.

    Other read failures raise ``OSError``.
    """
    try:
        raw = Path(path).read_bytes()
    except FileNotFoundError:
        return None
    text = raw.decode("utf-8", errors="replace").lstrip("\ufeff")
    return text if text.strip() else None


def load_settings_file(path: str | Path) -> dict[str, Any]:
    """One settings file: missing or empty is ``{}``; anything but a JSON object is an error."""
    try:
        text = read_config_text(path)
    except OSError as exc:
        raise SettingsError(f"cannot read settings: {exc.strerror or exc}", path=path) from exc
    if text is None:
        return {}
    try:
        data = loads(text)
    except ValueError as exc:
        raise SettingsError(f"not valid JSON: {exc}", path=path) from exc
    if not isinstance(data, dict):
        raise SettingsError("settings must be a JSON object", path=path)
    return migrate_settings(data)


def deep_merge_settings(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """pi's ``deepMergeSettings``: objects merge recursively, the override wins otherwise."""
    out = dict(base)
    for key, value in override.items():
        current = out.get(key)
        if isinstance(value, Mapping) and isinstance(current, Mapping):
            out[key] = deep_merge_settings(current, value)
        elif (
            key == "defaultTools"
            and isinstance(value, list)
            and isinstance(current, list)
            and value
            and all(isinstance(v, str) and v.startswith(("+", "-")) for v in value)
        ):
            out[key] = [*current, *value]
        else:
            out[key] = value
    return out


RESERVE_WINDOW_DIVISOR = 3
"""The default reserve is at most ``window // 3`` (:meth:`CompactionSettings.fit_to_window`)."""
KEEP_WINDOW_DIVISOR = 10
"""The default kept tail is at most ``window // 10``: pi's 20,000 of a 200,000-token window."""


def mid_window_reserve(context_window: int) -> int:
    """The least default reserve on a window of two to four times pi's reserve (0 elsewhere).

    Half the window at three times pi's reserve (49,152 tokens), falling in straight lines to
    pi's reserve at four times it (65,536: pi's compaction point from there on) and to a third
    of the window at twice it (32,768: the third-of-the-window rule from there down), so that no
    window compacts later than a larger one (:meth:`CompactionSettings.fit_to_window`).
    """
    low, high = 2 * DEFAULT_RESERVE_TOKENS, 4 * DEFAULT_RESERVE_TOKENS
    if not low < context_window < high:
        return 0
    rising = (5 * context_window - 3 * low) // 6  # a third of it, plus half of what is over low
    falling = 3 * DEFAULT_RESERVE_TOKENS - context_window // 2
    return min(context_window // 2, rising, falling)


SummarizerMode = Literal["auto", "model", "offline"]
"""``auto``: the model when there is one, the offline summarizer otherwise and after a model
failure; ``model``: pi's behaviour (a failure is a failure); ``offline``: never call a model."""


@keyword_checked
@dataclass(frozen=True, slots=True)
class CompactionSettings:
    """Effective compaction settings for one model.

    pi's fields: ``enabled`` (``compaction.enabled``), ``reserve_tokens`` and
    ``keep_recent_tokens`` (``reserveTokens``, ``keepRecentTokens``, per model through
    ``modelOverrides``). The rest switch this project's additions, under the same
    ``compaction`` object with names pi does not use (``summarizer``, ``maskObservations``,
    ``maskKeepTurns``, ``maskBatchTokens``, ``shareCache``, ``maxContextTokens``,
    ``idleCompactPercent``, ``idleSeconds``, ``guard``, ``maxConsecutiveFailures``); their
    defaults keep pi's behaviour except that a session without a model can still be compacted
    offline and that a prompt after a pause longer than the prompt cache's lifetime may compact
    early (``idleCompactPercent``).
    """

    enabled: bool = True
    reserve_tokens: int = DEFAULT_RESERVE_TOKENS
    keep_recent_tokens: int = DEFAULT_KEEP_RECENT_TOKENS
    summarizer: SummarizerMode = "auto"
    mask_observations: bool = False
    """Replace tool results older than ``mask_keep_turns`` turns by a placeholder first."""
    mask_keep_turns: int = 3
    mask_batch_tokens: int = 0
    """With :attr:`mask_observations`, mask between turns as soon as old tool results worth at
    least this many tokens can be masked, instead of only when the context reaches the
    threshold (0). Masking rewrites the cached prompt from the first masked result on, so it is
    done in batches worth that rewrite."""
    share_cache: bool = False
    """Send a summary request as a continuation of the conversation's cached request."""
    max_context_tokens: int = 0
    """Compact once the context passes this many tokens, however large the window (0: off;
    ignored unless at least twice the kept tail: a compaction must leave room to grow)."""
    idle_compact_percent: int = 30
    """Before a prompt that follows a pause longer than :attr:`idle_seconds`, compact when the
    context is past this percentage of the compaction threshold (``window - reserve``); 0: off
    (pi's behaviour). After such a pause the provider's prompt cache has expired and the next
    request pays for its whole prompt anyway, so a compaction then costs little more than the
    request would, and every request until the next compaction re-reads a smaller prompt (30:
    the economy benchmark's choice; its cost against pi's: benchmarks/README.md, "The economy
    at a 200k window")."""
    idle_seconds: int = 300
    """How long a pause lets the provider's prompt cache expire: Anthropic's and OpenAI's
    default cache lifetime is five minutes."""
    guard: bool = True
    """Reject a summary that would not shrink the context or that lost the file lists."""
    max_consecutive_failures: int = 3
    """Automatic compaction pauses after this many failures in a row (0: never pause)."""
    keep_tool_pairs: bool = False
    """Move a cut back until every kept tool result keeps its call. pi's cut assumes results
    follow their call's assistant message (its agent records them so); the framework adapters
    (``pi_context.integrations``) turn this on for histories that do not. Not a setting."""
    explicit: frozenset[str] = frozenset()
    """The wire names of the sizes the user set (``reserveTokens``, ``keepRecentTokens``);
    :meth:`fit_to_window` honours them when they fit the window."""

    def to_json(self) -> dict[str, Any]:
        """pi's three fields under their wire names."""
        return {
            "enabled": self.enabled,
            "reserveTokens": self.reserve_tokens,
            "keepRecentTokens": self.keep_recent_tokens,
        }

    def with_keep_recent(self, keep_recent_tokens: int) -> CompactionSettings:
        """A copy keeping ``keep_recent_tokens`` (``--keep-recent-tokens``, tests)."""
        return replace(
            self,
            keep_recent_tokens=keep_recent_tokens,
            explicit=self.explicit | {"keepRecentTokens"},
        )

    def fit_to_window(self, context_window: int) -> CompactionSettings:
        """These settings for a model whose window is ``context_window`` tokens.

        pi applies ``reserveTokens`` (16,384) and ``keepRecentTokens`` (20,000) whatever the
        window; both were chosen for windows of about 200k tokens. Here each *default* keeps
        its proportion to the window instead of its absolute size:

        * the reserve is at most a third of the window. It is room for the answer: the
          model's output, the 4,096-token safety margin of the output cap and what one more
          turn adds before the next check. On every window of 49,152 tokens or more it is
          pi's 16,384; a smaller share (a quarter of a 48k window is 12,000, less than an
          8,192-token answer plus the margin) made the window cut the output cap, and with it
          Anthropic's thinking budget, just before each compaction: a changed budget voids
          the cached conversation (benchmarks/README.md, economy finding 15).
        * the kept tail is at most a tenth of the window: pi's 20,000 of a 200,000-token
          window, so on windows of 200k and more it is pi's. A fixed 20,000 is most of a
          small window; it kept a quarter of a 48k one, and the context every request re-reads
          stayed large for no gain a summary would not give (finding 16).
        * on a window of two to four times pi's reserve (32,768 to 65,536 tokens) the reserve
          is at least :func:`mid_window_reserve`: the compaction point is about half the
          window (24,384 tokens on a 48k one) instead of two thirds. There the fixed reserve
          and the kept tail leave a narrow band between the context after a compaction (the
          summary, the tail, often one whole file just read: about 10k tokens on a 48k
          window) and the compaction point, and every request of the band re-reads all of
          it. Compacting at about half the window made the average request 11-24% smaller
          for 21-42% more (smaller) summary requests, which the cached re-reads more than pay
          for (benchmarks/README.md, "Retention", branch ``retcost``: 48k, four seeds, both
          simulators); what compaction replaces stays in the session for ``recall``. Below the band the system prompt and the summary are a large share of
          the window and compacting earlier leaves little room to work in; above it the
          reserve is pi's and so is the compaction point. The band's edges join the rules on
          either side, so no window compacts later than a larger one.

        Sizes the user set (:attr:`explicit`) are kept as set when reserve and tail together
        leave room in the window (a user may want compaction well before the window fills);
        when they do not, they are capped like the defaults. A reserve the user set is never
        raised to the band's, nor is the reserve raised where a tail the user set would leave
        less than itself to grow in. :attr:`max_context_tokens` moves
        the compaction point down to that size when it is at least twice the kept tail (below
        that, the tail and the summary alone would be over it, and every turn would compact).
        """
        if context_window <= 0:
            return self
        reserve_cap = context_window // RESERVE_WINDOW_DIVISOR
        keep_cap = context_window // KEEP_WINDOW_DIVISOR
        reserve = self.reserve_tokens
        keep = self.keep_recent_tokens
        if "reserveTokens" not in self.explicit:
            reserve = min(reserve, reserve_cap)
        if "keepRecentTokens" not in self.explicit:
            keep = min(keep, keep_cap)
        if reserve + keep >= context_window:
            reserve, keep = min(reserve, reserve_cap), min(keep, keep_cap)
        floor = mid_window_reserve(context_window)
        if "reserveTokens" not in self.explicit and 2 * keep <= context_window - floor:
            reserve = max(reserve, floor)
        if 2 * keep <= self.max_context_tokens < context_window - reserve:
            reserve = context_window - self.max_context_tokens
        if (reserve, keep) == (self.reserve_tokens, self.keep_recent_tokens):
            return self
        return replace(self, reserve_tokens=reserve, keep_recent_tokens=keep)


@keyword_checked
@dataclass(frozen=True, slots=True)
class RetrySettings:
    """pi's ``retry`` settings: ``enabled``, ``maxRetries``, ``baseDelayMs`` and
    ``maxAgentDelayMs`` (``max_delay_ms``, the cap on one computed delay).

    The backoff arithmetic and the choice of what to retry are
    :class:`pi_context.model.retry.RetryPolicy`'s.
    """

    enabled: bool = True
    max_retries: int = 3
    base_delay_ms: int = 2000
    max_delay_ms: int = 60000


@keyword_checked
@dataclass(frozen=True, slots=True)
class ProviderRequestSettings:
    """How each provider request is sent: pi's ``retry.provider`` settings.

    ``timeout_seconds`` (``retry.provider.timeoutMs``, else ``httpIdleTimeoutMs``, default
    300 s; ``None`` for ``0`` or ``"disabled"``): how long the client waits for the server
    (connecting, or between two received bytes). ``max_retries``
    (``retry.provider.maxRetries``, default 0): the client's own retries of a request answered
    408, 409, 429 or 5xx, or whose connection failed. ``max_retry_delay_seconds``
    (``retry.provider.maxRetryDelayMs``, default 60 s; ``None`` for ``0``, no limit): a server
    asking to wait longer than this is not retried; its error is reported at once.
    """

    timeout_seconds: float | None = DEFAULT_HTTP_IDLE_TIMEOUT_MS / 1000
    max_retries: int = 0
    max_retry_delay_seconds: float | None = 60.0


@keyword_checked
@dataclass(frozen=True, slots=True)
class BranchSummarySettings:
    """pi's ``branchSummary`` settings (the token reserve of a branch-summary request)."""

    reserve_tokens: int = DEFAULT_RESERVE_TOKENS


@keyword_checked
@dataclass(frozen=True, slots=True)
class BashSettings:
    """This project's ``bash`` settings (pi has no such section).

    ``default_timeout_seconds`` (``bash.defaultTimeoutSeconds``): seconds a command that sets
    no ``timeout`` may run; ``None`` (the setting ``0``) waits forever, as pi does.
    """

    default_timeout_seconds: float | None = DEFAULT_BASH_TIMEOUT_SECONDS


@keyword_checked
@dataclass(frozen=True, slots=True)
class Settings:
    """Global and project settings and their merged view (``data``)."""

    data: dict[str, Any] = field(default_factory=dict)
    global_data: dict[str, Any] = field(default_factory=dict)
    project_data: dict[str, Any] = field(default_factory=dict)
    global_path: str | None = None
    project_path: str | None = None

    def get(self, key: str, default: Any = None) -> Any:
        """A top-level merged value, ``default`` when absent or ``null``."""
        value = self.data.get(key)
        return default if value is None else value

    @property
    def default_project_trust(self) -> ProjectTrustDefault:
        """``defaultProjectTrust`` from the **global** file only (other values mean ``ask``)."""
        value = self.global_data.get("defaultProjectTrust")
        return value if value in ("always", "never") else "ask"


def load_settings(
    agent_dir: str | os.PathLike[str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    *,
    trusted: bool = True,
) -> Settings:
    """Load and merge the settings files (the project file only when ``trusted``)."""
    agent = Path(agent_dir) if agent_dir is not None else default_agent_dir()
    global_path = agent / "settings.json"
    global_data = load_settings_file(global_path)
    project_data: dict[str, Any] = {}
    project_path = None
    if cwd is not None:
        project_path = project_config_dir(cwd) / "settings.json"
        if trusted:
            project_data = load_settings_file(project_path)
    return Settings(
        data=deep_merge_settings(global_data, project_data),
        global_data=global_data,
        project_data=project_data,
        global_path=str(global_path),
        project_path=str(project_path) if project_path is not None else None,
    )


def _data(settings: Settings | Mapping[str, Any] | None) -> Mapping[str, Any]:
    if settings is None:
        return {}
    return settings.data if isinstance(settings, Settings) else settings


def _file_of(settings: Settings | Mapping[str, Any] | None, section: str) -> str | None:
    """The file a ``section`` value came from: the project file when it sets the section."""
    if not isinstance(settings, Settings):
        return None
    if section in settings.project_data:
        return settings.project_path
    return settings.global_path


def _safe_int(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return isinstance(value, int) and 0 <= value <= _MAX_SAFE_INTEGER


class _Reader:
    """Reads one section of the merged settings, raising errors that name the key and file."""

    def __init__(self, settings: Settings | Mapping[str, Any] | None, name: str) -> None:
        self.name = name
        self.path = _file_of(settings, name)
        value = _data(settings).get(name)
        if value is not None and not isinstance(value, Mapping):
            self.fail(name, value, "Expected an object.")
        self.section: Mapping[str, Any] = value or {}

    def fail(self, key: str, value: Any, expected: str) -> NoReturn:
        raise SettingsError(f"Invalid {key} setting: {_js_str(value)}. {expected}", path=self.path)

    def integer(self, value: Any, key: str) -> int | None:
        """A non-negative safe integer (a float with an integral value counts), ``None`` if unset."""
        if value is None:
            return None
        if not _safe_int(value):
            self.fail(key, value, "Expected a non-negative safe integer.")
        return int(value)

    def field(self, key: str, default: int) -> int:
        value = self.integer(self.section.get(key), f"{self.name}.{key}")
        return default if value is None else value


def _percent(reader: _Reader, key: str, default: int) -> int:
    value = reader.field(key, default)
    if value > 100:
        reader.fail(f"{reader.name}.{key}", value, "Expected a percentage from 0 to 100.")
    return value


def compaction_settings_for(
    settings: Settings | Mapping[str, Any] | None,
    provider: str | None = None,
    model_id: str | None = None,
) -> CompactionSettings:
    """The effective compaction settings for the model ``provider``/``model_id``.

    pi's ``getCompactionSettings(model)``: ``reserveTokens`` and ``keepRecentTokens`` each
    resolve as ``modelOverrides["provider/id"][field] ?? compaction[field] ?? default``;
    ``enabled`` is never per model. Invalid values raise :class:`SettingsError` with pi's
    message, even when an override would win. The keys beyond pi are read from the same object.
    """
    reader = _Reader(settings, "compaction")
    section = reader.section
    key = f"{provider}/{model_id}" if provider is not None and model_id is not None else None
    entry: Mapping[str, Any] | None = None
    overrides = section.get("modelOverrides")
    if key is not None and isinstance(overrides, Mapping):
        raw = overrides.get(key)
        if raw is not None and not isinstance(raw, Mapping):
            reader.fail(f'compaction.modelOverrides["{key}"]', raw, "Expected an object.")
        entry = raw
    values: dict[str, int] = {}
    explicit: set[str] = set()
    for name, default in (
        ("reserveTokens", DEFAULT_RESERVE_TOKENS),
        ("keepRecentTokens", DEFAULT_KEEP_RECENT_TOKENS),
    ):
        ordinary = reader.integer(section.get(name), f"compaction.{name}")
        override = None
        if entry is not None:
            override = reader.integer(entry.get(name), f'compaction.modelOverrides["{key}"].{name}')
        values[name] = (
            override if override is not None else ordinary if ordinary is not None else default
        )
        if override is not None or ordinary is not None:
            explicit.add(name)
    summarizer = section.get("summarizer", "auto")
    if summarizer not in ("auto", "model", "offline"):
        reader.fail("compaction.summarizer", summarizer, 'Expected "auto", "model" or "offline".')
    return CompactionSettings(
        enabled=section.get("enabled") is not False,
        reserve_tokens=values["reserveTokens"],
        keep_recent_tokens=values["keepRecentTokens"],
        summarizer=summarizer,
        mask_observations=section.get("maskObservations") is True,
        mask_keep_turns=reader.field("maskKeepTurns", 3),
        mask_batch_tokens=reader.field("maskBatchTokens", 0),
        share_cache=section.get("shareCache") is True,
        max_context_tokens=reader.field("maxContextTokens", 0),
        idle_compact_percent=_percent(reader, "idleCompactPercent", 30),
        idle_seconds=reader.field("idleSeconds", 300),
        guard=section.get("guard") is not False,
        max_consecutive_failures=reader.field("maxConsecutiveFailures", 3),
        explicit=frozenset(explicit),
    )


def session_fsync_for(settings: Settings | Mapping[str, Any] | None) -> bool:
    """``sessionFsync`` (pi-context's own key, default ``true``): whether the session file is
    flushed to the disk at the end of each turn and at each compaction. Only ``false`` turns
    it off."""
    return _data(settings).get("sessionFsync") is not False


def retry_settings_for(settings: Settings | Mapping[str, Any] | None) -> RetrySettings:
    """pi's ``retry.{enabled, maxRetries, baseDelayMs, maxAgentDelayMs}`` with defaults."""
    reader = _Reader(settings, "retry")
    return RetrySettings(
        enabled=reader.section.get("enabled") is not False,
        max_retries=reader.field("maxRetries", 3),
        base_delay_ms=reader.field("baseDelayMs", 2000),
        max_delay_ms=reader.field("maxAgentDelayMs", 60000),
    )


def branch_summary_settings_for(
    settings: Settings | Mapping[str, Any] | None,
) -> BranchSummarySettings:
    """``branchSummary.reserveTokens`` (default 16384)."""
    reader = _Reader(settings, "branchSummary")
    return BranchSummarySettings(reader.field("reserveTokens", DEFAULT_RESERVE_TOKENS))


def bash_settings_for(settings: Settings | Mapping[str, Any] | None) -> BashSettings:
    """``bash.defaultTimeoutSeconds``: a number of seconds (``0``: no timeout), default 120."""
    reader = _Reader(settings, "bash")
    value = reader.section.get("defaultTimeoutSeconds")
    if value is None:
        return BashSettings()
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or not 0 <= value <= _MAX_TIMER_SECONDS
    ):
        reader.fail(
            "bash.defaultTimeoutSeconds",
            value,
            f"Expected a number of seconds from 0 (no timeout) to {_MAX_TIMER_SECONDS}.",
        )
    return BashSettings(float(value) if value > 0 else None)


def _milliseconds(value: Any, key: str, path: str | None) -> int | None:
    """A timeout setting as pi reads one: a non-negative number (or a string holding one) of
    milliseconds, ``"disabled"`` meaning 0; ``None`` when unset."""
    if value is None:
        return None
    number: Any = value
    if isinstance(value, str):
        text = value.strip()
        if text.lower() == "disabled":
            return 0
        try:
            number = float(text) if text else None
        except ValueError:
            number = None
    if isinstance(number, bool) or not isinstance(number, int | float):
        number = None
    if number is None or not math.isfinite(number) or number < 0:
        raise SettingsError(f"Invalid {key} setting: {_js_str(value)}", path=path)
    return int(number)


def http_idle_timeout_ms_for(settings: Settings | Mapping[str, Any] | None) -> int:
    """``httpIdleTimeoutMs``: milliseconds (``0`` or ``"disabled"``: none), default 300000."""
    value = _milliseconds(
        _data(settings).get("httpIdleTimeoutMs"),
        "httpIdleTimeoutMs",
        _file_of(settings, "httpIdleTimeoutMs"),
    )
    return DEFAULT_HTTP_IDLE_TIMEOUT_MS if value is None else value


def provider_request_settings_for(
    settings: Settings | Mapping[str, Any] | None,
) -> ProviderRequestSettings:
    """``retry.provider.{timeoutMs, maxRetries, maxRetryDelayMs}`` over ``httpIdleTimeoutMs``
    (see :class:`ProviderRequestSettings`)."""
    reader = _Reader(settings, "retry")
    provider = reader.section.get("provider")
    if provider is not None and not isinstance(provider, Mapping):
        reader.fail("retry.provider", provider, "Expected an object.")
    section: Mapping[str, Any] = provider or {}
    timeout = _milliseconds(section.get("timeoutMs"), "retry.provider.timeoutMs", reader.path)
    if timeout is None:
        timeout = http_idle_timeout_ms_for(settings)
    retries = reader.integer(section.get("maxRetries"), "retry.provider.maxRetries")
    delay = _milliseconds(
        section.get("maxRetryDelayMs"), "retry.provider.maxRetryDelayMs", reader.path
    )
    delay = 60_000 if delay is None else delay
    return ProviderRequestSettings(
        timeout_seconds=timeout / 1000 if timeout else None,
        max_retries=retries or 0,
        max_retry_delay_seconds=delay / 1000 if delay else None,
    )


def apply_http_proxy(settings: Settings, env: MutableMapping[str, str] | None = None) -> None:
    """``httpProxy`` of the **global** settings file, as pi applies it: it becomes
    ``HTTP_PROXY`` and ``HTTPS_PROXY``, each only when the environment does not set it already
    (``env``, default ``os.environ``). A lowercase ``http_proxy`` / ``https_proxy`` in the
    environment still wins over both: the HTTP client reads it first."""
    proxy = settings.global_data.get("httpProxy")
    if not isinstance(proxy, str) or not proxy.strip():
        return
    target = os.environ if env is None else env
    for name in ("HTTP_PROXY", "HTTPS_PROXY"):
        target.setdefault(name, proxy.strip())
