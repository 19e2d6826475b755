"""The scripted-model replies file (a testing aid of the CLI)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pi_context.cli.app.scripted import load_scripted_model, scripted_spec
from pi_context.errors import ResourceError
from pi_context.model import ModelRequest, complete


async def test_replies_play_in_order_then_the_script_is_exhausted(tmp_path: Path) -> None:
    file = tmp_path / "r.json"
    file.write_text(
        json.dumps(
            [
                "plain",
                {
                    "text": "t",
                    "toolCalls": [{"name": "bash", "arguments": {"command": "ls"}}],
                    "usage": {"input": 5},
                },
                {"error": "down", "errorKind": "transient"},
            ]
        )
    )
    model = load_scripted_model(file)
    assert model.info.provider == "scripted"
    assert model.info.id == "r"
    request = ModelRequest(messages=[])
    first = await complete(model, request)
    assert first.message["content"] == [{"type": "text", "text": "plain"}]
    second = await complete(model, request)
    assert second.message["stopReason"] == "toolUse"
    assert second.message["usage"]["input"] == 5
    third = await complete(model, request)
    assert third.error is not None
    assert third.error.kind == "transient"
    fourth = await complete(model, request)
    assert fourth.message["content"] == [{"type": "text", "text": "(script exhausted)"}]


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("{}", "must be a JSON list"),
        ("[1]", "reply 1: a reply must be a string or an object"),
        ('[{"toolCalls": [{"arguments": {}}]}]', "toolCalls must be"),
        ('[{"error": "x", "errorKind": "weird"}]', "errorKind must be one of"),
        ("[", "not valid JSON"),
    ],
)
def test_bad_files_name_the_problem(tmp_path: Path, content: str, problem: str) -> None:
    file = tmp_path / "bad.json"
    file.write_text(content)
    with pytest.raises(ResourceError, match=problem):
        load_scripted_model(file)


def test_spec_from_flag_or_environment() -> None:
    assert scripted_spec("scripted:/x/r.json", {}) == Path("/x/r.json")
    assert scripted_spec("anthropic/claude", {"PICTX_SCRIPTED_MODEL": "/y.json"}) is None
    assert scripted_spec(None, {"PICTX_SCRIPTED_MODEL": "/y.json"}) == Path("/y.json")
    assert scripted_spec(None, {}) is None
