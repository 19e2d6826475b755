"""Decoding images under hard bounds and fitting them to a model's limits (Pillow).

Every image from outside (a file, the clipboard, an RPC client) goes through
:func:`inspect_image` or :func:`fit_image`. Both refuse data over :data:`MAX_SOURCE_BYTES`
before decoding and images over :data:`MAX_SOURCE_PIXELS` after reading only the header, so
a decompression bomb never allocates its pixels; a truncated or corrupt file stops the decoder
with :class:`~pi_context.errors.ImageError`, never with a partial image or a traceback.
"""

from __future__ import annotations

import io
import math
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from pi_context.errors import ImageError
from pi_context.images.limits import DEFAULT_IMAGE_LIMITS, ImageLimits
from pi_context.images.sniff import SNIFF_BYTES, WIRE_MIME_TYPES, sniff_image_mime

if TYPE_CHECKING:  # Pillow is imported when an image is first decoded, not at startup
    from PIL.Image import Image as PILImage

__all__ = [
    "MAX_SOURCE_BYTES",
    "MAX_SOURCE_PIXELS",
    "FittedImage",
    "ImageFacts",
    "base64_size",
    "fit_image",
    "inspect_image",
]

MAX_SOURCE_BYTES: Final = 64 << 20
"""The largest encoded image pictx agrees to decode (64 MiB)."""

MAX_SOURCE_PIXELS: Final = 50_000_000
"""The most pixels pictx agrees to decode (about 7000x7000; at most ~200 MB as RGBA)."""

_FORMATS: Final = {
    "image/png": "PNG",
    "image/jpeg": "JPEG",
    "image/gif": "GIF",
    "image/webp": "WEBP",
    "image/bmp": "BMP",
}
_SHRINK: Final = 0.75
"""Each further attempt to fit the byte limit scales the image by this much."""
_ATTEMPTS: Final = 10


@dataclass(frozen=True, slots=True)
class ImageFacts:
    """What decoding an image found: its type and size in pixels."""

    mime: str
    width: int
    height: int


@dataclass(frozen=True, slots=True)
class FittedImage:
    """An image that fits a model's limits: its bytes (the original ones when they already
    fit), its type, its size, and the hint lines for the model when it was scaled."""

    data: bytes
    mime: str
    width: int
    height: int
    hints: tuple[str, ...] = ()


def base64_size(n: int) -> int:
    """The length of ``n`` bytes in base64."""
    return 4 * math.ceil(n / 3)


def _mib(n: int) -> str:
    return f"{n / (1 << 20):.1f} MiB"


def _open(data: bytes) -> tuple[PILImage, str]:
    """The image, header read but pixels not decoded, after the byte, type and pixel checks."""
    if len(data) > MAX_SOURCE_BYTES:
        raise ImageError(
            f"image is {_mib(len(data))}, over the {_mib(MAX_SOURCE_BYTES)} pictx decodes"
        )
    mime = sniff_image_mime(data[:SNIFF_BYTES])
    if mime is None:
        raise ImageError("not a PNG, JPEG, GIF, WebP or BMP image")
    from PIL import Image, UnidentifiedImageError

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            image = Image.open(io.BytesIO(data), formats=[_FORMATS[mime]])
    except Image.DecompressionBombError as exc:
        raise ImageError(
            f"image is over the {MAX_SOURCE_PIXELS // 1_000_000} megapixels pictx decodes"
        ) from exc
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError, EOFError) as exc:
        raise ImageError(f"{mime} data cannot be decoded: {exc}") from exc
    width, height = image.size
    if width <= 0 or height <= 0:
        raise ImageError(f"{mime} image has no pixels ({width}x{height})")
    if width * height > MAX_SOURCE_PIXELS:
        raise ImageError(
            f"image is {width}x{height} pixels, over the "
            f"{MAX_SOURCE_PIXELS // 1_000_000} megapixels pictx decodes"
        )
    return image, mime


def _load(image: PILImage, mime: str) -> None:
    from PIL import Image

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            image.load()
    except (OSError, SyntaxError, ValueError, EOFError, Image.DecompressionBombError) as exc:
        raise ImageError(f"{mime} data is truncated or corrupt: {exc}") from exc


def inspect_image(data: bytes) -> ImageFacts:
    """Decode ``data`` completely (bounded, see the module docstring) and report what it is.

    Raises :class:`ImageError` when it is not a supported image or cannot be decoded.
    """
    image, mime = _open(data)
    with image:
        width, height = image.size
        _load(image, mime)
    return ImageFacts(mime, width, height)


def _fits(width: int, height: int, size: int, mime: str, limits: ImageLimits) -> bool:
    return (
        width <= limits.max_width
        and height <= limits.max_height
        and base64_size(size) <= limits.max_base64_bytes
        and mime in WIRE_MIME_TYPES
    )


def _encode(frame: PILImage, fmt: str, quality: int) -> bytes:
    from PIL import Image

    out = io.BytesIO()
    if fmt == "JPEG":
        if frame.mode in ("RGBA", "LA") or "transparency" in frame.info:
            rgba = frame.convert("RGBA")
            flat = Image.new("RGB", rgba.size, (255, 255, 255))
            flat.paste(rgba, mask=rgba.getchannel("A"))
            frame = flat
        elif frame.mode != "RGB":
            frame = frame.convert("RGB")
        frame.save(out, "JPEG", quality=quality)
    else:
        frame.save(out, "PNG")
    return out.getvalue()


def _first_frame(image: PILImage) -> PILImage:
    """Frame one in a mode both PNG and JPEG can take (alpha kept when there is some)."""
    if image.mode in ("RGB", "RGBA", "L", "LA"):
        return image
    has_alpha = image.mode in ("PA", "RGBa", "La") or "transparency" in image.info
    return image.convert("RGBA" if has_alpha else "RGB")


def fit_image(data: bytes, limits: ImageLimits = DEFAULT_IMAGE_LIMITS) -> FittedImage:
    """``data`` made to fit ``limits``: unchanged when it already fits (same bytes, so the
    session stores what the user gave), else scaled down keeping its aspect ratio and
    re-encoded (PNG, or JPEG at the limits' quality when that is what fits; JPEG sources try
    JPEG first). An animated GIF or WebP that must be scaled keeps its first frame.

    Raises :class:`ImageError` when the image is unusable or cannot be made small enough.
    """
    image, mime = _open(data)
    with image:
        width, height = image.size
        if _fits(width, height, len(data), mime, limits):
            _load(image, mime)  # a truncated file is refused even when it needs no resizing
            return FittedImage(data, mime, width, height)
        scale = min(1.0, limits.max_width / width, limits.max_height / height)
        if mime == "image/jpeg" and scale < 1.0:
            # decode at a reduced scale (never below the target): far less memory and time
            image.draft("RGB", (max(1, int(width * scale)), max(1, int(height * scale))))
        _load(image, mime)
        try:
            fitted = _shrink(image, mime, width, height, scale, limits)
        except (OSError, ValueError) as exc:  # a mode or palette no encoder takes
            raise ImageError(f"{mime} image cannot be re-encoded: {exc}") from exc
    if fitted is not None:
        return fitted
    raise ImageError(
        f"{width}x{height} {mime} image cannot be made smaller than "
        f"{_mib(limits.max_base64_bytes)} of base64"
    )


def _shrink(
    image: PILImage, mime: str, width: int, height: int, scale: float, limits: ImageLimits
) -> FittedImage | None:
    """The first scaled encoding under the byte limit, or ``None`` after every attempt."""
    from PIL import Image

    frame = _first_frame(image)
    formats = ("JPEG", "PNG") if mime == "image/jpeg" else ("PNG", "JPEG")
    for _ in range(_ATTEMPTS):
        size = (max(1, round(width * scale)), max(1, round(height * scale)))
        scaled = frame if size == frame.size else frame.resize(size, Image.Resampling.LANCZOS)
        for fmt in formats:
            encoded = _encode(scaled, fmt, limits.jpeg_quality)
            if base64_size(len(encoded)) <= limits.max_base64_bytes:
                return FittedImage(
                    encoded,
                    "image/jpeg" if fmt == "JPEG" else "image/png",
                    size[0],
                    size[1],
                    _hints(width, height, size),
                )
        scale *= _SHRINK
    return None


def _hints(width: int, height: int, size: tuple[int, int]) -> tuple[str, ...]:
    if size == (width, height):
        return ()
    factor = width / size[0]
    return (
        f"[Image scaled from {width}x{height} to {size[0]}x{size[1]} pixels to fit the model's "
        f"limits; multiply coordinates in it by {factor:.2f} to map them to the original.]",
    )
