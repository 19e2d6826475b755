"""The model registry: built-in models, ``models.json``, credentials, and model selection.

* Built-ins come from :mod:`pi_context.providers.catalog`; ``<agentDir>/models.json`` (pi's
  layout: ``{"providers": {id: {baseUrl, api, apiKey, headers, authHeader, models,
  modelOverrides, compat}}}``) reroutes built-in providers, adds or replaces models and defines
  new providers (OpenAI-compatible local servers, proxies). A broken file is ignored as a whole
  and the reason is kept in :attr:`ModelRegistry.errors`, as pi does.
* Keys: ``--api-key``, then ``<agentDir>/auth.json`` (:mod:`.auth_store`), then ``apiKey``/header templates (``$VAR``, ``${VAR}``, ``$$``, ``$!``, or ``!command``),
  else the provider's environment variables from pi's provider table
  (:mod:`pi_context.providers.builtin_providers`: ``OPENAI_API_KEY``, ``GEMINI_API_KEY``,
  ``GROQ_API_KEY``, ...; ``ANTHROPIC_AUTH_TOKEN`` > ``ANTHROPIC_OAUTH_TOKEN`` >
  ``ANTHROPIC_API_KEY``).
* :func:`resolve_model` follows pi's ``--model`` rules (exact id, ``provider/id``, fuzzy
  substring with alias preference, ``:level`` suffix, custom id on a known provider);
  :func:`default_model` picks the first built-in provider with a key, else the embedded local
  model, so ``pictx`` works offline with no configuration.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, cast, get_args

from msgspec import Struct

from pi_context.errors import ModelNotFoundError, ProviderError
from pi_context.messages import ThinkingLevel
from pi_context.model import Model, ModelInfo
from pi_context.providers.auth_store import AuthStore
from pi_context.providers.builtin_providers import SUPPORTED_APIS, fill_base_url, provider_spec
from pi_context.providers.catalog import DEFAULT_MODEL_IDS, LOCAL_MODEL
from pi_context.providers.key_templates import Credentials, resolve_key_template
from pi_context.providers.local_discovery import local_model_installed
from pi_context.providers.models_json import (
    ModelEntry,
    entries_from,
    missing_windows,
    parse_models_json,
    templates_from,
)
from pi_context.resources.settings import (
    ProviderRequestSettings,
    Settings,
    load_settings,
    provider_request_settings_for,
)

__all__ = [
    "ModelRegistry",
    "Resolution",
    "default_model",
    "list_models",
    "load_registry",
    "local_model_installed",
    "resolve_model",
]

_LEVELS: tuple[str, ...] = get_args(ThinkingLevel)
_DATED = re.compile(r"-\d{8}$")


class Resolution(Struct, frozen=True):
    """What a ``--model`` text resolved to: the entry, the ``:level`` suffix, and a warning
    when the id is not known and is used as a custom id of its provider."""

    entry: ModelEntry
    thinking_level: ThinkingLevel | None = None
    warning: str | None = None


class ModelRegistry:
    """Every known model, with credentials resolved from templates and the environment."""

    def __init__(
        self,
        entries: Sequence[ModelEntry],
        *,
        env: Mapping[str, str] | None = None,
        errors: Sequence[str] = (),
        include_local: bool = True,
        templates: Mapping[str, ModelEntry] | None = None,
        auth: AuthStore | None = None,
    ) -> None:
        self.entries = list(entries)
        self.templates: dict[str, ModelEntry] = (
            dict(templates) if templates is not None else templates_from({})
        )
        """pi's built-in providers that have no model here: where a named model id starts."""
        if include_local and not any(e.info.provider == LOCAL_MODEL.provider for e in entries):
            self.entries.append(ModelEntry(LOCAL_MODEL))
        self.env: Mapping[str, str] = os.environ if env is None else env
        self.errors = list(errors)
        self.warnings: list[str] = []
        """Problems that do not empty the file (a custom model without ``contextWindow``)."""
        self._commands: dict[str, tuple[str | None, str | None]] = {}
        """``!command`` results, so choosing and creating a model runs each command once."""
        self.auth = auth
        """``<agentDir>/auth.json``: stored keys, after ``--api-key`` and before models.json."""
        self.request = ProviderRequestSettings()
        """How requests are sent (timeout, the client's own retries): pi's ``retry.provider``
        and ``httpIdleTimeoutMs`` settings; :func:`load_registry` reads them."""
        self.key_overrides: dict[str, str] = {}
        """provider → key given on the command line (``--api-key``): used before any stored
        key, never saved."""

    def _resolve(self, template: str) -> tuple[str | None, str | None]:
        if not template.startswith("!"):
            return resolve_key_template(template, self.env)
        if template not in self._commands:
            self._commands[template] = resolve_key_template(template, self.env)
        return self._commands[template]

    # credentials -------------------------------------------------------------------------

    def credentials(self, entry: ModelEntry) -> Credentials:
        """The key and headers for ``entry``: models.json ``apiKey`` first, then env vars."""
        provider = entry.info.provider
        if provider == LOCAL_MODEL.provider:
            return Credentials()
        headers: dict[str, str] = {}
        for name, template in entry.headers.items():
            value, missing = self._resolve(template)
            if value is None:
                return Credentials(
                    error=f'Failed to resolve header "{name}" for provider "{provider}": {missing}'
                )
            headers[name] = value
        key: str | None = None
        bearer: str | None = None
        source: str | None = None
        spec = provider_spec(provider)
        stored = self.auth.credential(provider) if self.auth is not None else None
        if provider in self.key_overrides:
            key, source = self.key_overrides[provider], "--api-key"
        elif stored is not None and self.auth is not None:
            if stored.error is not None:
                return Credentials(headers=headers, error=stored.error)
            source = f'the "{provider}" record of {self.auth.path}'
            if stored.oauth and provider == "anthropic":
                bearer = stored.key
            else:
                key = stored.key
        elif entry.api_key is not None:
            source = f'"apiKey" of provider "{provider}" in models.json'
            key, missing = self._resolve(entry.api_key)
            if key is None:
                return Credentials(
                    headers=headers,
                    error=f'Failed to resolve API key for provider "{provider}" from '
                    f"environment variable: {missing}",
                )
        elif provider == "anthropic":
            names = ("ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_OAUTH_TOKEN", "ANTHROPIC_API_KEY")
            source = next((name for name in names if self.env.get(name)), None)
            bearer = self.env.get("ANTHROPIC_AUTH_TOKEN") or self.env.get("ANTHROPIC_OAUTH_TOKEN")
            key = None if bearer else (self.env.get("ANTHROPIC_API_KEY") or None)
        elif spec is not None and spec.key_env:
            source = next((name for name in spec.key_env if self.env.get(name)), None)
            key = self.env.get(source) if source else None
        elif entry.info.base_url and _is_loopback(entry.info.base_url):
            return Credentials(headers=headers)  # local servers need no key
        if entry.auth_header and key:
            headers["Authorization"] = f"Bearer {key}"
        if key is None and bearer is None:
            return Credentials(
                headers=headers,
                error=f'No API key found for provider "{provider}": {_key_hint(provider)}',
            )
        return Credentials(api_key=key, bearer=bearer or None, headers=headers, source=source)

    def base_url(self, entry: ModelEntry) -> tuple[str | None, str | None]:
        """``(url, error)``: the entry's base URL with ``{VAR}`` placeholders filled."""
        url = entry.info.base_url
        if url is None or "{" not in url:
            return url, None
        filled, missing = fill_base_url(url, self.env)
        if filled is None:
            return None, (
                f'Failed to resolve the base URL of provider "{entry.info.provider}": set {missing}'
            )
        return filled, None

    def is_available(self, entry: ModelEntry) -> bool:
        if entry.info.provider == LOCAL_MODEL.provider:
            return local_model_installed()
        if entry.api_key is not None and entry.api_key.startswith("!"):
            return True  # a command is run at request time only
        return self.credentials(entry).ok and self.base_url(entry)[1] is None

    def available(self) -> list[ModelEntry]:
        return [e for e in self.entries if self.is_available(e)]

    # lookup ------------------------------------------------------------------------------

    def find(self, provider: str, model_id: str) -> ModelEntry | None:
        for entry in self.entries:
            if (
                entry.info.provider.lower() == provider.lower()
                and entry.info.id.lower() == model_id.lower()
            ):
                return entry
        return None

    def providers(self) -> list[str]:
        """Every provider ``--model provider/id`` can name: with models here, then pi's table."""
        seen: dict[str, None] = {}
        for entry in self.entries:
            seen.setdefault(entry.info.provider, None)
        for pid in self.templates:
            seen.setdefault(pid, None)
        return list(seen)

    def _pick(
        self, text: str, candidates: list[ModelEntry], preferred: str | None = None
    ) -> ModelEntry:
        providers = {e.info.provider for e in candidates}
        if len(providers) == 1:
            return _best(candidates)
        if preferred is not None:
            named = [e for e in candidates if e.info.provider.lower() == preferred.lower()]
            if named and self.is_available(named[0]):
                return _best(named)
        authed = [e for e in candidates if self.is_available(e)]
        if len({e.info.provider for e in authed}) == 1:
            return _best(authed)
        listing = ", ".join(sorted(e.key for e in candidates))
        raise ModelNotFoundError(
            f'Model "{text}" is ambiguous across providers: {listing}. '
            "Use --provider or provider/model."
        )

    def lookup(self, spec: str, *, provider: str | None = None) -> Resolution:
        """Resolve a ``--model`` text (optionally ``provider/id`` and ``:level``)."""
        text, level = spec, None
        base, sep, suffix = spec.rpartition(":")
        if sep and suffix in _LEVELS and base:
            text, level = base, cast(ThinkingLevel, suffix)
        pool = self.entries
        if provider is not None:
            pool = [e for e in pool if e.info.provider.lower() == provider.lower()]
            if not pool and provider.lower() not in self.templates:
                _refuse_unsupported_provider(provider)
                raise ModelNotFoundError(
                    f'Unknown provider "{provider}". Run `pictx models --all` to see the known '
                    "providers and models."
                )
        lowered = text.lower()
        named_provider: str | None = None
        for pid in sorted(self.providers(), key=len, reverse=True):
            if lowered.startswith(pid.lower() + "/"):
                named_provider = pid
                break
        exact = [e for e in pool if e.info.id.lower() == lowered]
        if named_provider is not None:
            rest = lowered[len(named_provider) + 1 :]
            scoped = [e for e in pool if e.info.provider.lower() == named_provider.lower()]
            exact += [e for e in scoped if e.info.id.lower() == rest]
            if not exact:
                fuzzy_scoped = [e for e in scoped if _contains(e, rest)]
                if fuzzy_scoped:
                    return Resolution(_best(fuzzy_scoped), level)
        if exact:
            return Resolution(self._pick(text, exact, named_provider), level)
        fuzzy = [e for e in pool if _contains(e, lowered)]
        if fuzzy:
            best = _best(fuzzy)
            same = [e for e in fuzzy if e.info.id == best.info.id]
            return Resolution(self._pick(text, same) if len(same) > 1 else best, level)
        if named_provider is not None:
            return self._custom(named_provider, text[len(named_provider) + 1 :], level)
        if provider is not None:
            named = next((p for p in self.providers() if p.lower() == provider.lower()), None)
            if named is not None:
                return self._custom(named, text, level)
        head, slash, _ = lowered.partition("/")
        _refuse_unsupported_provider(provider or (head if slash else ""))
        raise ModelNotFoundError(
            f'Model "{text}" not found. Run `pictx models --all` to see the known models.'
        )

    def _custom(self, provider: str, custom_id: str, level: ThinkingLevel | None) -> Resolution:
        """pi's custom model id on a known provider, cloned from its default (or first) model."""
        template = self.default_for(provider) or next(
            (e for e in self.entries if e.info.provider == provider), None
        )
        if template is None:
            template = self.templates[provider]
        info = dataclasses.replace(template.info, id=custom_id, name=custom_id)
        if level not in (None, "off"):
            info = dataclasses.replace(info, reasoning=True)
        return Resolution(
            dataclasses.replace(template, info=info),
            level,
            f'Model "{custom_id}" not found for provider "{provider}". Using custom model id.',
        )

    def default_for(self, provider: str) -> ModelEntry | None:
        model_id = DEFAULT_MODEL_IDS.get(provider)
        return self.find(provider, model_id) if model_id else None

    def default(self) -> ModelEntry | None:
        """The first built-in provider default with a key, any keyed model, else the local model."""
        for provider in DEFAULT_MODEL_IDS:
            entry = self.default_for(provider)
            if entry is not None and self.credentials(entry).ok:
                return entry
        for entry in self.entries:
            if entry.info.provider != LOCAL_MODEL.provider and self.credentials(entry).ok:
                return entry
        local = self.find(LOCAL_MODEL.provider, LOCAL_MODEL.id)
        return local if local is not None and self.is_available(local) else None

    # adapters ----------------------------------------------------------------------------

    def create(self, entry: ModelEntry) -> Model:
        """An adapter instance for ``entry`` (credentials resolved now; see
        :func:`~pi_context.providers.adapters.create_adapter`)."""
        from pi_context.providers.adapters import create_adapter

        base_url, url_error = self.base_url(entry)
        return create_adapter(
            entry,
            self.credentials(entry),
            base_url=base_url,
            url_error=url_error,
            long_cache_retention=self.env.get("PI_CACHE_RETENTION") == "long",
            request=self.request,
        )


def _refuse_unsupported_provider(provider: str) -> None:
    """A clear error for pi providers whose APIs pictx does not speak (Bedrock, Mistral...)."""
    spec = provider_spec(provider.lower())
    if spec is not None and not spec.supported_apis:
        raise ModelNotFoundError(
            f'Provider "{spec.id}" speaks {", ".join(spec.apis)}, which pictx does not support '
            f"(supported APIs: {', '.join(SUPPORTED_APIS)})."
        )


def _contains(entry: ModelEntry, text: str) -> bool:
    return text in entry.info.id.lower() or text in (entry.info.name or "").lower()


def _best(entries: Sequence[ModelEntry]) -> ModelEntry:
    """pi's fuzzy choice: aliases (``-latest`` or undated ids) first, then the largest id."""

    def is_alias(entry: ModelEntry) -> bool:
        return entry.info.id.endswith("-latest") or not _DATED.search(entry.info.id)

    pool = [e for e in entries if is_alias(e)] or list(entries)
    return max(pool, key=lambda e: e.info.id)


def _key_hint(provider: str) -> str:
    """Where a missing key for ``provider`` should come from."""
    if provider == "anthropic":
        return "set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN for a bearer token)"
    spec = provider_spec(provider)
    if spec is not None and spec.key_env:
        return "set " + " or ".join(spec.key_env)
    return f'set "apiKey" for provider "{provider}" in models.json'


def _is_loopback(url: str) -> bool:
    host = re.sub(r"^[a-z]+://", "", url.lower()).split("/", 1)[0].rsplit(":", 1)[0]
    return host in ("localhost", "127.0.0.1", "[::1]", "::1")


def load_registry(
    agent_dir: Path | None = None,
    *,
    env: Mapping[str, str] | None = None,
    settings: Settings | Mapping[str, Any] | None = None,
) -> ModelRegistry:
    """Built-ins plus ``<agentDir>/models.json`` (errors kept in ``registry.errors``).

    The models it creates send their requests as ``settings`` (default: the agent dir's
    ``settings.json``) say: ``retry.provider.timeoutMs`` / ``httpIdleTimeoutMs``,
    ``retry.provider.maxRetries`` and ``retry.provider.maxRetryDelayMs`` (a bad value raises
    :class:`~pi_context.errors.SettingsError` naming the file)."""
    if agent_dir is None:
        from pi_context.resources.paths import agent_dir as default_agent_dir

        agent_dir = default_agent_dir()
    if settings is None:
        settings = load_settings(agent_dir)
    request = provider_request_settings_for(settings)
    path = agent_dir / "models.json"
    providers: dict[str, Any] = {}
    errors: list[str] = []
    if path.is_file():
        try:
            providers, errors = parse_models_json(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as exc:
            errors = [f"Failed to parse models.json: {exc}"]
        errors = [f"{path}: {e}" for e in errors]
    auth = AuthStore.in_agent_dir(agent_dir)
    for provider in auth.providers():  # every record checked now, so its warnings are known
        auth.credential(provider)
    registry = ModelRegistry(
        entries_from(providers),
        env=env,
        errors=errors,
        templates=templates_from(providers),
        auth=auth,
    )
    registry.warnings = [f"{path}: {w}" for w in missing_windows(providers)] + auth.warnings
    registry.request = request
    return registry


def list_models(registry: ModelRegistry | None = None) -> list[ModelInfo]:
    """Every model the registry knows (built-ins and ``models.json``), usable or not."""
    return [e.info for e in (registry or load_registry()).entries]


def resolve_model(
    spec: str, *, registry: ModelRegistry | None = None, require_credentials: bool = False
) -> Model:
    """The adapter for ``--model SPEC`` (raises :class:`ModelNotFoundError`).

    Credentials are looked up now, but a missing key is reported by the model's first request
    (as pi's ``--model`` does) unless ``require_credentials``, which raises
    :class:`ProviderError` here naming the variable to set. ``registry.credentials(entry)``
    tells the same without raising.
    """
    reg = registry or load_registry()
    entry = reg.lookup(spec).entry
    if require_credentials:
        creds = reg.credentials(entry)
        if not creds.ok:
            raise ProviderError(f"{entry.key}: {creds.error}", kind="authentication")
    return reg.create(entry)


def default_model(*, registry: ModelRegistry | None = None) -> Model | None:
    """The model to use when none is named; the local model when no key is configured."""
    reg = registry or load_registry()
    entry = reg.default()
    return reg.create(entry) if entry is not None else None
