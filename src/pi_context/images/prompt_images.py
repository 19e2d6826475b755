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
from pi_context.messages import ImageContent, UserContent, image_block, text_block

__all__ = ["PreparedPrompt", "decode_image_data", "fit_read_result", "prepare_prompt_images"]

READ_NOTE_PREFIX = "Read image file ["
"""How the ``read`` tool's note on an image starts (``Read image file [<type>]``)."""


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


def fit_read_result(
    content: Sequence[UserContent],
    limits: ImageLimits = DEFAULT_IMAGE_LIMITS,
    *,
    resize: bool = True,
) -> list[UserContent]:
    """The ``read`` tool's result on an image, fitted as a prompt's images are (pi's read
    tool does the same): the image scaled to ``limits`` (only checked when ``resize`` is off),
    its note naming the type sent and followed by the scaling hint. An image that cannot be
    used leaves the note alone, with ``[Image omitted: <reason>]`` under it. Content without
    an image comes back unchanged."""
    if not any(block["type"] == "image" for block in content):
        return list(content)
    out: list[UserContent] = []
    notes: list[str] = []
    for block in content:
        if block["type"] != "image":
            out.append(block)
            continue
        try:
            fitted, hints = _prepared(block, limits, resize)
        except ImageError as exc:
            notes.append(f"[Image omitted: {exc}]")
            continue
        out.append(fitted)
        notes.extend(hints)
        for index, other in enumerate(out):
            if other["type"] == "text" and other["text"].startswith(READ_NOTE_PREFIX):
                rest = other["text"].split("]", 1)[1] if "]" in other["text"] else ""
                out[index] = text_block(f"{READ_NOTE_PREFIX}{fitted['mimeType']}]{rest}")
    if notes:
        first = next((i for i, b in enumerate(out) if b["type"] == "text"), None)
        if first is None:
            out.insert(0, text_block("\n".join(notes)))
        else:
            text = out[first]["text"]  # type: ignore[typeddict-item]
            out[first] = text_block(text + "\n" + "\n".join(notes))
    return out
