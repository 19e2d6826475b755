"""The startup check of a custom OpenAI-compatible server's ``/models`` (real HTTP to a
127.0.0.1 replay server)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pi_context.cli.app import app
from tests.cli.helpers import PictxInProcess
from tests.providers.replay_server import ReplayServer, openai_sse, stream


@pytest.fixture(autouse=True)
def _fresh_warnings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(app, "_WARNED", set())


def _answer(text: str) -> list[bytes]:
    chunk = {
        "id": "c1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": "stop"}],
    }
    return openai_sse([chunk])


def _models_json(project_as_cwd: Path, url: str) -> None:
    agent = project_as_cwd.parent / "agent"
    agent.mkdir(exist_ok=True)
    models = {
        "providers": {
            "myserver": {
                "baseUrl": f"{url}/v1",
                "api": "openai-completions",
                "models": [{"id": "smollm2", "contextWindow": 8192}],
            }
        }
    }
    (agent / "models.json").write_text(json.dumps(models))


def test_a_model_the_server_does_not_list_is_warned_once(
    project_as_cwd: Path, pictx_in_process: PictxInProcess, server: ReplayServer
) -> None:
    _models_json(project_as_cwd, server.url)
    server.models = ["qwen2.5:7b"]
    server.replies.append(stream(_answer("hello")))
    run = pictx_in_process("--no-session", "-p", "--model", "myserver/smollm2", "hi")
    assert (run.code, run.out) == (0, "hello\n")
    assert run.err.count("does not list") == 1
    assert 'does not list the model "smollm2" (it serves: qwen2.5:7b)' in run.err
    assert [(r.method, r.path) for r in server.gets] == [("GET", "/v1/models")]
    assert [(r.method, r.path) for r in server.requests] == [("POST", "/v1/chat/completions")]


def test_a_listed_model_or_a_server_without_a_list_says_nothing(
    project_as_cwd: Path, pictx_in_process: PictxInProcess, server: ReplayServer
) -> None:
    _models_json(project_as_cwd, server.url)
    server.replies.append(stream(_answer("one")))
    server.replies.append(stream(_answer("two")))
    for expected, listed in (("one", ["smollm2"]), ("two", None)):
        server.models = listed  # the model among those listed; then a server without a list
        run = pictx_in_process("--no-session", "-p", "--model", "myserver/smollm2", "hi")
        assert (run.code, run.out) == (0, f"{expected}\n")
        assert "does not list" not in run.err
