"""The images of a user prompt fitted to the current model before the prompt is stored.

pi normalizes a prompt's images as part of run preparation: each is scaled to the model's
``inputLimits.images.resize`` (setting ``images.autoResize``, on by default), an unusable one
is dropped with a note in the prompt text. The session stores the fitted images, so what is
on disk is exactly what was sent.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pi_context.messages import ImageContent

    from ._state import AgentState

__all__ = ["auto_resize_enabled", "prepare_images"]


def auto_resize_enabled(settings: object) -> bool:
    """Setting ``images.autoResize`` (default true; only an explicit ``false`` turns it off)."""
    images = settings.get("images") if isinstance(settings, dict) else None
    return not (isinstance(images, dict) and images.get("autoResize") is False)


def prepare_images(
    state: AgentState, text: str, images: Sequence[ImageContent]
) -> tuple[str, tuple[ImageContent, ...]]:
    """``(text, images)`` ready for the current model (see the module docstring)."""
    if not images:
        return text, ()
    from pi_context.images import DEFAULT_IMAGE_LIMITS, image_limits_from, prepare_prompt_images

    model = state.model
    limits = image_limits_from(model.info.input_limits) if model is not None else None
    prepared = prepare_prompt_images(
        text,
        images,
        limits or DEFAULT_IMAGE_LIMITS,
        resize=auto_resize_enabled(state.settings_data),
    )
    return prepared.text, prepared.images
