"""Which image a byte string is, from its magic bytes (pi looks at the first 4100 bytes)."""

from __future__ import annotations

from typing import Final

__all__ = ["SNIFF_BYTES", "WIRE_MIME_TYPES", "sniff_image_mime"]

SNIFF_BYTES: Final = 4100
"""How many leading bytes decide the type."""

WIRE_MIME_TYPES: Final = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
"""The types every supported provider API accepts; others (BMP) are converted before sending."""


def sniff_image_mime(head: bytes) -> str | None:
    """The MIME type of a supported image from its first bytes, or ``None``.

    JPEG, non-animated PNG (an ``acTL`` chunk marks APNG, which is not taken), GIF87a/89a,
    RIFF WebP and BMP, as pi's ``read`` tool and ``@file`` arguments recognize them.
    """
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return None if b"acTL" in head[:SNIFF_BYTES] else "image/png"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if head.startswith(b"RIFF") and head[8:12] == b"WEBP":
        return "image/webp"
    if head.startswith(b"BM"):
        return "image/bmp"
    return None
