"""The user message of a prompt, built the same way whether it starts a run or waits in a queue.

A prompt's text has its ``/skill:name`` command expanded, its images are fitted to the current
model (:mod:`.image_preparation`, which may add a note to the text), and the message is stamped
with the session's clock. ``before_agent_start`` handlers are given the same text and images.
"""

from __future__ import annotations

from collections.abc import Sequence

from msgspec import Struct

from pi_context.messages import AgentMessage, ImageContent, user_message
from pi_context.resources.skills import expand_skill_command

from ._state import AgentState
from .image_preparation import prepare_images

__all__ = ["UserPrompt", "user_prompt"]


class UserPrompt(Struct, frozen=True):
    """A prompt ready to send: its message, and the text and images that message holds."""

    message: AgentMessage
    text: str
    images: tuple[ImageContent, ...]


def user_prompt(state: AgentState, text: str, images: Sequence[ImageContent]) -> UserPrompt:
    """``text`` and ``images`` as the session sends them (see the module docstring)."""
    expanded = expand_skill_command(text, state.resources.skills)
    expanded, fitted = prepare_images(state, expanded, images)
    message = user_message(expanded, images=fitted, timestamp=state.now_ms())
    return UserPrompt(message, expanded, fitted)
