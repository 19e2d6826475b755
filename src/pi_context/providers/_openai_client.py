"""The ``openai`` SDK client the Responses adapter stands on (Chat Completions speaks plain HTTP:
:mod:`~pi_context.providers.openai_wire`).

It builds the ``AsyncOpenAI`` client from a model's connection settings and names the SDK's
error types; :class:`~pi_context.providers.openai_responses.OpenAIResponsesModel` adds its API.
"""

from __future__ import annotations

from collections.abc import Mapping

import httpx2
import openai

from pi_context.model import ModelInfo, SystemDelivery
from pi_context.providers._sdk import SDKModel

__all__ = ["OpenAIClientModel"]


class OpenAIClientModel(SDKModel):
    """Base of the adapters over an ``openai.AsyncOpenAI`` client."""

    connection_errors = (openai.APIConnectionError, httpx2.HTTPError, OSError)
    sdk_errors = (openai.APIError, *connection_errors)

    def __init__(
        self,
        info: ModelInfo,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        headers: Mapping[str, str] | None = None,
        client: openai.AsyncOpenAI | None = None,
        max_retries: int = 0,
        timeout: float = 600.0,
        credential_error: str | None = None,
        key_source: str | None = None,
        system_delivery: SystemDelivery | None = None,
        long_cache_retention: bool = False,
    ) -> None:
        self.long_cache_retention = long_cache_retention
        """``PI_CACHE_RETENTION=long``: ask OpenAI to keep the prompt cache for 24 hours."""
        self._client = client or openai.AsyncOpenAI(
            api_key=api_key or "not-needed",
            base_url=base_url or info.base_url,
            default_headers=dict(headers or {}),
            max_retries=max_retries,
            timeout=timeout,
        )
        super().__init__(
            info,
            base_url=str(self._client.base_url),
            credential_error=credential_error,
            key_source=key_source,
        )
        self.system_delivery: SystemDelivery = system_delivery or (
            "in_place" if info.system_messages_mid_conversation else "user_turn"
        )

    async def aclose(self) -> None:
        await self._client.close()
