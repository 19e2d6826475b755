"""The adapter factory: the :class:`~pi_context.model.Model` for a registry entry, by its API.

Each adapter module (and its SDK) is imported only when a model of its API is created, so
resolving or listing models loads no provider SDK.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from pi_context.errors import ProviderError
from pi_context.model import Model
from pi_context.providers.builtin_providers import SUPPORTED_APIS, provider_spec
from pi_context.providers.catalog import LOCAL_MODEL
from pi_context.providers.key_templates import Credentials
from pi_context.providers.models_json import ModelEntry
from pi_context.resources.settings import ProviderRequestSettings

__all__ = ["create_adapter"]


def create_adapter(
    entry: ModelEntry,
    creds: Credentials,
    *,
    base_url: str | None,
    url_error: str | None = None,
    long_cache_retention: bool = False,
    request: ProviderRequestSettings | None = None,
) -> Model:
    """An adapter instance for ``entry`` with the credentials and base URL the registry
    resolved (a missing key or URL variable is kept in the adapter and reported by its first
    request), its requests sent as ``request`` says (timeout, the client's own retries)."""
    api = entry.info.api
    if api == LOCAL_MODEL.api:
        from pi_context.providers.local import LocalModel

        return LocalModel(entry.info)
    spec = provider_spec(entry.info.provider)
    if api not in SUPPORTED_APIS:
        raise ProviderError(
            f'{entry.key}: API "{api}" is not supported (pictx speaks {", ".join(SUPPORTED_APIS)})'
        )
    request = request or ProviderRequestSettings()
    if base_url is None and url_error is None and spec is not None:
        base_url = spec.base_url_for(api)
    common: dict[str, Any] = {
        "base_url": base_url,
        "headers": creds.headers,
        "credential_error": creds.error or url_error,
        "key_source": creds.source,
        "timeout": request.timeout_seconds,
        "max_retries": request.max_retries,
        "max_retry_delay": request.max_retry_delay_seconds,
    }
    long = long_cache_retention
    info = entry.info
    if base_url != info.base_url and base_url is not None:
        info = dataclasses.replace(info, base_url=base_url)
    if api == "openai-completions":
        from pi_context.providers.openai import OpenAIChatModel

        return OpenAIChatModel(info, api_key=creds.api_key, long_cache_retention=long, **common)
    if api == "openai-responses":
        from pi_context.providers.openai_responses import OpenAIResponsesModel

        return OpenAIResponsesModel(
            info, api_key=creds.api_key, long_cache_retention=long, **common
        )
    if api == "google-generative-ai":
        from pi_context.providers.google import GoogleModel

        return GoogleModel(info, api_key=creds.api_key, **common)
    from pi_context.providers.anthropic import AnthropicModel

    return AnthropicModel(
        info,
        api_key=creds.api_key,
        auth_token=creds.bearer,
        long_cache_retention=long,
        **common,
    )
