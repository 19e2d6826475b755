"""The agent's command-line flags: ``--provider``, ``--api-key``,
``--session-id``, ``--list-models``, ``--offline`` and a ``--model`` thinking suffix, run as a
user runs them, against a 127.0.0.1 replay server."""

from __future__ import annotations

import json

from pi_context.cli.commands.model_list import fuzzy_match, model_table, token_count
from pi_context.model import ModelInfo
from tests.cli.replay_world import ReplayWorld, text_reply


def test_list_models_prints_pi_s_table_of_the_models_with_a_key(replay_world: ReplayWorld) -> None:
    done = replay_world.run("--list-models", "replay")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "provider  model    context  max-out  thinking  images",
        "replay    thinker  200K     32K      yes       no    ",
        "replay    tiny     100K     1K       no        no    ",
    ]
    assert replay_world.server.requests == []
    missing = replay_world.run("--list-models", "zzz-nothing")
    assert missing.stdout == 'No models matching "zzz-nothing"\n'


def test_list_models_table_helpers() -> None:
    assert [token_count(n) for n in (512, 1000, 32768, 200_000, 1_000_000, 1_048_576)] == [
        "512",
        "1K",
        "32.8K",
        "200K",
        "1M",
        "1M",
    ]
    assert token_count(1_500_000) == "1.5M"
    assert fuzzy_match("rep thk", "replay thinker")
    assert not fuzzy_match("thinkerz", "replay thinker")
    info = ModelInfo(provider="b", id="x", api="a", context_window=1, max_tokens=1)
    assert model_table([info], "nothing") == []


def test_provider_and_api_key_need_a_model(replay_world: ReplayWorld) -> None:
    alone = replay_world.run("--provider", "replay", "-p", "hi")
    assert alone.returncode == 1
    assert alone.stderr.strip() == (
        "pictx: error: --provider requires --model (for example: --provider replay --model <pattern>)"
    )
    key = replay_world.run("--api-key", "k", "-p", "hi")
    assert key.returncode == 1
    assert "--api-key requires a model to be specified via --model, --provider/--model, " in (
        key.stderr
    )


def test_provider_narrows_the_lookup_and_api_key_reaches_the_wire(
    replay_world: ReplayWorld,
) -> None:
    replay_world.server.add(text_reply("Keyed."))
    done = replay_world.run(
        "-p", "--provider", "replay", "--model", "thinker", "--api-key", "cli-key", "hi"
    )
    assert done.returncode == 0, done.stderr
    request = replay_world.server.requests[0]
    assert request.json()["model"] == "thinker"
    headers = {k.lower(): v for k, v in request.headers.items()}
    assert headers["authorization"] == "Bearer cli-key"  # over models.json's test-key
    stored = (replay_world.agent_dir / "models.json").read_text(encoding="utf-8")
    assert "cli-key" not in stored


def test_model_thinking_suffix_counts_when_no_thinking_flag(replay_world: ReplayWorld) -> None:
    replay_world.server.add(text_reply("A."), text_reply("B."))
    assert (
        replay_world.run("-p", "--no-session", "--model", "replay/thinker:minimal", "x").returncode
        == 0
    )
    assert replay_world.server.requests[0].json()["reasoning_effort"] == "minimal"
    flagged = replay_world.run(
        "-p", "--no-session", "--model", "replay/thinker:minimal", "--thinking", "high", "x"
    )
    assert flagged.returncode == 0
    assert replay_world.server.requests[1].json()["reasoning_effort"] == "high"


def test_session_id_creates_then_reopens_that_session(replay_world: ReplayWorld) -> None:
    replay_world.server.add(text_reply("First."), text_reply("Second."))
    first = replay_world.run("-p", "--model", "replay/tiny", "--session-id", "my-task.1", "one")
    assert first.returncode == 0, first.stderr
    assert first.stderr.splitlines()[0] == (
        "Warning: No project session found with id 'my-task.1'; "
        "creating a new session with that id."
    )
    [file] = replay_world.sessions()
    assert file.name.endswith("_my-task.1.jsonl")
    second = replay_world.run("-p", "--model", "replay/tiny", "--session-id", "my-task.1", "two")
    assert second.returncode == 0
    assert "Warning" not in second.stderr
    assert replay_world.sessions() == [file]
    lines = [json.loads(line) for line in file.read_text(encoding="utf-8").splitlines()]
    assert lines[0]["id"] == "my-task.1"
    users = [e for e in lines if e.get("message", {}).get("role") == "user"]
    assert len(users) == 2


def test_session_id_is_checked(replay_world: ReplayWorld) -> None:
    bad = replay_world.run("-p", "--model", "replay/tiny", "--session-id", "-bad", "x")
    assert bad.returncode == 1
    assert bad.stderr.strip() == (
        "pictx: error: Session id must be non-empty, contain only alphanumeric characters, '-', '_', "
        "and '.', and start and end with an alphanumeric character"
    )
    both = replay_world.run("-p", "--model", "replay/tiny", "--session-id", "ok", "-c", "x")
    assert both.returncode == 1
    assert both.stderr.strip() == "pictx: error: --session-id cannot be combined with --continue"
    assert replay_world.server.requests == []


def test_offline_runs_without_anything_else_changing(replay_world: ReplayWorld) -> None:
    replay_world.server.add(text_reply("Offline."))
    done = replay_world.run("-p", "--offline", "--model", "replay/tiny", "hi")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Offline.\n"


def _tool_names(replay_world: ReplayWorld, index: int) -> list[str]:
    sent = replay_world.server.requests[index].json()
    return [tool["function"]["name"] for tool in sent.get("tools") or []]


def test_tools_flags_decide_the_declared_tools(replay_world: ReplayWorld) -> None:
    replay_world.server.add(*(text_reply(f"R{n}.") for n in range(4)))
    base = ("-p", "--no-session", "--model", "replay/tiny")
    assert replay_world.run(*base, "--tools", "read, b*", "x").returncode == 0
    assert replay_world.run(*base, "-t", "-edit,+edit,-write", "x").returncode == 0
    assert replay_world.run(*base, "--no-tools", "x").returncode == 0
    assert replay_world.run(*base, "--exclude-tools", "write,edit", "x").returncode == 0
    assert _tool_names(replay_world, 0) == ["read", "bash"]
    assert _tool_names(replay_world, 1) == ["read", "bash", "edit"]  # in the order of the entries
    assert _tool_names(replay_world, 2) == []
    assert _tool_names(replay_world, 3) == ["read", "bash"]


def test_tools_flag_errors_are_pi_s(replay_world: ReplayWorld) -> None:
    mixed = replay_world.run("-p", "--model", "replay/tiny", "-t", "read,+grep", "x")
    assert mixed.returncode == 1
    assert mixed.stderr.strip() == (
        "pictx: error: -t: tool names cannot be mixed with +name or -name entries"
    )
    pattern = replay_world.run("-p", "--model", "replay/tiny", "--tools", "-b*", "x")
    assert pattern.returncode == 1
    assert pattern.stderr.strip() == (
        "pictx: error: --tools: +name and -name entries take exact tool names, not patterns: -b*"
    )


def test_models_scope_picks_the_startup_model_and_warns(replay_world: ReplayWorld) -> None:
    replay_world.server.add(text_reply("Scoped."))
    done = replay_world.run("-p", "--no-session", "--models", "nothing*,REPLAY/T*:low", "x")
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines()[0] == 'Warning: No models match pattern "nothing*"'
    sent = replay_world.server.requests[0].json()
    assert sent["model"] == "tiny"  # the first match, in registry order
    replay_world.write_settings({"enabledModels": ["replay/thinker:minimal"]})
    replay_world.server.add(text_reply("From settings."))
    assert replay_world.run("-p", "--no-session", "x").returncode == 0
    sent = replay_world.server.requests[1].json()
    assert sent["model"] == "thinker"
    assert sent["reasoning_effort"] == "minimal"
