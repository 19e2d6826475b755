"""The model seam: what every caller of a model and every provider adapter agrees on.

:mod:`pi_context.model.protocol` defines :class:`Model` (a stream of events ending in one
:class:`StreamDone`), the request and its options; :mod:`pi_context.model.classify` turns a
provider's failure into a :class:`~pi_context.errors.ProviderError` kind;
:mod:`pi_context.model.thinking` says which thinking levels a model takes. This package sits
below compaction and the agent: both talk to models only through it, and the adapters in
:mod:`pi_context.providers` implement it.
"""

from typing import TYPE_CHECKING

from pi_context import _lazy

if TYPE_CHECKING:
    from pi_context.model.protocol import (
        CacheMode,
        Model,
        ModelCost,
        ModelInfo,
        ModelRequest,
        RequestOptions,
        StreamDone,
        StreamEvent,
        SystemDelivery,
        TextDelta,
        ThinkingDelta,
        ToolCallDelta,
        ToolCallStart,
        complete,
        system_delivery_of,
    )
    from pi_context.model.thinking import (
        DEFAULT_THINKING_LEVEL,
        THINKING_LEVELS,
        clamp_thinking_level,
        supported_thinking_levels,
    )

__all__ = [
    "DEFAULT_THINKING_LEVEL",
    "THINKING_LEVELS",
    "CacheMode",
    "Model",
    "ModelCost",
    "ModelInfo",
    "ModelRequest",
    "RequestOptions",
    "StreamDone",
    "StreamEvent",
    "SystemDelivery",
    "TextDelta",
    "ThinkingDelta",
    "ToolCallDelta",
    "ToolCallStart",
    "clamp_thinking_level",
    "complete",
    "supported_thinking_levels",
    "system_delivery_of",
]

_HOMES = _lazy.homes(
    {
        "pi_context.model.protocol": (
            "CacheMode",
            "Model",
            "ModelCost",
            "ModelInfo",
            "ModelRequest",
            "RequestOptions",
            "StreamDone",
            "StreamEvent",
            "SystemDelivery",
            "TextDelta",
            "ThinkingDelta",
            "ToolCallDelta",
            "ToolCallStart",
            "complete",
            "system_delivery_of",
        ),
        "pi_context.model.thinking": (
            "DEFAULT_THINKING_LEVEL",
            "THINKING_LEVELS",
            "clamp_thinking_level",
            "supported_thinking_levels",
        ),
    }
)
"""Where each public name lives; imported from there when first used."""

__getattr__, __dir__ = _lazy.hooks(globals(), _HOMES, __all__)
