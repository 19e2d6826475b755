"""Images the user attaches: recognizing them, checking them, fitting them to a model.

* :func:`sniff_image_mime` names a supported image type from its first bytes (never the file
  name), as pi does for ``@file`` arguments and the ``read`` tool.
* :func:`inspect_image` decodes an image under hard bounds (bytes, pixels) and reports its
  type and size, or raises :class:`~pi_context.errors.ImageError` with a one-line reason:
  truncated data, a decompression bomb and an unknown format all end there, never in a
  traceback or an unbounded allocation.
* :func:`fit_image` makes an image fit a model's :class:`ImageLimits` (pi's
  ``inputLimits.images.resize``: 2000x2000 pixels, 4.5 MiB of base64, JPEG quality 80 unless
  the model says otherwise), keeping the original bytes whenever they already fit.
* :func:`prepare_prompt_images` applies that to a prompt's images: what fits is attached, what
  cannot be used is dropped and said so in the prompt text.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pi_context import _lazy

if TYPE_CHECKING:
    from pi_context.images.fitting import (
        MAX_SOURCE_BYTES,
        MAX_SOURCE_PIXELS,
        FittedImage,
        ImageFacts,
        fit_image,
        inspect_image,
    )
    from pi_context.images.limits import DEFAULT_IMAGE_LIMITS, ImageLimits, image_limits_from
    from pi_context.images.prompt_images import PreparedPrompt, prepare_prompt_images
    from pi_context.images.sniff import SNIFF_BYTES, WIRE_MIME_TYPES, sniff_image_mime

__all__ = [
    "DEFAULT_IMAGE_LIMITS",
    "MAX_SOURCE_BYTES",
    "MAX_SOURCE_PIXELS",
    "SNIFF_BYTES",
    "WIRE_MIME_TYPES",
    "FittedImage",
    "ImageFacts",
    "ImageLimits",
    "PreparedPrompt",
    "fit_image",
    "image_limits_from",
    "inspect_image",
    "prepare_prompt_images",
    "sniff_image_mime",
]

_HOMES = _lazy.homes(
    {
        "pi_context.images.fitting": (
            "MAX_SOURCE_BYTES",
            "MAX_SOURCE_PIXELS",
            "FittedImage",
            "ImageFacts",
            "fit_image",
            "inspect_image",
        ),
        "pi_context.images.limits": (
            "DEFAULT_IMAGE_LIMITS",
            "ImageLimits",
            "image_limits_from",
        ),
        "pi_context.images.prompt_images": (
            "PreparedPrompt",
            "prepare_prompt_images",
        ),
        "pi_context.images.sniff": (
            "SNIFF_BYTES",
            "WIRE_MIME_TYPES",
            "sniff_image_mime",
        ),
    }
)
"""Where each public name lives; imported from there when first used."""

__getattr__, __dir__ = _lazy.hooks(globals(), _HOMES, __all__)
