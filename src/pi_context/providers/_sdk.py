"""What the SDK-backed adapters (Anthropic, OpenAI-compatible) share: the stream skeleton.

:class:`SDKModel` owns the parts that are the same for every HTTP provider: the credential
check before a request, turning SDK exceptions into one classified
:class:`~pi_context.errors.ProviderError`, the end-of-stream checks (cut stream, refusal-like
stop reasons) and the ``StreamDone`` that carries a failure. Subclasses translate requests and
stream events, and classify their SDK's HTTP status errors in :meth:`SDKModel._status_error`.

Every failure message ends with where the request went, ``(provider/model at base-url)``, so
"connection error" says which server was unreachable; a key the server rejects also names
where it came from (``; check OPENAI_API_KEY``). The suffix goes at the end because pi's
overflow and rate-limit phrases are matched from the start of the message; the base URL is
shown without credentials or query string, and the API key never appears.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Mapping
from typing import Any, ClassVar, Self
from urllib.parse import urlsplit, urlunsplit

from pi_context.errors import ProviderError
from pi_context.messages import StopReason
from pi_context.model import ModelInfo, ModelRequest, StreamDone, StreamEvent, SystemDelivery
from pi_context.model.classify import make_error
from pi_context.model.message_builder import MessageBuilder
from pi_context.providers.delivery import Delivery, plan_delivery

__all__ = ["SDKModel", "error_body", "public_url"]


def public_url(url: str) -> str:
    """``url`` without user info, query or fragment (where a careless key could hide)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = f"{host}:{parts.port}" if parts.port is not None else host
    return urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))


def error_body(body: object) -> tuple[str | None, str] | None:
    """``(type, message)`` from a JSON error body (``{"error": {...}}`` or flat), if any."""
    if not isinstance(body, Mapping):
        return None
    inner = body.get("error", body)
    if isinstance(inner, Mapping) and inner.get("message"):
        kind = inner.get("type")
        return (str(kind) if kind else None), str(inner["message"])
    return None


class SDKModel(ABC):
    """Base of the adapters over an official SDK client (see the module docstring)."""

    sdk_errors: ClassVar[tuple[type[BaseException], ...]]
    """Every exception type a request may raise that becomes a failed ``StreamDone``."""
    connection_errors: ClassVar[tuple[type[BaseException], ...]]
    """The ones meaning the server could not be reached or the connection dropped."""
    system_delivery: SystemDelivery
    """Where system prompt patches go (see :mod:`pi_context.providers.delivery`)."""

    def __init__(
        self,
        info: ModelInfo,
        *,
        base_url: str,
        credential_error: str | None,
        key_source: str | None,
    ) -> None:
        self._info = info
        self.base_url = public_url(base_url)
        """Where requests go, as shown in error messages (no credentials)."""
        self.credential_error = credential_error
        """Why no key could be resolved; every request then fails as ``authentication``."""
        self.key_source = key_source
        """Where the key came from (``OPENAI_API_KEY``, ...): named when the server rejects it."""

    @property
    def info(self) -> ModelInfo:
        return self._info

    @property
    def where(self) -> str:
        """``provider/model at base-url``: the context every error message ends with."""
        return f"{self._info.provider}/{self._info.id} at {self.base_url}"

    @abstractmethod
    async def aclose(self) -> None:
        """Close the HTTP client (its pooled connections)."""

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def _delivery(self, request: ModelRequest) -> Delivery:
        """How ``request`` goes on the wire under this adapter's :attr:`system_delivery`."""
        return plan_delivery(
            request.messages,
            mode=self.system_delivery,
            system_prompt=request.system_prompt,
            tools=request.tools,
            images=self._info.images,
        )

    @abstractmethod
    def build_params(self, request: ModelRequest) -> dict[str, Any]:
        """The keyword arguments of the SDK's streaming call."""

    @abstractmethod
    def _run(self, params: dict[str, Any], builder: MessageBuilder) -> AsyncIterator[StreamEvent]:
        """Send the request and translate its stream; ends with one ``StreamDone``."""

    @abstractmethod
    def _status_error(self, exc: BaseException) -> ProviderError | None:
        """The classified error when ``exc`` is the SDK's HTTP status error, else ``None``."""

    def _provider_error(self, exc: BaseException) -> ProviderError:
        """The classified error for one of :attr:`sdk_errors` (without the location)."""
        error = self._status_error(exc)
        if error is not None:
            return error
        provider = self._info.provider
        if isinstance(exc, self.connection_errors):
            return make_error(f"connection error: {exc}", provider=provider, kind="transient")
        # An error event inside the stream: the SDKs' ``APIError`` carries its ``message``.
        return make_error(str(getattr(exc, "message", exc)), provider=provider)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        builder = MessageBuilder(self._info)
        if self.credential_error is not None:
            yield self._failed(builder, ProviderError(self.credential_error, kind="authentication"))
            return
        try:
            params = self.build_params(request)
            hook = request.options.payload_hook
            if hook is not None:
                params = self._with_body(params, await hook(self._body(params)))
            headers_hook = request.options.headers_hook
            outgoing = self._outgoing_headers(params) if headers_hook is not None else None
            if headers_hook is not None and outgoing is not None:
                await headers_hook(outgoing)
                params = {**params, "extra_headers": outgoing}
        except ProviderError as exc:  # a request this model cannot take (e.g. a level mapping)
            yield self._failed(builder, exc)
            return
        try:
            async for event in self._run(params, builder):
                yield event
        except ProviderError as exc:  # classified before the request (e.g. no TLS store)
            yield self._failed(builder, exc)
        except self.sdk_errors as exc:
            yield self._failed(builder, self._provider_error(exc))

    # the body as sent ---------------------------------------------------------------------

    def _outgoing_headers(self, params: Mapping[str, Any]) -> dict[str, str | None] | None:
        """The HTTP headers the request will carry, when this adapter's transport shows them
        before sending (``None``: an SDK assembles them out of reach)."""
        return None

    takes_extra_body: ClassVar[bool] = True
    """Whether the client merges ``extra_body`` into the JSON body it sends."""

    def _body(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """The JSON body ``params`` become: ``extra_body`` merged, ``extra_headers`` apart."""
        body = {k: v for k, v in params.items() if k not in ("extra_body", "extra_headers")}
        body.update(params.get("extra_body") or {})
        return body

    def _with_body(self, params: Mapping[str, Any], body: Mapping[str, Any]) -> dict[str, Any]:
        """The call's parameters that send ``body``: fields the call names are passed as
        they are, any other field goes through ``extra_body``."""
        if not isinstance(body, Mapping):
            raise ProviderError(
                f"before_provider_request: the payload must be an object, not {type(body).__name__}"
            )
        named = set(params) - {"extra_body", "extra_headers"}
        out = {k: v for k, v in body.items() if k in named}
        extra = {k: v for k, v in body.items() if k not in named}
        if extra:
            if not self.takes_extra_body:
                fields = ", ".join(sorted(extra))
                raise ProviderError(
                    f"before_provider_request: {self._info.provider} requests take no "
                    f"other fields (got {fields})"
                )
            out["extra_body"] = extra
        if params.get("extra_headers"):
            out["extra_headers"] = params["extra_headers"]
        return out

    # end of stream ------------------------------------------------------------------------

    def _failed(
        self, builder: MessageBuilder, error: ProviderError, raw_stop: str | None = None
    ) -> StreamDone:
        """The ``StreamDone`` of a failed request; the message gains :attr:`where`.

        A rejected key (``authentication`` from the server) also names where the key came from.
        """
        context = self.where
        if error.kind == "authentication" and self.credential_error is None and self.key_source:
            context += f"; check {self.key_source}"
        located = ProviderError(
            f"{error} ({context})",
            kind=error.kind,
            status=error.status,
            retry_after=error.retry_after,
        )
        message = builder.finish("error", raw_stop=raw_stop, error=str(located))
        return StreamDone(message, located)

    def _incomplete(self, builder: MessageBuilder) -> StreamDone:
        """The stream closed before the provider said the response was complete."""
        error = ProviderError("stream ended before the response was complete", kind="transient")
        return self._failed(builder, error)

    def _finished(
        self, builder: MessageBuilder, stop: StopReason, raw_stop: str | None
    ) -> StreamDone:
        """The final ``StreamDone``; a stop reason mapped to ``error`` becomes a failure."""
        if stop == "error":
            error = ProviderError(f"response stopped: {raw_stop}", kind="other")
            return self._failed(builder, error, raw_stop)
        return StreamDone(builder.finish(stop, raw_stop=raw_stop))
