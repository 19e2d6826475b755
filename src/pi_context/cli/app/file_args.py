"""``@file`` arguments: files inlined into the first prompt, images attached to it (pi's rule).

* A text file becomes ``<file name="<abs>">\\n<content, BOM stripped>\\n</file>\\n``; an empty
  file contributes nothing; a missing one is ``File not found: <abs>`` and an unreadable one
  ``Could not read file <abs>: <why>`` (both stop the run, exit 1).
* An image (recognized by its content, never its name) is attached to the first prompt and
  contributes ``<file name="<abs>"></file>\\n``. It is decoded here under pictx's bounds but not
  resized: the session fits it to the selected model when the prompt is sent. An image that
  cannot be decoded contributes ``<file name="<abs>"><why></file>\\n`` and is not attached.
* First prompt = stdin + file blocks + first message, with no separators; the other messages
  follow as separate prompts.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Sequence
from pathlib import Path

from msgspec import Struct

from pi_context.errors import ImageError, ResourceError
from pi_context.images.sniff import SNIFF_BYTES, sniff_image_mime
from pi_context.messages import ImageContent, image_block
from pi_context.resources import paths

__all__ = ["PromptPlan", "plan_prompts"]


class PromptPlan(Struct, frozen=True):
    """The prompts to send in order, and the images attached to the first one."""

    prompts: list[str]
    images: tuple[ImageContent, ...] = ()


def _read(target: Path, shown: str) -> bytes:
    """The file's bytes, at most one past ``MAX_SOURCE_BYTES`` for an image."""
    try:
        with target.open("rb") as file:
            head = file.read(SNIFF_BYTES)
            if sniff_image_mime(head) is not None:
                from pi_context.images.fitting import MAX_SOURCE_BYTES  # with an image only

                return head + file.read(MAX_SOURCE_BYTES + 1 - len(head))  # bounded
            return head + file.read()
    except OSError as exc:
        raise ResourceError(f"Could not read file {shown}: {exc.strerror or exc}") from exc


def _file_part(arg: str, cwd: str) -> tuple[str, ImageContent | None]:
    raw = paths.expand_home(arg[1:])
    target = Path(raw if os.path.isabs(raw) else os.path.join(cwd, raw))
    shown = os.path.abspath(target)
    if not target.is_file():
        raise ResourceError(f"File not found: {shown}")
    data = _read(target, shown)
    if sniff_image_mime(data[:SNIFF_BYTES]) is None:
        text = data.decode("utf-8", errors="replace").removeprefix("\ufeff")
        return (f'<file name="{shown}">\n{text}\n</file>\n' if text else ""), None
    from pi_context.images.fitting import inspect_image  # the decoder loads for an image only

    try:
        facts = inspect_image(data)
    except ImageError as exc:
        return f'<file name="{shown}">{exc}</file>\n', None
    image = image_block(base64.b64encode(data).decode("ascii"), facts.mime)
    return f'<file name="{shown}"></file>\n', image


def plan_prompts(args: Sequence[str], stdin_text: str | None, cwd: str) -> PromptPlan:
    """The prompts of a command line (see the module docstring)."""
    files: list[str] = []
    images: list[ImageContent] = []
    for arg in args:
        if arg.startswith("@"):
            text, image = _file_part(arg, cwd)
            files.append(text)
            if image is not None:
                images.append(image)
    messages = [a for a in args if not a.startswith("@")]
    head = (stdin_text or "") + "".join(files)
    if messages:
        return PromptPlan([head + messages[0], *messages[1:]], tuple(images))
    if head or images:
        return PromptPlan([head], tuple(images))
    return PromptPlan([])
