"""Real models: the model registry, ``models.json``, credentials and the provider adapters.

Resolve a model the way ``pictx --model`` does and hand it to an agent::

    from pi_context.providers import resolve_model

    model = resolve_model("anthropic/claude-sonnet-4-5", require_credentials=True)
    sess = await AgentSession.create(cwd=".", model=model)

``AgentSession.create(model="provider/id")`` does the same. The registry holds pi's built-in
models plus ``<agentDir>/models.json`` (custom providers such as an OpenAI-compatible server on
``127.0.0.1``); keys come from ``--api-key``, ``auth.json``, ``models.json`` templates or the
provider's environment variables. Without ``require_credentials`` a missing key is reported by
the model's first request; :meth:`ModelRegistry.credentials` tells it without raising.

The modules, one concept each: :mod:`.registry` (the registry, credentials, model selection),
:mod:`.models_json` (the file's parser and entries), :mod:`.key_templates` (``$VAR`` and
``!command`` values), :mod:`.adapters` (the adapter for an entry, by API), one module per API
(:mod:`.anthropic`, :mod:`.openai`, :mod:`.openai_responses`, :mod:`.google`) and the embedded
model (:mod:`.local` and its ``local_*`` helpers).

Importing this package loads nothing else: each name is imported from its module on first use.
"""

import importlib
import typing

if typing.TYPE_CHECKING:
    from pi_context.providers.anthropic import AnthropicModel
    from pi_context.providers.google import GoogleModel
    from pi_context.providers.key_templates import Credentials
    from pi_context.providers.local import LocalModel
    from pi_context.providers.models_json import ModelEntry, parse_models_json
    from pi_context.providers.openai import OpenAIChatModel
    from pi_context.providers.openai_responses import OpenAIResponsesModel
    from pi_context.providers.registry import (
        ModelRegistry,
        Resolution,
        default_model,
        list_models,
        load_registry,
        resolve_model,
    )

__all__ = [
    "AnthropicModel",
    "Credentials",
    "GoogleModel",
    "LocalModel",
    "ModelEntry",
    "ModelRegistry",
    "OpenAIChatModel",
    "OpenAIResponsesModel",
    "Resolution",
    "default_model",
    "list_models",
    "load_registry",
    "parse_models_json",
    "resolve_model",
]

_HOMES = {
    "AnthropicModel": "pi_context.providers.anthropic",
    "Credentials": "pi_context.providers.key_templates",
    "GoogleModel": "pi_context.providers.google",
    "LocalModel": "pi_context.providers.local",
    "ModelEntry": "pi_context.providers.models_json",
    "ModelRegistry": "pi_context.providers.registry",
    "OpenAIChatModel": "pi_context.providers.openai",
    "OpenAIResponsesModel": "pi_context.providers.openai_responses",
    "Resolution": "pi_context.providers.registry",
    "default_model": "pi_context.providers.registry",
    "list_models": "pi_context.providers.registry",
    "load_registry": "pi_context.providers.registry",
    "parse_models_json": "pi_context.providers.models_json",
    "resolve_model": "pi_context.providers.registry",
}
"""Where each public name lives; imported from there when first used."""


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'pi_context.providers' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
