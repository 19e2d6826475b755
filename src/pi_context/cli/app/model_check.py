"""A cheap check before the first request to a custom OpenAI-compatible server: is the model
id one the server lists?

A server such as llama.cpp's, Ollama or vLLM answers ``GET /models`` with the ids it serves; a
model id that is not among them is usually a typo in ``models.json`` that would otherwise only
show up as a failed (and retried) request. The check runs once at startup, for custom or local
base URLs only (never for a built-in provider's own endpoint), with a short timeout and no
retries; a server that does not answer, or lists nothing, is not warned about.
"""

from __future__ import annotations

import sys

from pi_context.model import Model

__all__ = ["unlisted_model_warning"]

_TIMEOUT_SECONDS = 2.0
_SHOWN_IDS = 5


def _is_custom(model: Model) -> bool:
    from pi_context.providers.builtin_providers import provider_spec

    info = model.info
    spec = provider_spec(info.provider)
    return spec is None or info.base_url != spec.base_url_for(info.api)


async def unlisted_model_warning(model: Model) -> str | None:
    """A one-line warning when ``model``'s custom server lists models and not this one."""
    adapters = sys.modules.get("pi_context.providers.openai")
    if adapters is None or not isinstance(model, adapters.OpenAIChatModel):
        return None  # not an OpenAI-compatible adapter (its module was never imported)
    if not _is_custom(model):
        return None
    listed = await model.listed_model_ids(timeout=_TIMEOUT_SECONDS)
    info = model.info
    if not listed or info.id in listed:
        return None
    shown = ", ".join(listed[:_SHOWN_IDS]) + (", …" if len(listed) > _SHOWN_IDS else "")
    return (
        f'{info.base_url} does not list the model "{info.id}" (it serves: {shown}); '
        f"requests to {info.provider}/{info.id} may fail: check the id in models.json"
    )
