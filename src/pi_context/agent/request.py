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

Stages 2 and 3 redo only what is new since the previous request (:mod:`.prefix_reuse`; the
system-prompt patch before them reuses its work by entry key). The projection is the session's
own (:meth:`~pi_context.session.Session.stored_projection`): nothing here changes it.
"""

from __future__ import annotations

from typing import cast

from pi_context.messages import AgentMessage, Message, ThinkingLevel
from pi_context.model import Model, ModelRequest, RequestOptions
from pi_context.session import convert_to_llm
from pi_context.session.projection import Projection

from ._request import thinking_budgets
from ._state import AgentState
from ._transform import TransformChain
from .loadout import Loadout
from .prefix_reuse import PrefixFlatMap

__all__ = ["RequestPipeline"]


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
        return RequestOptions(
            session_id=self._state.session.id,
            thinking_level=cast(ThinkingLevel, level) if model.info.reasoning else "off",
            thinking_budgets=thinking_budgets(self._state.settings_data),
        )
