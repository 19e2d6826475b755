"""Real image bytes made with Pillow for the image tests."""

from __future__ import annotations

import base64
import io
import struct
import zlib

from PIL import Image

__all__ = ["b64", "image_bytes", "png_bomb"]


def image_bytes(
    fmt: str = "PNG", size: tuple[int, int] = (8, 6), color: tuple[int, ...] = (200, 30, 30)
) -> bytes:
    mode = "RGBA" if len(color) == 4 else "RGB"
    out = io.BytesIO()
    Image.new(mode, size, color).save(out, fmt)
    return out.getvalue()


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def png_bomb(width: int, height: int) -> bytes:
    """A valid PNG header claiming ``width`` x ``height`` RGB pixels with almost no data: what a
    decompression bomb looks like before its pixels are decoded (never allocated here)."""
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    data = zlib.compress(b"\0" * 64)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", data)
        + _chunk(b"IEND", b"")
    )
