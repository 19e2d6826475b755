"""The request pipeline: how one model request is built from the session, in stages.

1. **path → projection**: one snapshot of what the model sees at the current leaf
   (:meth:`~pi_context.session.Session.projection`), taken once per request;
2. **transforms**: the transform-context chain over the projected messages (extension
   ``context`` handlers, hidden tool declarations, a forced prompt; :mod:`._transform`);
3. **provider-role messages**: ``convert_to_llm`` of each message (custom messages and
   summaries become user text);
4. **request**: those messages, the active tool declarations and the request options (the
   thinking level comes from the same projection, the budgets from settings
   ``thinkingBudgets``).

Stages 2 and 3 redo only what is new since the previous request
(:class:`~._transform.PrefixFlatMap`; the system-prompt patch before them reuses its work by
entry key). The projection is the session's own
(:meth:`~pi_context.session.Session.stored_projection`): nothing here changes it.

**Which thinking level** a session uses, at startup, on resume and when the model changes, is
pi's rules as pure functions of the settings and the model; the levels themselves, support and
clamping are :mod:`pi_context.model.thinking`'s.

* **new session**: the requested level (``--thinking``) > settings
  ``modelThinkingLevels["<provider>/<id>"]`` > settings ``defaultThinkingLevel`` > ``medium``;
* **resumed session**: the requested level > the branch's last ``thinking_level_change`` >
  ``defaultThinkingLevel`` > ``medium``;
* **model switch**: the scope entry's explicit level > ``modelThinkingLevels`` for the target >
  ``defaultThinkingLevel`` > the current level > ``medium``.

Every result is clamped to the model; without a model the level is ``off``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from pi_context.messages import AgentMessage, Message, ThinkingLevel
from pi_context.model import Model, ModelInfo, ModelRequest, RequestOptions
from pi_context.model.thinking import DEFAULT_THINKING_LEVEL, clamp_thinking_level
from pi_context.session import convert_to_llm
from pi_context.session.entries import Entry
from pi_context.session.projection import Projection

from ._state import AgentState
from ._transform import PrefixFlatMap, TransformChain
from .loadout import Loadout

__all__ = [
    "RequestPipeline",
    "recorded_thinking_level",
    "startup_thinking_level",
    "switch_thinking_level",
    "thinking_budgets",
]


# -- the request pipeline --------------------------------------------------------------------------


def _to_llm(_index: int, message: AgentMessage) -> list[Message]:
    return convert_to_llm((message,))


class RequestPipeline:
    """Builds each request of one agent session."""

    def __init__(self, state: AgentState, loadout: Loadout, chain: TransformChain) -> None:
        self._state = state
        self._loadout = loadout
        self._chain = chain
        self._llm_view: PrefixFlatMap[AgentMessage, Message] = PrefixFlatMap(_to_llm)

    @property
    def model(self) -> Model:
        """The session's current model, which the next request goes to."""
        return self._state.require_model()

    async def build(self) -> ModelRequest:
        """The next request, from a fresh projection of the session."""
        projection = self._state.session.stored_projection()
        messages = await self._chain(projection.messages)
        return ModelRequest(
            messages=self._llm_view(messages),
            tools=tuple(self._loadout.declared_tools()),
            options=self._options(projection),
        )

    def _options(self, projection: Projection) -> RequestOptions:
        model = self._state.require_model()
        level = projection.thinking_level
        runner = self._state.extensions
        return RequestOptions(
            session_id=self._state.session.id,
            thinking_level=cast(ThinkingLevel, level) if model.info.reasoning else "off",
            thinking_budgets=thinking_budgets(self._state.settings_data),
            payload_hook=(
                runner.emit_before_provider_request
                if runner is not None and runner.has_handlers("before_provider_request")
                else None
            ),
            headers_hook=(
                runner.emit_before_provider_headers
                if runner is not None and runner.has_handlers("before_provider_headers")
                else None
            ),
        )


# -- which thinking level --------------------------------------------------------------------------


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _per_model(settings: Mapping[str, Any], info: ModelInfo) -> str | None:
    table = settings.get("modelThinkingLevels")
    if not isinstance(table, Mapping):
        return None
    return _text(table.get(f"{info.provider}/{info.id}"))


def recorded_thinking_level(branch: Sequence[Entry]) -> str | None:
    """The level of the last ``thinking_level_change`` on ``branch``, else ``None``."""
    for entry in reversed(branch):
        if entry.type == "thinking_level_change":
            level = _text(entry.get("thinkingLevel"))
            if level is not None:
                return level
    return None


def startup_thinking_level(
    settings: Mapping[str, Any],
    info: ModelInfo | None,
    *,
    requested: str | None = None,
    recorded: str | None = None,
    resumed: bool = False,
) -> ThinkingLevel:
    """The level a new (``resumed=False``) or resumed session starts with."""
    if info is None:
        return "off"
    default = _text(settings.get("defaultThinkingLevel"))
    if resumed:
        wanted = requested or recorded or default
    else:
        wanted = requested or _per_model(settings, info) or default
    return clamp_thinking_level(info, wanted or DEFAULT_THINKING_LEVEL)


def switch_thinking_level(
    settings: Mapping[str, Any],
    info: ModelInfo,
    *,
    current: str,
    scoped: str | None = None,
) -> ThinkingLevel:
    """The level after switching to the model ``info`` (``scoped``: the explicit level of the
    ``--models`` entry cycled to)."""
    default = _text(settings.get("defaultThinkingLevel"))
    wanted = scoped or _per_model(settings, info) or default or _text(current)
    return clamp_thinking_level(info, wanted or DEFAULT_THINKING_LEVEL)


def thinking_budgets(settings: Mapping[str, Any]) -> dict[str, int] | None:
    """Settings ``thinkingBudgets`` (level → token budget), the positive integers only."""
    table = settings.get("thinkingBudgets")
    if not isinstance(table, Mapping):
        return None
    budgets = {
        str(level): int(tokens)
        for level, tokens in table.items()
        if isinstance(tokens, int) and not isinstance(tokens, bool) and tokens > 0
    }
    return budgets or None
