"""What both OpenAI adapters share: their client, built from a model's connection settings.

Chat Completions (:mod:`~pi_context.providers.openai`) speaks plain HTTP through
:class:`~pi_context.providers.openai_wire.ChatCompletionsClient`; Responses
(:mod:`~pi_context.providers.openai_responses`) stands on the ``openai`` SDK's
``AsyncOpenAI``. Each names its client in :meth:`OpenAIClientModel._connect`; the connection
settings, where system patches go and the long prompt-cache retention are read here, once.
This module imports neither client, so the Chat Completions path never loads the SDK.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Mapping
from typing import Generic, Protocol, TypeVar

from pi_context.model import ModelInfo, SystemDelivery
from pi_context.providers._sdk import SDKModel

__all__ = ["OpenAIClientModel"]


class _Client(Protocol):
    """What the adapters need of a client beyond their API calls."""

    @property
    def base_url(self) -> object: ...

    async def close(self) -> None: ...


ClientT = TypeVar("ClientT", bound=_Client)


class OpenAIClientModel(SDKModel, Generic[ClientT]):
    """Base of the adapters over an OpenAI-compatible client (a ``client`` passed in is used
    as it is; else one is built from the other connection settings)."""

    def __init__(
        self,
        info: ModelInfo,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        headers: Mapping[str, str] | None = None,
        client: ClientT | None = None,
        max_retries: int = 0,
        max_retry_delay: float | None = 60.0,
        timeout: float | None = 300.0,
        credential_error: str | None = None,
        key_source: str | None = None,
        system_delivery: SystemDelivery | None = None,
        long_cache_retention: bool = False,
    ) -> None:
        self.long_cache_retention = long_cache_retention
        """``PI_CACHE_RETENTION=long``: ask OpenAI to keep the prompt cache for 24 hours."""
        self._client: ClientT = client or self._connect(
            api_key=api_key or "not-needed",
            base_url=base_url or info.base_url,
            headers=dict(headers or {}),
            max_retries=max_retries,
            max_retry_delay=max_retry_delay,
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

    @abstractmethod
    def _connect(
        self,
        *,
        api_key: str,
        base_url: str | None,
        headers: dict[str, str],
        max_retries: int,
        max_retry_delay: float | None,
        timeout: float | None,
    ) -> ClientT:
        """A new client for these connection settings (no key: a placeholder, as local
        servers want none)."""

    async def aclose(self) -> None:
        await self._client.close()
