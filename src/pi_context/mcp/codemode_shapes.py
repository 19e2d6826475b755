"""What a tool resolves to in a codemode script, as the declarations' suffix says it.

An MCP tool resolves to its whole result, ``{ content, structuredContent?, isError? }``; when
the server declares an object output schema, its fields are named one level deep (``?`` for
optional ones, ``name: <JSON>`` for constants), so the model can use the structured fields
without a first call to look at them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

__all__ = ["mcp_shape"]

_MCP_SHAPE: Final = "`{ content, structuredContent?, isError? }`"


def mcp_shape(output_schema: Any) -> str:
    """The shape of an MCP tool's result, with its structured fields one level deep."""
    if not isinstance(output_schema, Mapping) or output_schema.get("type") != "object":
        return _MCP_SHAPE
    props = output_schema.get("properties")
    if not isinstance(props, Mapping) or not props:
        return _MCP_SHAPE
    required = set(output_schema.get("required") or ())
    fields = []
    for name, sub in props.items():
        if isinstance(sub, Mapping) and "const" in sub:
            fields.append(f"{name}: {json.dumps(sub['const'])}")
        else:
            fields.append(name if name in required else f"{name}?")
    return f"`{{ content, structuredContent?: {{ {', '.join(fields)} }}, isError? }}`"
