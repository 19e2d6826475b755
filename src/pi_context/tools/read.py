"""The ``read`` tool: a text file by line window, or an image as an image block.

Text is cut to 2000 lines / 50 KB (head truncation) and the result ends with a note telling
the model which ``offset`` continues. Images are recognized by their magic bytes, not their
extension, and sent base64-encoded.
"""

from __future__ import annotations

import base64
import os
from typing import Any, Final

from pi_context.errors import ToolError
from pi_context.messages import ImageContent, UserContent, text_block
from pi_context.tools.base import (
    CONSTRAINED_SAMPLING,
    ContextTool,
    ToolContext,
    ToolOutcome,
    os_error_message,
    read_path_variants,
    resolve_path,
)
from pi_context.tools.truncate import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_LINES,
    format_size,
    truncate_head,
)

__all__ = ["MAX_IMAGE_BASE64_BYTES", "ReadTool", "sniff_image_mime"]

MAX_IMAGE_BASE64_BYTES: Final = 4_718_592
"""4.5 MiB of base64: pi's default image size limit."""


def sniff_image_mime(head: bytes) -> str | None:
    """The MIME type of a supported image from its first bytes, or ``None``."""
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return None if b"acTL" in head[:4100] else "image/png"  # animated PNG is not an image here
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if head.startswith(b"RIFF") and head[8:12] == b"WEBP":
        return "image/webp"
    if head.startswith(b"BM"):
        return "image/bmp"
    return None


class ReadTool(ContextTool):
    """Read a text file (windowed, truncated) or an image."""

    name = "read"
    description = (
        "Read a file. Text files come back as text; images (jpg, png, gif, webp, bmp) are "
        f"attached as images. Text is cut at {DEFAULT_MAX_LINES} lines or "
        f"{DEFAULT_MAX_BYTES // 1024}KB, whichever comes first; page through longer files with "
        "offset and limit until you have what you need."
    )
    parameters: dict[str, Any] = {  # noqa: RUF012 - class-level schema, never mutated
        "type": "object",
        "required": ["path"],
        "properties": {
            "path": {
                "type": "string",
                "description": "File to read, relative to the cwd or absolute",
            },
            "offset": {"type": "number", "description": "First line to return (1-based)"},
            "limit": {"type": "number", "description": "How many lines to return at most"},
        },
    }
    prompt_snippet = "Read a file's contents (text or image)"
    prompt_guidelines = ("Use read to look at files instead of cat, head, tail or sed.",)
    constrained_sampling = CONSTRAINED_SAMPLING

    def __init__(self, *, images_unsupported_by: str | None = None) -> None:
        self.images_unsupported_by = images_unsupported_by
        """Set to a model id when the current model cannot take images (recorded in details)."""

    async def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        raw_path: str = arguments["path"]
        path = resolve_path(raw_path, ctx.cwd)
        if not path.exists():
            path = next((p for p in read_path_variants(path) if p.exists()), path)
        if not os.access(path, os.R_OK):
            err: OSError = FileNotFoundError(2, "No such file or directory", str(path))
            if path.exists():
                err = PermissionError(13, "Permission denied", str(path))
            raise ToolError(os_error_message(err, "access"))
        if path.is_dir():
            raise ToolError(
                os_error_message(IsADirectoryError(21, "Illegal operation on a directory"), "read")
            )
        data = path.read_bytes()
        mime = sniff_image_mime(data[:4100])
        if mime is not None:
            return self._image(data, mime)
        return _text_result(data.decode("utf-8", "replace"), raw_path, arguments)

    def _image(self, data: bytes, mime: str) -> ToolOutcome:
        encoded = base64.b64encode(data).decode("ascii")
        details = (
            {"imageUnsupportedByModel": self.images_unsupported_by}
            if self.images_unsupported_by
            else None
        )
        if len(encoded) > MAX_IMAGE_BASE64_BYTES:
            note = (
                f"Read image file [{mime}]\nImage is {format_size(len(encoded))} encoded, over the "
                f"{format_size(MAX_IMAGE_BASE64_BYTES)} limit; it was not attached."
            )
            return ToolOutcome([text_block(note)], details)
        image: ImageContent = {"type": "image", "data": encoded, "mimeType": mime}
        content: list[UserContent] = [text_block(f"Read image file [{mime}]"), image]
        return ToolOutcome(content, details)


def _as_int(value: Any) -> int | None:
    if value is None:
        return None
    return int(value)


def _text_result(text: str, raw_path: str, arguments: dict[str, Any]) -> ToolOutcome:
    lines = text.split("\n")
    total = len(lines)
    offset = _as_int(arguments.get("offset"))
    limit = _as_int(arguments.get("limit"))
    start = max(0, offset - 1) if offset else 0
    if start >= total:
        raise ToolError(f"Offset {offset} is beyond end of file ({total} lines total)")
    end = total if limit is None else min(total, start + max(0, limit))
    selected = lines[start:end]
    trunc = truncate_head("\n".join(selected))
    if trunc.first_line_exceeds_limit:
        n = start + 1
        size = format_size(len(selected[0].encode("utf-8", "surrogatepass")))
        note = (
            f"[Line {n} is {size}, exceeds {format_size(DEFAULT_MAX_BYTES)} limit. "
            f"Use bash: sed -n '{n}p' {raw_path} | head -c {DEFAULT_MAX_BYTES}]"
        )
        return ToolOutcome([text_block(note)], {"truncation": trunc.to_json()})
    if trunc.truncated:
        first = start + 1
        last = start + trunc.output_lines
        limit_note = (
            f" ({format_size(DEFAULT_MAX_BYTES)} limit)" if trunc.truncated_by == "bytes" else ""
        )
        body = (
            f"{trunc.content}\n\n[Showing lines {first}-{last} of {total}{limit_note}. "
            f"Use offset={last + 1} to continue.]"
        )
        return ToolOutcome([text_block(body)], {"truncation": trunc.to_json()})
    if end < total:
        rest = total - end
        body = f"{trunc.content}\n\n[{rest} more lines in file. Use offset={end + 1} to continue.]"
        return ToolOutcome([text_block(body)])
    return ToolOutcome([text_block(trunc.content)])
