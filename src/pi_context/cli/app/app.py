"""The application around one :class:`~pi_context.agent.session.AgentSession`.

:class:`AppConfig` holds what the command line decided once (agent dir, session dir, prompt
options, how to resolve model names); :class:`RunningAgent` wraps the running agent session and
implements :class:`pi_context.cli.app.agent_api.AgentApi` for interactive mode: new, resumed and
forked sessions are created with the same configuration, in pi's session directory.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from msgspec import Struct, field

from pi_context import session_dirs
from pi_context.agent.navigation import NavigationResult
from pi_context.agent.queues import QueueMode
from pi_context.agent.session import AgentSession
from pi_context.agent.stats import SessionStats
from pi_context.agent.tool_selection import ToolSelection
from pi_context.cli.app import session_replacement
from pi_context.cli.app.agent_api import InputSource, ModelChoice, ModelCycle, ProjectTrust
from pi_context.cli.app.model_scope import ScopeEntry, next_model_key
from pi_context.cli.app.saved_settings import save_default_model, update_global_settings
from pi_context.cli.app.scripted import load_scripted_model, scripted_spec
from pi_context.cli.app.session_list import SessionLister
from pi_context.cli.app.session_replacement import ForkMessage
from pi_context.cli.terminal_text import one_line
from pi_context.errors import ModelNotFoundError, PiContextError, ProviderError
from pi_context.events import QueueUpdate
from pi_context.extensions.reasons import SessionReason
from pi_context.messages import ImageContent
from pi_context.model import Model, ModelInfo
from pi_context.model.thinking import cycle_thinking_level, supported_thinking_levels
from pi_context.providers.auth_store import AuthStore
from pi_context.resources.prompt_templates import PromptTemplate
from pi_context.resources.settings import Settings, load_settings
from pi_context.resources.trust import TRUST_FILE_NAME, TrustStore
from pi_context.resources.types import Skill
from pi_context.session.store import Session
from pi_context.session_dirs import SessionInfo
from pi_context.tokens import estimate_tokens

if TYPE_CHECKING:
    from pi_context.events import AgentEvent
    from pi_context.extensions.api import RegisteredCommand
    from pi_context.extensions.context import ExtensionUI
    from pi_context.providers.registry import ModelRegistry
    from pi_context.store import SessionRef, SessionStore
    from pi_context.store.binding import StoreBinding

__all__ = ["AppConfig", "RunningAgent", "resolve_cli_model"]


def resolve_cli_model(
    spec: str | None,
    env: Mapping[str, str] | None = None,
    *,
    agent_dir: Path | None = None,
    resumed: Path | Session | None = None,
    provider: str | None = None,
    api_key: str | None = None,
    why: Callable[[str], None] | None = None,
    settings: Settings | None = None,
) -> Model | None:
    """The model for ``--model SPEC``; without ``SPEC``, pi's startup model.

    ``scripted:<file>`` (or ``$PICTX_SCRIPTED_MODEL`` without ``--model``) plays a replies
    file (a testing aid, see :mod:`pi_context.cli.app.scripted`); anything else goes to the
    provider registry (built-ins plus ``<agent_dir>/models.json``). Without ``SPEC``, as pi:
    the model last used on the ``resumed`` session's branch (a session file, or a stored
    session as loaded), then the ``defaultProvider`` /
    ``defaultModel`` settings, each only when its key is configured; then the first provider
    with a key, else the embedded local model when the ``local`` extra is installed, else
    ``None`` (see :data:`pi_context.cli.app.agent_api.NO_MODEL_HELP`). ``env`` replaces
    ``os.environ``. ``provider`` (``--provider``) limits the lookup of ``SPEC`` to one
    provider; ``api_key`` (``--api-key``) is that model's provider key for this process.
    ``why`` receives, for a model chosen without ``SPEC``, which model it is
    and why (shown once, so that no fallback or switch is silent). ``settings`` are the
    settings in effect (the global file, then a trusted project's, as the command line read
    them); without them, the global file's ``defaultProvider`` / ``defaultModel`` are used.

    Problems of ``models.json`` are warnings on stderr, once per process, wherever the file is
    read; a model not found while the file was ignored says so.
    """
    scripted = scripted_spec(spec, env)
    if scripted is not None:
        return load_scripted_model(scripted)
    registry = _load_registry(agent_dir, env)
    if settings is not None:  # the project's retry.provider / httpIdleTimeoutMs too
        from pi_context.resources.settings import provider_request_settings_for

        registry.request = provider_request_settings_for(settings)
    if spec is not None:
        try:
            named = registry.lookup(spec, provider=provider).entry
        except ModelNotFoundError as exc:
            if not registry.errors:
                raise
            raise ModelNotFoundError(
                f"{exc} (models.json was ignored: {registry.errors[0]})"
            ) from exc
        if api_key is not None:
            registry.key_overrides[named.info.provider] = api_key
        return registry.create(named)
    sources = (
        (_recorded_model(resumed), "the model this session last used"),
        (_settings_model(agent_dir, settings), "defaultProvider/defaultModel in settings.json"),
    )
    for (provider, model_id), reason in sources:
        entry = registry.find(provider, model_id) if provider and model_id else None
        if entry is not None and registry.is_available(entry):
            _tell(why, entry.key, reason)
            return registry.create(entry)
    chosen = registry.default()
    if chosen is None:
        return None
    _tell(why, chosen.key, _default_reason(chosen.info.provider, chosen.info.api))
    return registry.create(chosen)


def _default_reason(provider: str, api: str) -> str:
    from pi_context.providers.catalog import DEFAULT_MODEL_IDS, LOCAL_MODEL

    if api == LOCAL_MODEL.api:
        return "no API key is set and no model named; the embedded offline model"
    if provider in DEFAULT_MODEL_IDS:
        return f"the first built-in provider with a key ({provider}); --model picks another"
    return "the first model of models.json with a key; --model picks another"


def _tell(why: Callable[[str], None] | None, key: str, reason: str) -> None:
    if why is not None:
        why(f"model {key} ({reason})")


_WARNED: set[str] = set()
"""models.json problems already shown by this process."""


def _load_registry(agent_dir: Path | None, env: Mapping[str, str] | None) -> ModelRegistry:
    """The registry, its problems warned once on stderr."""
    from pi_context.providers import registry as model_registry

    registry = model_registry.load_registry(agent_dir, env=env)
    for problem in (*registry.errors, *registry.warnings):
        if problem not in _WARNED:
            _WARNED.add(problem)
            click.echo(f"pictx: warning: {one_line(problem)}", err=True)
    return registry


def _recorded_model(resumed: Path | Session | None) -> tuple[str | None, str | None]:
    """The model of the last ``model_change`` or answer on a session's current branch."""
    if isinstance(resumed, Session):
        model = resumed.stored_projection().model
    elif resumed is None or not resumed.is_file() or resumed.stat().st_size == 0:
        return None, None
    else:
        with Session.open(resumed, lock_timeout=0) as session:
            model = session.stored_projection().model
    return (model["provider"], model["modelId"]) if model is not None else (None, None)


def _settings_model(
    agent_dir: Path | None, settings: Settings | None = None
) -> tuple[str | None, str | None]:
    """``defaultProvider`` / ``defaultModel`` of ``settings``, else of the global settings."""
    if settings is None:
        settings = load_settings(agent_dir)
    provider, model_id = settings.get("defaultProvider"), settings.get("defaultModel")
    if isinstance(provider, str) and isinstance(model_id, str):
        return provider, model_id
    return None, None


def _model_names(agent_dir: Path | None) -> list[str]:
    """Every model ``/model`` can name; those without a key are marked ``(no key)``."""
    registry = _load_registry(agent_dir, None)
    return [
        entry.key if registry.is_available(entry) else f"{entry.key} (no key)"
        for entry in registry.entries
    ]


def _check_session_cwd(header: Mapping[str, Any] | None, cwd: str | None) -> None:
    """A resumed session runs in ``cwd`` when given, else in its header's ``cwd``, which
    must exist."""
    work = cwd or (header.get("cwd") if header else None)
    if isinstance(work, str) and not os.path.isdir(work):
        raise PiContextError(f"The session's working directory does not exist: {work}")


class AppConfig(Struct):
    """Decisions of the command line that every session of this process shares."""

    cwd: str
    agent_dir: Path
    session_dir: Path | None
    """Where new sessions go; ``None`` = in memory (``--no-session``)."""
    no_context_files: bool = False
    skill_paths: Sequence[str] = ()
    """``--skill PATH`` (repeatable): loaded even with ``--no-skills``."""
    no_skills: bool = False
    """``-ns/--no-skills``: no discovered or configured skills."""
    prompt_template_paths: Sequence[str] = ()
    """``--prompt-template PATH`` (repeatable): loaded even with ``--no-prompt-templates``."""
    no_prompt_templates: bool = False
    """``-np/--no-prompt-templates``: no discovered or configured prompt templates."""
    system_prompt: str | None = None
    append_system_prompt: Sequence[str] = ()
    model_resolver: Callable[[str | None, Path | Session | None], Model | None] = field(
        default=lambda spec, resumed: resolve_cli_model(spec, resumed=resumed)
    )
    """The model for ``--model SPEC`` (or ``/model SPEC``); for ``None``, the startup model of
    the resumed session (its file, or a stored session as loaded; ``None`` for a new
    session)."""
    thinking: str | None = None
    """``--thinking LEVEL`` (already validated): wins over the settings and the session's
    recorded level at startup."""
    tool_selection: ToolSelection | None = None
    """``--tools`` / ``--no-tools`` / ``--no-builtin-tools`` / ``--exclude-tools``."""
    mcp: bool = True
    """Connect the servers of ``mcp.json`` (``--no-mcp``: not this run)."""
    scope: Sequence[ScopeEntry] = ()
    """``--models`` / ``enabledModels``: what Ctrl+P cycles through (empty: every available
    model)."""
    lister: SessionLister = field(default_factory=SessionLister)
    """Session summaries for ``/resume``, cached across the sessions of this process."""
    extension_paths: Sequence[str] = ()
    """``-e/--extension PATH`` (repeatable): loaded even with ``--no-extensions``."""
    discover_extensions: bool = True
    """``False`` for ``-ne/--no-extensions``: no discovered or installed extensions."""
    trusted: bool | None = None
    """``-a/--approve`` (``True``) or ``-na/--no-approve`` (``False``): the project's trust
    for this run; ``None`` decides it as usual."""
    stores: list[Any] = field(default_factory=list)
    """The session stores (``pi_context.store.SessionStore``) of ``--session URL#ID``
    sessions, closed at the end of the run (``Any``: the store package is imported only
    when one is used)."""

    def session_options(self) -> dict[str, Any]:
        """The :class:`~pi_context.agent.options.AgentOptions` every session of this process
        shares."""
        return {
            "agent_dir": self.agent_dir,
            "no_context_files": self.no_context_files,
            "skill_paths": list(self.skill_paths) or None,
            "no_skills": self.no_skills,
            "prompt_template_paths": list(self.prompt_template_paths) or None,
            "no_prompt_templates": self.no_prompt_templates,
            "system_prompt": self.system_prompt,
            "append_system_prompt": list(self.append_system_prompt) or None,
            "load_extensions": self.discover_extensions,
            "extension_paths": list(self.extension_paths) or None,
            "trusted": self.trusted,
            "tool_selection": self.tool_selection,
            "mcp": self.mcp,
        }

    async def create(
        self,
        model: Model | None,
        *,
        cwd: str | None = None,
        parent_session: str | None = None,
        session_id: str | None = None,
        start_reason: SessionReason = "startup",
        previous_session_file: str | None = None,
    ) -> AgentSession:
        """A new session in the session dir, named as pi names it (written with the first
        message); ``parent_session`` goes into its header, ``session_id`` (``--session-id``)
        replaces the generated id; ``start_reason`` and ``previous_session_file`` are what
        extensions' ``session_start`` is told."""
        work = cwd or self.cwd
        lifecycle: dict[str, Any] = {
            "start_reason": start_reason,
            "previous_session_file": previous_session_file,
        }
        if self.session_dir is None:
            agent = await AgentSession.create(
                cwd=work,
                model=model,
                parent_session=parent_session,
                session_id=session_id,
                **lifecycle,
                **self.session_options(),
            )
        else:
            self.session_dir.mkdir(parents=True, exist_ok=True)
            path, sid, stamp = session_dirs.new_session_path(
                self.session_dir, session_id=session_id
            )
            agent = await AgentSession.create(
                cwd=work,
                model=model,
                session_file=path,
                session_id=sid,
                timestamp=stamp,
                parent_session=parent_session,
                **lifecycle,
                **self.session_options(),
            )
        agent.apply_startup_thinking_level(self.thinking, resumed=False)
        return agent

    async def open(
        self,
        path: Path | StoreBinding,
        model: Model | None,
        *,
        start_reason: SessionReason | None = None,
        previous_session_file: str | None = None,
        cwd: str | None = None,
    ) -> AgentSession:
        """Resume ``path``, a session file or a stored session (a
        :class:`~pi_context.store.StoreBinding` as :meth:`find_stored` loaded it): it runs in
        its header cwd, or in ``cwd`` when given, and the recorded thinking level is kept unless
        ``--thinking`` says otherwise. A missing file becomes a new session there.
        ``start_reason`` (default: ``startup`` for a new file, ``resume`` otherwise) and
        ``previous_session_file`` are what extensions' ``session_start`` is told."""
        lifecycle: dict[str, Any] = {"previous_session_file": previous_session_file}
        if start_reason is not None:
            lifecycle["start_reason"] = start_reason
        if not isinstance(path, Path):  # a stored session: the same rules as a file's
            _check_session_cwd(path.session.header, cwd)
            agent = await AgentSession.open(
                store=path.store,
                ref=path.ref,
                model=model,
                cwd=cwd,
                **lifecycle,
                **self.session_options(),
            )
            agent.apply_startup_thinking_level(self.thinking, resumed=True)
            return agent
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            agent = await AgentSession.create(
                cwd=self.cwd,
                model=model,
                session_file=path,
                **lifecycle,
                **self.session_options(),
            )
            agent.apply_startup_thinking_level(self.thinking, resumed=False)
            return agent
        _check_session_cwd(session_dirs.read_header(path), cwd)
        agent = await AgentSession.open(
            path, model=model, cwd=cwd, **lifecycle, **self.session_options()
        )
        agent.apply_startup_thinking_level(self.thinking, resumed=True)
        return agent

    async def open_store(self, url: str) -> SessionStore:
        """The store at ``url`` (``--session URL#ID``), open until :meth:`close_stores`."""
        from pi_context.store import open_store

        store = await open_store(url)
        self.stores.append(store)
        return store

    async def find_stored(
        self, store: SessionStore, tenant: str, session_id: str
    ) -> StoreBinding | None:
        """The session ``session_id`` of ``tenant`` in ``store``, loaded (:meth:`open` runs
        it), or ``None`` when the tenant holds no such id."""
        from pi_context.store import SessionNotFoundError, SessionRef
        from pi_context.store.binding import StoreBinding

        try:
            return await StoreBinding.open(store, SessionRef(tenant, session_id))
        except SessionNotFoundError:
            return None

    async def create_stored(
        self,
        store: SessionStore,
        tenant: str,
        model: Model | None,
        *,
        session_id: str | None = None,
        cwd: str | None = None,
        parent_session: str | None = None,
        start_reason: SessionReason = "startup",
        previous_session_file: str | None = None,
    ) -> AgentSession:
        """A new session of ``tenant`` in ``store`` (id ``session_id``, else a fresh one), run
        in ``cwd`` (default: this directory); the rest as :meth:`create`."""
        agent = await AgentSession.create(
            store=store,
            tenant=tenant,
            session_id=session_id,
            cwd=cwd or self.cwd,
            model=model,
            parent_session=parent_session,
            start_reason=start_reason,
            previous_session_file=previous_session_file,
            **self.session_options(),
        )
        agent.apply_startup_thinking_level(self.thinking, resumed=False)
        return agent

    async def close_stores(self) -> None:
        """Close the stores :meth:`open_store` opened."""
        while self.stores:
            await self.stores.pop().aclose()


class RunningAgent:
    """An :class:`AgentSession` plus the application: implements ``AgentApi``."""

    def __init__(self, agent: AgentSession, config: AppConfig) -> None:
        self.agent = agent
        self.config = config
        self._lister = config.lister

    @property
    def session(self) -> Session:
        return self.agent.session

    @property
    def model(self) -> Model:
        return self.agent.model

    @property
    def cwd(self) -> str:
        return self.agent.cwd

    @property
    def agent_dir(self) -> Path:
        return Path(self.config.agent_dir)

    @property
    def busy(self) -> bool:
        return self.agent.busy

    @property
    def compacting(self) -> bool:
        return self.agent.compacting

    @property
    def pending_message_count(self) -> int:
        return self.agent.pending_message_count

    @property
    def steering_mode(self) -> QueueMode:
        return self.agent.steering_mode

    @steering_mode.setter
    def steering_mode(self, mode: QueueMode) -> None:
        self.agent.steering_mode = mode

    @property
    def follow_up_mode(self) -> QueueMode:
        return self.agent.follow_up_mode

    @follow_up_mode.setter
    def follow_up_mode(self, mode: QueueMode) -> None:
        self.agent.follow_up_mode = mode

    def prompt(
        self, text: str, *, images: Sequence[ImageContent] = ()
    ) -> AsyncIterator[AgentEvent]:
        return self.agent.prompt(text, images=images)

    def abort(self) -> None:
        self.agent.abort()

    def steer(self, text: str, *, images: Sequence[ImageContent] = ()) -> QueueUpdate:
        return self.agent.steer(text, images=images)

    def follow_up(self, text: str, *, images: Sequence[ImageContent] = ()) -> QueueUpdate:
        return self.agent.follow_up(text, images=images)

    def abort_retry(self) -> bool:
        return self.agent.abort_retry()

    async def wait_idle(self) -> None:
        await self.agent.wait_idle()

    async def aclose(self) -> None:
        await self.agent.aclose()

    def clear_queue(self) -> tuple[list[str], list[str]]:
        return self.agent.clear_queue()

    def close(self) -> None:
        self.agent.close()

    async def compact(self, instructions: str | None) -> Mapping[str, object]:
        return await self.agent.compact(instructions)

    async def navigate(
        self, entry_id: str, *, summarize: bool, instructions: str | None
    ) -> NavigationResult:
        return await self.agent.navigate(entry_id, summarize=summarize, instructions=instructions)

    async def reload(self) -> None:
        await self.agent.reload()

    def subscribe(self, callback: Callable[[AgentEvent], None]) -> Callable[[], None]:
        return self.agent.subscribe(callback)

    def expand_skill_command(self, text: str) -> str:
        return self.agent.expand_skill_command(text)

    async def handle_input(self, text: str, *, source: InputSource = "interactive") -> str | None:
        return await self.agent.handle_input(text, source=source)

    def set_extension_ui(self, ui: ExtensionUI | None, mode: str | None = None) -> None:
        self.agent.set_extension_ui(ui, mode)

    def extension_origin(self, extension: str) -> tuple[str | None, str]:
        runner = self.agent.extensions
        loaded = (
            next((e for e in runner.extensions if e.name == extension), None)
            if runner is not None
            else None
        )
        return (loaded.path, loaded.source) if loaded is not None else (None, "extension")

    def extension_commands(self) -> list[RegisteredCommand]:
        return self.agent.extension_commands()

    def on_notice(self, listener: Callable[[str, str], None] | None) -> None:
        self.agent.on_notice(listener)

    async def run_extension_command(self, name: str, args: str) -> bool:
        return await self.agent.run_extension_command(name, args)

    def skill_names(self) -> list[str]:
        return [skill.name for skill in self.agent.resources.skills]

    def skills(self) -> list[Skill]:
        return list(self.agent.resources.skills)

    def prompt_templates(self) -> list[PromptTemplate]:
        return list(self.agent.resources.prompt_templates)

    def package_themes(self) -> list[str]:
        """The theme files installed packages ship (for the ``theme`` setting)."""
        return [path for path, _info in self.agent.resources.packages.themes]

    def startup_details(self) -> list[str]:
        resources = self.agent.resources
        trusted = "trusted" if resources.trust.trusted else "not trusted"
        lines = [f"project: {resources.cwd} ({trusted})"]
        files = [f.path for f in resources.context_files]
        lines.append("context files: " + (", ".join(files) or "none"))
        if resources.system_prompt_source:
            lines.append(f"system prompt: {resources.system_prompt_source}")
        if resources.append_system_prompt_sources:
            lines.append("appended: " + ", ".join(resources.append_system_prompt_sources))
        lines.append("skills: " + (", ".join(s.name for s in resources.skills) or "none"))
        templates = ", ".join("/" + t.name for t in resources.prompt_templates)
        lines.append("prompt templates: " + (templates or "none"))
        lines += [f"prompt template {d}" for d in resources.prompt_template_diagnostics]
        runner = self.agent.extensions
        loaded = [e.path or e.name for e in runner.extensions] if runner is not None else []
        lines.append("extensions: " + (", ".join(loaded) or "none"))
        scope = [entry.key for entry in self.config.scope]
        lines.append("model scope: " + (", ".join(scope) or "every model with a key"))
        return [one_line(line) for line in lines]

    def model_info(self) -> ModelInfo | None:
        model = self.agent.model_or_none
        return model.info if model is not None else None

    def estimate_context(self) -> int:
        return sum(estimate_tokens(m) for m in self.agent.session.stored_projection().messages)

    def stats(self) -> SessionStats:
        return self.agent.stats()

    def available_models(self) -> list[str]:
        return _model_names(self.config.agent_dir)

    def settings_data(self) -> Mapping[str, object]:
        return self.agent.settings_data

    def override_settings(self, patch: Mapping[str, object]) -> None:
        self.agent.override_settings(patch)

    def auto_compaction_enabled(self) -> bool:
        return self.agent.compaction_settings().enabled

    def usable_models(self) -> list[ModelInfo]:
        return [entry.info for entry in _load_registry(self.config.agent_dir, None).available()]

    def credential_error(self) -> str | None:
        model = self.agent.model_or_none
        # adapters built by the registry carry why their credentials are unusable
        error = getattr(model, "credential_error", None)
        return error if isinstance(error, str) else None

    def switch_model(self, ref: str) -> None:
        model = self.config.model_resolver(ref, None)
        if model is None:
            raise ProviderError(f"Unknown model '{ref}'")
        self.agent.switch_model(model)

    def thinking_level(self) -> str:
        return self.agent.thinking_level

    def cycle_model(self, *, forward: bool = True) -> str:
        """Ctrl+P: the next model of the scope (else of the available models), with pi's
        level rule; returns the status text."""
        cycled = self.cycle(forward=forward)
        if cycled is None:
            return "Only one model in scope" if self.config.scope else "Only one model available"
        info, level = cycled.model, cycled.thinking_level
        suffix = f" (thinking: {level})" if info.reasoning and level != "off" else ""
        return f"Switched to {info.name or info.id}{suffix}"

    def cycle(self, *, forward: bool = True) -> ModelCycle | None:
        """Switch to the next (previous) model as pi cycles: the scope's entries
        that have a key (``--models`` / ``enabledModels``), else every available model; the
        scope entry's level, else pi's model-switch level rule. ``None`` when there is nothing
        to switch to. Extensions get ``model_select`` with source ``cycle``."""
        from pi_context.providers import registry as model_registry

        registry = model_registry.load_registry(self.config.agent_dir)
        available = {entry.key: entry for entry in registry.available()}
        scope = self.config.scope
        keys = [s.key for s in scope if s.key in available] if scope else list(available)
        info = self.model_info()
        current = f"{info.provider}/{info.id}" if info is not None else None
        target = next_model_key(keys, current, forward=forward)
        if target is None:
            return None
        scoped = next((s.level for s in scope if s.key == target), None)
        model = registry.create(available[target])
        level = self.agent.switch_model(model, scoped_level=scoped, source="cycle")
        return ModelCycle(model.info, level, is_scoped=bool(scope))

    def cycle_thinking_level(self) -> str | None:
        """The next supported level (recorded); ``None`` when the model cannot think."""
        model = self.agent.model_or_none
        if model is None:
            return None
        level = cycle_thinking_level(model.info, self.agent.thinking_level)
        return self.agent.set_thinking_level(level) if level is not None else None

    # -- pickers (/model, /scoped-models, /thinking, /resume) -----------------------------

    def model_choices(self) -> list[ModelChoice]:
        registry = _load_registry(self.config.agent_dir, None)
        return [
            ModelChoice(
                entry.info.provider,
                entry.info.id,
                entry.info.name or entry.info.id,
                registry.is_available(entry),
            )
            for entry in registry.entries
        ]

    def model_scope(self) -> list[str]:
        return [entry.key for entry in self.config.scope]

    def set_model_scope(self, keys: Sequence[str], *, save: bool) -> None:
        levels = {entry.key: entry.level for entry in self.config.scope}
        self.config.scope = tuple(ScopeEntry(key, levels.get(key)) for key in keys)
        if save:
            # a kept entry keeps its explicit level (``provider/id:level``), as pi saves it
            patterns = [f"{e.key}:{e.level}" if e.level else e.key for e in self.config.scope]
            update_global_settings(self.config.agent_dir, {"enabledModels": patterns or None})

    def default_model_key(self) -> str | None:
        provider, model_id = _settings_model(self.config.agent_dir)
        return f"{provider}/{model_id}" if provider and model_id else None

    def select_model(self, key: str, *, save: bool = False) -> str:
        registry = _load_registry(self.config.agent_dir, None)
        provider, _, model_id = key.partition("/")
        entry = registry.find(provider, model_id)
        if entry is None:
            raise ModelNotFoundError(f'Model "{key}" not found')
        if not registry.is_available(entry):
            raise ProviderError(f"No API key for {key}")
        level = self.agent.switch_model(registry.create(entry))
        if save:
            save_default_model(self.config.agent_dir, entry.info.provider, entry.info.id)
        return level

    def supported_thinking_levels(self) -> tuple[str, ...]:
        model = self.agent.model_or_none
        return supported_thinking_levels(model.info) if model is not None else ("off",)

    def set_thinking_level(self, level: str, *, save: bool = False) -> str:
        chosen = self.agent.set_thinking_level(level)
        if save:  # pi saves the requested level, not the clamped one
            update_global_settings(self.config.agent_dir, {"defaultThinkingLevel": level})
        return chosen

    def set_session_name(self, name: str) -> None:
        self.agent.set_session_name(name)

    def on_session_name(self, listener: Callable[[str | None], None] | None) -> None:
        self.agent.on_session_name(listener)

    def on_shutdown_request(self, listener: Callable[[], None] | None) -> None:
        self.agent.on_shutdown_request(listener)

    def sessions_here(self) -> list[SessionInfo]:
        directory = self.session_dir()
        return self._lister.directory(directory) if directory is not None else []

    def sessions_everywhere(self) -> list[SessionInfo]:
        roots = [Path(self.config.agent_dir) / "sessions"]
        directory = self.session_dir()
        if directory is not None:
            roots.append(directory)
        return self._lister.everywhere(roots)

    def rename_session(self, path: Path, name: str) -> None:
        if path == self.agent.session.file_path:
            self.agent.set_session_name(name)
        else:
            with Session.open(path, lock_timeout=0) as other:
                other.append_session_info(name)
        self._lister.forget(path)

    def delete_session(self, path: Path) -> None:
        if path == self.agent.session.file_path:
            raise PiContextError("The session in use cannot be deleted")
        if session_dirs.read_header(path) is None:
            raise PiContextError(f"{path} is not a session file; not deleted")
        path.unlink()
        self._lister.forget(path)

    async def open_session_here(self, path: Path, *, fork: bool) -> RunningAgent:
        here = self.config.cwd
        if fork:
            directory = self.config.session_dir or self.session_dir()
            if directory is None:
                raise PiContextError("No session directory to fork into (--no-session)")
            directory.mkdir(parents=True, exist_ok=True)
            path = session_dirs.fork_from(path, directory, cwd=here)
        opened = await session_replacement.open_session(self.agent, self.config, path, cwd=here)
        return RunningAgent(opened, self.config)

    # -- stored credentials (auth.json) -----------------------------------------------------------

    def _auth(self) -> AuthStore:
        return AuthStore.in_agent_dir(Path(self.config.agent_dir))

    def login_providers(self) -> list[str]:
        from pi_context.providers import registry as model_registry

        return [
            p
            for p in model_registry.load_registry(self.config.agent_dir).providers()
            if p != "local"
        ]

    def stored_logins(self) -> list[str]:
        return self._auth().providers()

    def login(self, provider: str, key: str) -> Path:
        store = self._auth()
        store.set_api_key(provider, key)
        self._refresh_credentials(provider)
        return store.path

    def logout(self, provider: str) -> bool:
        removed = self._auth().remove(provider)
        if removed:
            self._refresh_credentials(provider)
        return removed

    def _refresh_credentials(self, provider: str) -> None:
        """After ``/login`` or ``/logout``: the current model of ``provider`` picks up the
        credentials now in effect (a ``--api-key`` of this run still wins)."""
        from pi_context.providers import registry as model_registry

        model = self.agent.model_or_none
        if model is None or model.info.provider != provider:
            return
        if getattr(model, "key_source", None) == "--api-key":
            return
        registry = model_registry.load_registry(self.config.agent_dir)
        entry = registry.find(provider, model.info.id)
        if entry is not None:
            self.agent.refresh_model(registry.create(entry))

    def session_dir(self) -> Path | None:
        if self.agent.session.file_path is not None:
            return self.agent.session.file_path.parent
        return self.config.session_dir

    def project_trust(self) -> ProjectTrust:
        return ProjectTrust(
            directory=self.agent.cwd,
            decision=self.agent.resources.trust,
            store=TrustStore(Path(self.config.agent_dir) / TRUST_FILE_NAME),
        )

    def _model(self) -> Model | None:
        return self.agent.model_or_none

    async def new_session(self, parent_session: str | None = None) -> RunningAgent:
        """``/new``; raises :class:`~.session_replacement.SwitchCancelledError` when an extension
        cancels (the current session goes on)."""
        agent = await session_replacement.new_session(
            self.agent, self.config, parent_session=parent_session
        )
        return RunningAgent(agent, self.config)

    async def open_session(self, path: Path) -> RunningAgent:
        """``/resume`` ``path``; raises :class:`~.session_replacement.SwitchCancelledError` when an
        extension cancels."""
        return RunningAgent(
            await session_replacement.open_session(self.agent, self.config, path), self.config
        )

    @property
    def stored(self) -> str | None:
        ref = self.agent.ref
        return str(ref) if ref is not None else None

    async def stored_sessions(self) -> list[tuple[str, int, float | None]]:
        store, ref = self._stored_place()
        rows: list[tuple[str, int, float | None]] = []
        cursor: str | None = None
        while True:
            page = await store.list_sessions(tenant=ref.tenant, limit=100, cursor=cursor)
            rows.extend((s.ref.id, s.entries, s.updated) for s in page.sessions)
            cursor = page.cursor
            if cursor is None:
                return rows

    async def load_stored_session(self, session_id: str) -> StoreBinding:
        from pi_context.store import SessionRef
        from pi_context.store.binding import StoreBinding

        store, ref = self._stored_place()
        return await StoreBinding.open(store, SessionRef(ref.tenant, session_id))

    async def open_stored_session(
        self, loaded: StoreBinding, *, here: bool = False
    ) -> RunningAgent:
        cwd = self.config.cwd if here else None
        opened = await session_replacement.open_session(self.agent, self.config, loaded, cwd=cwd)
        return RunningAgent(opened, self.config)

    def _stored_place(self) -> tuple[SessionStore, SessionRef]:
        store, ref = self.agent.store, self.agent.ref
        if store is None or ref is None:
            raise PiContextError("This is not a stored session (pictx --session URL#ID)")
        return store, ref

    def fork_messages(self) -> list[ForkMessage]:
        """The user messages ``/fork`` can start before (whole file, append order)."""
        return session_replacement.fork_messages(self.agent.session)

    async def fork_before(self, entry_id: str) -> tuple[RunningAgent, str]:
        """``/fork``: the new session (path before user message ``entry_id``) and that
        message's text for the editor. Raises ``SwitchCancelledError`` when an extension cancels,
        :class:`~pi_context.errors.PiContextError` for an entry that is not a user message."""
        agent, text = await session_replacement.fork_before(self.agent, self.config, entry_id)
        return RunningAgent(agent, self.config), text

    async def clone(self) -> RunningAgent:
        """``/clone``: a new session holding the current path. Raises ``SwitchCancelledError`` when
        an extension cancels, :class:`~pi_context.errors.PiContextError` (``Nothing to clone
        yet``) without entries."""
        return RunningAgent(await session_replacement.clone(self.agent, self.config), self.config)
