"""The size an image may have when it is sent to a model (pi's ``inputLimits.images.resize``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

__all__ = ["DEFAULT_IMAGE_LIMITS", "ImageLimits", "image_limits_from"]


@dataclass(frozen=True, slots=True)
class ImageLimits:
    """Largest width and height in pixels, largest base64 size in bytes, and the JPEG
    quality used when an image has to be re-encoded."""

    max_width: int = 2000
    max_height: int = 2000
    max_base64_bytes: int = 4_718_592
    jpeg_quality: int = 80


DEFAULT_IMAGE_LIMITS: Final = ImageLimits()
"""pi's defaults: 2000x2000 pixels, 4.5 MiB of base64, JPEG quality 80."""

_FIELDS: Final = {
    "maxWidth": ("max_width", 1, 100_000),
    "maxHeight": ("max_height", 1, 100_000),
    "maxBytes": ("max_base64_bytes", 1024, 1 << 30),
    "jpegQuality": ("jpeg_quality", 1, 95),
}


def image_limits_from(input_limits: Mapping[str, Any] | None) -> ImageLimits:
    """The limits a model's ``inputLimits`` object sets (``images.resize.maxWidth``,
    ``maxHeight``, ``maxBytes``, ``jpegQuality``); absent or out-of-range values keep the
    defaults, so a bad models.json entry can never make an image unsendable."""
    images = (input_limits or {}).get("images")
    resize = images.get("resize") if isinstance(images, Mapping) else None
    if not isinstance(resize, Mapping):
        return DEFAULT_IMAGE_LIMITS
    values: dict[str, int] = {}
    for key, (attr, low, high) in _FIELDS.items():
        value = resize.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool) and low <= value <= high:
            values[attr] = int(value)
    return ImageLimits(**values)
