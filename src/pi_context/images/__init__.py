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
  cannot be used is dropped and said so in the prompt text; :func:`fit_read_result` does the
  same to the ``read`` tool's result on an image.
"""

from pi_context import _lazy

__getattr__, __dir__ = _lazy.attach_stub(__name__, __file__)
