"""``images`` on ``prompt``/``steer``/``follow_up`` through ``pictx --mode rpc``: the shape is
checked (a failure response names the problem), images are fitted to the model's
``inputLimits`` before they are stored and sent, and a model without image input gets text."""

from __future__ import annotations

import base64
import io
import json
from typing import Any

import pytest
from PIL import Image

from tests.images.helpers import b64, image_bytes

from .conftest import RpcWorld, text_reply


def with_vision_model(rpc_world: RpcWorld) -> None:
    path = rpc_world.agent_dir / "models.json"
    models = json.loads(path.read_text())
    models["providers"]["replay"]["models"].append(
        {
            "id": "seer",
            "input": ["text", "image"],
            "contextWindow": 100000,
            "maxTokens": 1000,
            "inputLimits": {"images": {"resize": {"maxWidth": 100, "maxHeight": 100}}},
        }
    )
    path.write_text(json.dumps(models))


@pytest.mark.parametrize(
    ("images", "error"),
    [
        ({"type": "image"}, '"images" must be a list of {type: "image", data, mimeType}'),
        (
            [{"type": "image", "data": "AAAA"}],
            'images[0]: expected {type: "image", data, mimeType}',
        ),
        (
            [{"type": "image", "data": "@@", "mimeType": "image/png"}],
            "images[0]: data is not base64",
        ),
    ],
)
def test_bad_images_get_a_failure_response(rpc_world: RpcWorld, images: Any, error: str) -> None:
    rpc = rpc_world.spawn()
    for kind in ("prompt", "steer", "follow_up"):
        response = rpc.call({"id": kind, "type": kind, "message": "x", "images": images})
        assert (response["success"], response["error"]) == (False, error)
    assert rpc_world.server.requests == []


def test_an_image_is_fitted_stored_and_sent(rpc_world: RpcWorld) -> None:
    with_vision_model(rpc_world)
    rpc_world.server.add(text_reply("A red bar."))
    rpc = rpc_world.spawn("--model", "replay/seer")
    image = {
        "type": "image",
        "data": b64(image_bytes("PNG", size=(300, 100))),
        "mimeType": "image/png",
    }
    response = rpc.call({"id": "p", "type": "prompt", "message": "What?", "images": [image]})
    assert response["success"], response
    rpc.until_type("agent_settled")
    sent = rpc_world.server.requests[0].json()["messages"][-1]
    assert sent["role"] == "user"
    text, part = sent["content"]
    assert text["text"].startswith("What?\n\n[Image scaled from 300x100 to 100x33 pixels")
    url = part["image_url"]["url"]
    assert url.startswith("data:image/png;base64,")
    with Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))) as sent_image:
        assert sent_image.size == (100, 33)
    assert rpc.close() == 0
    (session,) = rpc_world.sessions()
    entries = [json.loads(line) for line in session.read_text().splitlines()]
    stored = next(e["message"] for e in entries if e.get("message", {}).get("role") == "user")
    assert stored["content"][1] == {
        "type": "image",
        "data": url.split(",", 1)[1],
        "mimeType": "image/png",
    }


def test_a_model_without_image_input_gets_a_note(rpc_world: RpcWorld) -> None:
    rpc_world.server.add(text_reply("I cannot see it."))
    rpc = rpc_world.spawn()
    image = {"type": "image", "data": b64(image_bytes("PNG")), "mimeType": "image/png"}
    rpc.call({"id": "p", "type": "prompt", "message": "What?", "images": [image]})
    rpc.until_type("agent_settled")
    sent = rpc_world.server.requests[0].json()["messages"][-1]
    assert sent == {
        "role": "user",
        "content": [
            {"type": "text", "text": "What?"},
            {"type": "text", "text": "(image omitted: model does not support images)"},
        ],
    }
