"""A prompt's images made ready for the model (pi's image normalization before a run).

Each image is decoded and fitted to the model's limits; one that is unusable (bad base64, not
an image, truncated, too large to decode) is dropped, and the prompt text says so, as do the
hints of images that were scaled: ``<text>\\n\\n<one line per note>``, pi's form.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from dataclasses import dataclass

from pi_context.errors import ImageError
from pi_context.images.fitting import MAX_SOURCE_BYTES, base64_size, fit_image
from pi_context.images.limits import DEFAULT_IMAGE_LIMITS, ImageLimits
from pi_context.images.sniff import SNIFF_BYTES, sniff_image_mime
from pi_context.messages import ImageContent, image_block

__all__ = ["PreparedPrompt", "decode_image_data", "prepare_prompt_images"]


@dataclass(frozen=True, slots=True)
class PreparedPrompt:
    """The prompt text (with notes appended) and the images to attach."""

    text: str
    images: tuple[ImageContent, ...]


def decode_image_data(data: object) -> bytes:
    """The bytes of an image block's base64 ``data``, bounded; :class:`ImageError` otherwise."""
    if not isinstance(data, str):
        raise ImageError("image data is not a base64 string")
    if len(data) > base64_size(MAX_SOURCE_BYTES):
        raise ImageError(f"image data is over the {MAX_SOURCE_BYTES >> 20} MiB pictx decodes")
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ImageError("image data is not valid base64") from exc


def _prepared(
    image: ImageContent, limits: ImageLimits, resize: bool
) -> tuple[ImageContent, tuple[str, ...]]:
    raw = decode_image_data(image.get("data"))
    if not resize:
        mime = sniff_image_mime(raw[:SNIFF_BYTES])
        if mime is None:
            raise ImageError("not a PNG, JPEG, GIF, WebP or BMP image")
        return (image if mime == image.get("mimeType") else image_block(image["data"], mime)), ()
    fitted = fit_image(raw, limits)
    if fitted.data is raw and fitted.mime == image.get("mimeType"):
        return image, fitted.hints  # stored exactly as given
    encoded = image["data"] if fitted.data is raw else base64.b64encode(fitted.data).decode("ascii")
    return image_block(encoded, fitted.mime), fitted.hints


def prepare_prompt_images(
    text: str,
    images: Sequence[ImageContent],
    limits: ImageLimits = DEFAULT_IMAGE_LIMITS,
    *,
    resize: bool = True,
) -> PreparedPrompt:
    """Fit every image to ``limits`` (only check its type when ``resize`` is off, pi's
    ``images.autoResize: false``); see the module docstring for what happens to the rest."""
    kept: list[ImageContent] = []
    notes: list[str] = []
    for number, image in enumerate(images, 1):
        try:
            block, hints = _prepared(image, limits, resize)
        except ImageError as exc:
            notes.append(f"[Image {number} was not attached: {exc}]")
            continue
        kept.append(block)
        notes.extend(hints)
    if notes:
        text = f"{text}\n\n" + "\n".join(notes)
    return PreparedPrompt(text, tuple(kept))
