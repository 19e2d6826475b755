"""RPC ``cycle_model`` within the ``--models`` scope, ``prompt`` without usable credentials, and
extensions cancelling ``fork`` / ``clone`` / ``new_session`` / ``switch_session`` (each test
one ``pictx --mode rpc`` subprocess)."""

from __future__ import annotations

import json
from pathlib import Path

from .conftest import RpcWorld, text_reply


def test_cycle_model_follows_the_scope(rpc_world: RpcWorld) -> None:
    rpc = rpc_world.spawn("--model", "replay/tiny", "--models", "replay/tiny,replay/thinker:high")
    first = rpc.call({"id": "c1", "type": "cycle_model"})["data"]
    assert first["model"]["id"] == "thinker"
    assert first["thinkingLevel"] == "high"  # the scope entry's level
    assert first["isScoped"] is True
    second = rpc.call({"id": "c2", "type": "cycle_model"})["data"]
    assert second["model"]["id"] == "tiny"
    assert second["thinkingLevel"] == "off"
    assert second["isScoped"] is True
    assert rpc.close() == 0

    alone = rpc_world.spawn("--model", "replay/tiny", "--models", "replay/tiny")
    nothing = alone.call({"id": "c3", "type": "cycle_model"})
    assert nothing["success"] is True
    assert nothing["data"] is None  # one entry, and it is the current model
    assert alone.close() == 0


def test_prompt_without_a_key_fails_with_pi_s_response(rpc_world: RpcWorld) -> None:
    rpc = rpc_world.spawn("--model", "openai/gpt-4o")
    failed = rpc.call({"id": "p", "type": "prompt", "message": "hi"})
    assert failed["success"] is False
    assert failed["command"] == "prompt"
    assert failed["error"].startswith("No API key found for openai.\n\n")
    state = rpc.call({"id": "s", "type": "get_state"})["data"]
    assert state["isStreaming"] is False
    assert rpc.close() == 0
    assert rpc_world.server.requests == []


def test_prompt_with_an_expired_login_says_to_log_in_again(rpc_world: RpcWorld) -> None:
    (rpc_world.agent_dir / "auth.json").write_text(
        json.dumps({"replay": {"type": "oauth", "access": "old", "expires": 1000}})
    )
    rpc = rpc_world.spawn()
    failed = rpc.call({"id": "p", "type": "prompt", "message": "hi"})
    assert failed["error"] == (
        'Authentication failed for "replay". Credentials may have expired or network is '
        "unavailable. Run '/login replay' to re-authenticate."
    )
    assert rpc.close() == 0
    assert rpc_world.server.requests == []


CANCELLER = """
from pathlib import Path

FLAG = Path({flag!r})


def register(pi):
    def veto(event, ctx):
        return {{"cancel": True}} if FLAG.exists() else None

    pi.on("session_before_fork", veto)
    pi.on("session_before_switch", veto)
"""


def test_extensions_can_cancel_session_replacement(rpc_world: RpcWorld, tmp_path: Path) -> None:
    flag = tmp_path / "veto"
    extensions = rpc_world.agent_dir / "extensions"
    extensions.mkdir()
    (extensions / "veto.py").write_text(CANCELLER.format(flag=str(flag)))
    rpc_world.server.add(text_reply("One."))
    rpc = rpc_world.spawn()
    rpc.send({"id": "p", "type": "prompt", "message": "first"})
    rpc.until_type("agent_settled")
    before = rpc.call({"id": "s0", "type": "get_state"})["data"]
    [row] = rpc.call({"id": "fm", "type": "get_fork_messages"})["data"]["messages"]
    flag.touch()
    cancelled = [
        rpc.call({"id": "f", "type": "fork", "entryId": row["entryId"]}),
        rpc.call({"id": "c", "type": "clone"}),
        rpc.call({"id": "n", "type": "new_session"}),
        rpc.call({"id": "w", "type": "switch_session", "sessionPath": before["sessionFile"]}),
    ]
    assert [r["data"] for r in cancelled] == [{"cancelled": True}] * 4
    assert rpc.call({"id": "s1", "type": "get_state"})["data"]["sessionId"] == before["sessionId"]
    flag.unlink()
    cloned = rpc.call({"id": "c2", "type": "clone"})
    assert cloned["data"] == {"cancelled": False}
    after = rpc.call({"id": "s2", "type": "get_state"})["data"]
    assert after["sessionId"] != before["sessionId"]
    header = json.loads(Path(after["sessionFile"]).read_text().splitlines()[0])
    assert header["parentSession"] == before["sessionFile"]
    assert rpc.close() == 0
