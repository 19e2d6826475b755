"""``auth.json`` as a user meets it: a stored key reaches the wire ahead of models.json, counts
for ``pictx models``, and a broken file is one warning, never a crash."""

from __future__ import annotations

import json
from pathlib import Path

from .replay_world import ReplayWorld, text_reply


def _auth(replay_world: ReplayWorld, records: object) -> Path:
    path = replay_world.agent_dir / "auth.json"
    path.write_text(json.dumps(records), encoding="utf-8")
    return path


def test_a_stored_key_is_sent_before_the_models_json_key(replay_world: ReplayWorld) -> None:
    _auth(replay_world, {"replay": {"type": "api_key", "key": "stored-key"}})
    replay_world.server.add(text_reply("Hi."), text_reply("Flag."))
    done = replay_world.run("-p", "--model", "replay/tiny", "hi")
    assert done.returncode == 0, done.stderr
    assert replay_world.server.requests[0].headers["authorization"] == "Bearer stored-key"
    flagged = replay_world.run("-p", "--model", "replay/tiny", "--api-key", "flag-key", "hi")
    assert flagged.returncode == 0, flagged.stderr
    assert replay_world.server.requests[1].headers["authorization"] == "Bearer flag-key"
    assert "stored-key" not in done.stdout + done.stderr + flagged.stdout + flagged.stderr


def test_models_lists_a_provider_whose_key_is_stored(replay_world: ReplayWorld) -> None:
    replay_world.env.pop("OPENAI_API_KEY", None)
    before = replay_world.run("models", "--all")
    assert "openai/" in before.stdout
    assert all("(no key)" in line for line in before.stdout.splitlines() if "openai/gpt" in line)
    _auth(replay_world, {"openai": {"type": "api_key", "key": "sk-stored"}})
    after = replay_world.run("models")
    assert after.returncode == 0, after.stderr
    lines = [line for line in after.stdout.splitlines() if line.startswith("openai/")]
    assert lines
    assert not any("(no key)" in line for line in lines)
    listed = replay_world.run("--list-models", "openai")
    assert listed.returncode == 0
    assert "openai" in listed.stdout


def test_a_broken_auth_file_is_a_warning_and_the_run_goes_on(replay_world: ReplayWorld) -> None:
    path = replay_world.agent_dir / "auth.json"
    path.write_text("{broken", encoding="utf-8")
    replay_world.server.add(text_reply("Still fine."))
    done = replay_world.run("-p", "--model", "replay/tiny", "hi")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Still fine.\n"
    assert f"pictx: warning: {path}: is not valid JSON" in done.stderr
    assert "Traceback" not in done.stderr
    assert path.read_text(encoding="utf-8") == "{broken"
