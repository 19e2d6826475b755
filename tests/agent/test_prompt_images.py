"""A prompt's images are fitted to the current model before they are stored and sent, as pi's
run preparation does; the model's ``inputLimits`` and setting ``images.autoResize`` decide."""

from __future__ import annotations

import base64
import dataclasses
import io
from typing import Any, cast

from PIL import Image

from pi_context.agent.session import AgentSession
from pi_context.messages import image_block
from pi_context.testing import ScriptedModel, reply
from tests.agent.conftest import MakeSession
from tests.images.helpers import b64, image_bytes


def model(**info: Any) -> ScriptedModel:
    m = ScriptedModel([reply("seen"), reply("more")])
    m.model_info = dataclasses.replace(m.model_info, images=True, **info)
    return m


def stored_users(sess: AgentSession) -> list[dict[str, Any]]:
    """The session's user messages as plain JSON objects (the tests read their blocks)."""
    return [cast(dict[str, Any], e.message) for e in sess.session.entries if e.role == "user"]


def size_of(block: Any) -> tuple[int, int]:
    with Image.open(io.BytesIO(base64.b64decode(block["data"]))) as image:
        return image.size


async def test_a_large_image_is_stored_and_sent_scaled(make_session: MakeSession) -> None:
    m = model(input_limits={"images": {"resize": {"maxWidth": 500, "maxHeight": 500}}})
    sess = await make_session(m)
    big = image_block(b64(image_bytes("PNG", size=(1000, 250))), "image/png")
    await sess.run("what is it?", images=[big])
    stored = stored_users(sess)[0]
    text, image = stored["content"]
    assert text["text"].startswith("what is it?\n\n[Image scaled from 1000x250 to 500x125")
    assert size_of(image) == (500, 125)
    sent = cast(
        dict[str, Any], [msg for msg in m.requests[0].messages if msg["role"] == "user"][-1]
    )
    assert sent["content"] == stored["content"]


async def test_auto_resize_off_sends_the_image_as_given(make_session: MakeSession) -> None:
    sess = await make_session(model(), settings={"images": {"autoResize": False}})
    big = image_block(b64(image_bytes("PNG", size=(2500, 10))), "image/png")
    await sess.run("x", images=[big])
    stored = stored_users(sess)[0]
    assert stored["content"][1] == big


async def test_a_queued_message_drops_an_unusable_image_with_a_note(
    make_session: MakeSession,
) -> None:
    sess = await make_session(model())
    sess.steer("queued", images=[image_block(b64(b"GIF89a-but-broken"), "image/gif")])
    await sess.run("go")
    users = stored_users(sess)
    queued = next(u for u in users if u["content"][0]["text"].startswith("queued"))
    assert queued["content"][0]["text"].startswith(
        "queued\n\n[Image 1 was not attached: image/gif data cannot be decoded"
    )
    assert all(len(u["content"]) == 1 for u in users)
