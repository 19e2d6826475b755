"""The ``read`` tool's images go through the same fitting as a prompt's images (pi's read
tool resizes to the model's limits unless ``images.autoResize`` is false)."""

from __future__ import annotations

import base64
import io
from pathlib import Path
from typing import Any

from PIL import Image

from pi_context.images import fit_read_result
from pi_context.images.limits import ImageLimits
from pi_context.messages import UserContent, image_block, text_block
from pi_context.testing import ScriptedModel, reply
from tests.agent.conftest import MakeSession
from tests.images.helpers import b64, image_bytes


def _tool_result(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    found = [m for m in messages if m.get("role") == "toolResult"]
    assert len(found) == 1
    content: list[dict[str, Any]] = found[0]["content"]
    return content


def _size(block: dict[str, Any]) -> tuple[int, int]:
    with Image.open(io.BytesIO(base64.b64decode(block["data"]))) as image:
        return image.size


async def test_a_large_image_read_by_the_model_is_scaled(
    make_session: MakeSession, project_dir: Path
) -> None:
    (project_dir / "wide.png").write_bytes(image_bytes("PNG", (3000, 300)))
    model = ScriptedModel([reply(tool_calls=[("read", {"path": "wide.png"})]), reply("seen")])
    session = await make_session(model)
    await session.run("look")
    content = _tool_result([dict(m) for m in session.session.messages()])
    note, image = content
    assert image["type"] == "image"
    assert _size(image) == (2000, 200)
    assert note["text"].startswith("Read image file [image/png]\n[Image scaled from 3000x300 to")


async def test_auto_resize_off_sends_the_file_as_it_is(
    make_session: MakeSession, project_dir: Path
) -> None:
    data = image_bytes("PNG", (3000, 300))
    (project_dir / "wide.png").write_bytes(data)
    model = ScriptedModel([reply(tool_calls=[("read", {"path": "wide.png"})]), reply("seen")])
    session = await make_session(model, settings={"images": {"autoResize": False}})
    await session.run("look")
    content = _tool_result([dict(m) for m in session.session.messages()])
    assert content[1]["data"] == b64(data)
    assert content[0]["text"] == "Read image file [image/png]"


def test_an_image_that_fits_is_kept_byte_for_byte() -> None:
    data = b64(image_bytes("PNG", (40, 30)))
    content: list[UserContent] = [
        text_block("Read image file [image/png]"),
        image_block(data, "image/png"),
    ]
    assert fit_read_result(content) == content


def test_the_model_limits_apply_and_an_unusable_image_is_omitted() -> None:
    data = b64(image_bytes("JPEG", (400, 100)))
    content: list[UserContent] = [
        text_block("Read image file [image/jpeg]"),
        image_block(data, "image/jpeg"),
    ]
    fitted: list[Any] = fit_read_result(content, ImageLimits(max_width=100, max_height=100))
    assert fitted[0]["text"].startswith("Read image file [image/jpeg]\n[Image scaled from 400x100")
    assert _size(dict(fitted[1])) == (100, 25)
    truncated = b64(image_bytes("PNG", (50, 50))[:60])
    broken: list[UserContent] = [
        text_block("Read image file [image/png]"),
        image_block(truncated, "image/png"),
    ]
    (note,) = fit_read_result(broken)
    assert note["type"] == "text"
    assert note.get("text", "").startswith("Read image file [image/png]\n[Image omitted: ")
