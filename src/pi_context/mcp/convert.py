"""An MCP ``CallToolResult`` (or resource contents) as content blocks for the model.

Text stays text; images stay images; audio is named, not sent; resource links become a line
saying how to read them; embedded text resources and text-like blobs become text; other
blobs are saved to a private temporary file and named. When all text together exceeds 20 KB
(UTF-8), the model gets the first and last 10 KB with the count of what was cut between them,
and the full text is saved to a temporary file it can read in pieces — a server returning a
megabyte of JSON must not flood the context.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import os
import re
import secrets
import tempfile
from collections.abc import Mapping, Sequence
from typing import Any, Final
from urllib.parse import urlparse

from pi_context.messages import UserContent, text_block

__all__ = [
    "OUTPUT_LIMIT_BYTES",
    "convert_blocks",
    "format_size",
    "limit_output",
    "save_private_file",
]

OUTPUT_LIMIT_BYTES: Final = 20480
_HALF: Final = OUTPUT_LIMIT_BYTES // 2
_EXTENSION: Final = re.compile(r"\.([A-Za-z0-9]{1,8})$")


def format_size(size: int) -> str:
    if size < 1024:
        return f"{size}B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f}KB"
    return f"{size / (1024 * 1024):.1f}MB"


def _text_like(mime: str) -> bool:
    base = mime.split(";", 1)[0].strip().lower()
    return (
        base.startswith("text/") or base == "application/json" or base.endswith(("+json", "+xml"))
    )


def save_private_file(data: bytes, extension: str) -> str:
    """``data`` in ``<tmpdir>/pi-mcp-<16 hex><extension>``, readable by the user only."""
    path = os.path.join(tempfile.gettempdir(), f"pi-mcp-{secrets.token_hex(8)}{extension}")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    return path


def _blob_extension(uri: str) -> str:
    try:
        path = urlparse(uri).path
    except ValueError:
        path = ""
    match = _EXTENSION.search(path)
    return f".{match.group(1)}" if match else ".bin"


def _resource_block(resource: Mapping[str, Any]) -> UserContent:
    uri = str(resource.get("uri", ""))
    mime = resource.get("mimeType")
    if isinstance(resource.get("text"), str):
        return text_block(resource["text"])
    blob = resource.get("blob")
    try:
        data = base64.b64decode(blob, validate=False) if isinstance(blob, str) else b""
    except (binascii.Error, ValueError):
        data = b""
    if isinstance(mime, str) and mime.lower().startswith("image/"):
        return {"type": "image", "data": str(blob or ""), "mimeType": mime}
    if isinstance(mime, str) and _text_like(mime):
        return text_block(data.decode("utf-8", "replace"))
    kind = mime if isinstance(mime, str) and mime else "unknown type"
    try:
        path = save_private_file(data, _blob_extension(uri))
    except OSError as exc:
        reason = exc.strerror or str(exc)
        return text_block(
            f"[Binary resource {uri} ({kind}, {format_size(len(data))}) could not be saved: {reason}]"
        )
    return text_block(f"[Binary resource {uri} ({kind}, {format_size(len(data))}) saved to {path}]")


def _link_text(block: Mapping[str, Any], server: str, resources_reachable: bool) -> str:
    title = block.get("title") or block.get("name") or ""
    parts = [p for p in (block.get("mimeType"), None) if p]
    size = block.get("size")
    if isinstance(size, int) and not isinstance(size, bool):
        parts.append(format_size(size))
    text = f'[Resource {block.get("uri", "")} "{title}"'
    if parts:
        text += f" ({', '.join(str(p) for p in parts)})"
    if block.get("description"):
        text += f": {block['description']}"
    if resources_reachable:
        text += f'. Read it with read_mcp_resource (server "{server}")'
    return text + "]"


def convert_blocks(
    blocks: Sequence[Mapping[str, Any]], server: str, *, resources_reachable: bool = False
) -> list[UserContent]:
    """Each MCP content block as the model gets it, in order."""
    out: list[UserContent] = []
    for block in blocks:
        kind = block.get("type")
        if kind == "text":
            out.append(text_block(str(block.get("text", ""))))
        elif kind == "image":
            out.append(
                {
                    "type": "image",
                    "data": str(block.get("data", "")),
                    "mimeType": str(block.get("mimeType", "")),
                }
            )
        elif kind == "audio":
            out.append(text_block(f"[audio {block.get('mimeType', '')} omitted]"))
        elif kind == "resource_link":
            out.append(text_block(_link_text(block, server, resources_reachable)))
        elif kind == "resource" and isinstance(block.get("resource"), Mapping):
            out.append(_resource_block(block["resource"]))
        else:
            out.append(text_block(f"[unsupported MCP content {kind}]"))
    return out


def _cut_head(data: bytes, size: int) -> bytes:
    """The first ``size`` bytes, shortened to a character boundary."""
    return data[:size].decode("utf-8", "ignore").encode()


def _cut_tail(data: bytes, size: int) -> bytes:
    return data[-size:].decode("utf-8", "ignore").encode() if size else b""


def limit_output(content: Sequence[UserContent]) -> tuple[list[UserContent], str | None]:
    """``content`` within the 20 KB limit, and the path of the full text when it was cut."""
    texts = [b["text"] for b in content if b["type"] == "text"]
    joined = "\n".join(texts)
    data = joined.encode("utf-8", "surrogatepass")
    if len(data) <= OUTPUT_LIMIT_BYTES:
        return list(content), None
    head, tail = _cut_head(data, _HALF), _cut_tail(data, _HALF)
    head_text = head.decode("utf-8", "replace")
    tail_text = tail.decode("utf-8", "replace")
    removed = len(joined) - len(head_text) - len(tail_text)
    lines = joined.count("\n") + (0 if joined.endswith("\n") else 1)
    try:
        path: str | None = save_private_file(data, ".txt")
        saved = f"[Full output: {path} (read it with offset/limit)]"
    except OSError as exc:
        path = None
        saved = f"[Could not save the full output: {exc.strerror or exc}]"
    text = (
        f"Warning: truncated output (original token count: {math.ceil(len(data) / 4)})\n"
        f"Total output lines: {lines}\n\n"
        f"{head_text}…{removed} chars truncated…{tail_text}\n\n{saved}"
    )
    images = [b for b in content if b["type"] == "image"]
    return [text_block(text), *images], path


def structured_text(value: Any) -> str:
    """``JSON.stringify(value, null, 2)``."""
    return json.dumps(value, indent=2, ensure_ascii=False)
