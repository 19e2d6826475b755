"""What every collaborator of one :class:`~pi_context.agent.session.AgentSession` reads.

:class:`AgentState` is the small shared record the facade builds once and hands to each
collaborator (loadout, compaction control, navigation, recovery, the run): the session, the
model, the loaded resources and settings, the extension runner, where events go, and the
per-entry caches that the compaction decisions and the stats share. Collaborators read and
write its public attributes; none of them reaches into another collaborator.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from pi_context.compaction.accounting import TokenCache
from pi_context.errors import PiContextError, ProviderError
from pi_context.model import Model
from pi_context.resources.loader import LoadedResources, ResourceLoader
from pi_context.resources.settings import (
    CompactionSettings,
    RetrySettings,
    compaction_settings_for,
    deep_merge_settings,
    retry_settings_for,
)
from pi_context.session import Session

from .branch_positions import BranchPositions
from .event_bus import EventBus
from .prompt_queue import PromptQueue
from .queues import is_queue_mode
from .tool_selection import ToolSelection

if TYPE_CHECKING:
    from pi_context.extensions.runner import ExtensionRunner
    from pi_context.mcp.manager import McpManager

__all__ = ["AgentState", "Sleep"]

Sleep = Callable[[float], Awaitable[Any]]
"""An injectable ``asyncio.sleep`` (retry waits)."""


class AgentState:
    """The session, model, resources, settings, extensions, event bus and shared caches."""

    def __init__(
        self,
        session: Session,
        *,
        cwd: str,
        model: Model | None,
        loader: ResourceLoader,
        resources: LoadedResources,
        extensions: ExtensionRunner | None,
        settings_override: Mapping[str, Any] | None = None,
        sleep: Sleep | None = None,
        tool_selection: ToolSelection | None = None,
        mcp: McpManager | None = None,
    ) -> None:
        self.session = session
        self.mcp = mcp
        """The session's MCP servers (``None``: MCP is off, as for library sessions by default)."""
        self.tool_selection = tool_selection
        """``--tools`` and friends (:mod:`.tool_selection`); ``None``: pi without flags."""
        self.cwd = cwd
        self.model: Model | None = model
        self.loader = loader
        self.resources = resources
        self.extensions = extensions
        self.settings_override: dict[str, Any] = dict(settings_override or {})
        self.sleep: Sleep = sleep or asyncio.sleep
        self.events = EventBus()
        self.queue = PromptQueue(self.events.emit)
        """Steering and follow-up messages (modes from ``steeringMode``/``followUpMode``)."""
        settings = self.settings_data
        for key, attr in (("steeringMode", "steering_mode"), ("followUpMode", "follow_up_mode")):
            if is_queue_mode(settings.get(key)):
                setattr(self.queue, attr, settings[key])
        self.token_cache = TokenCache()
        """Per-entry token estimates shared by the checks, the stats and the compactor."""
        self.positions = BranchPositions()
        """Branch positions shared by the checks and the stats (see :mod:`.branch_positions`)."""

    def now_ms(self) -> int:
        """The session's clock (Unix ms): every message the agent makes is stamped with it."""
        return self.session.now_ms()

    def require_model(self) -> Model:
        """The model, or a clear error when none is configured."""
        if self.model is None:
            raise PiContextError("No model configured: pass model= or configure an API key")
        return self.model

    def require_usable_model(self) -> Model:
        """The model, or the error its adapter already knows it would fail with (no API key
        for its provider): raised before a prompt is stored, so that, as in pi, a prompt that
        cannot be sent leaves nothing behind (no session file is created for it)."""
        model = self.require_model()
        problem = getattr(model, "credential_error", None)
        if isinstance(problem, str):
            where = getattr(model, "where", None)
            detail = f" ({where})" if isinstance(where, str) and where else ""
            raise ProviderError(problem + detail, kind="authentication")
        return model

    @property
    def settings_data(self) -> dict[str, Any]:
        """The loaded settings files with the caller's override merged over them."""
        return deep_merge_settings(self.resources.settings.data, self.settings_override)

    def compaction_settings(self) -> CompactionSettings:
        """Compaction settings for the current model, fitted to its context window."""
        info = self.model.info if self.model is not None else None
        settings = compaction_settings_for(
            self.settings_data,
            info.provider if info is not None else None,
            info.id if info is not None else None,
        )
        return settings.fit_to_window(info.context_window) if info is not None else settings

    def retry_settings(self) -> RetrySettings:
        return retry_settings_for(self.settings_data)
