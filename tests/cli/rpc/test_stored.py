"""RPC on a stored session (``pictx --mode rpc --session URL#ID``): ``new_session``, ``fork``
and ``clone`` stay in the store and tenant, ``switch_session`` to a file is refused with a
one-line error and the stored session goes on."""

from __future__ import annotations

import asyncio
from pathlib import Path

from pi_context.store import SessionRef, open_store

from .conftest import RpcWorld, text_reply


async def _stored(folder: Path, tenant: str) -> dict[str, str | None]:
    store = await open_store(str(folder))
    try:
        page = await store.list_sessions(tenant=tenant)
        out: dict[str, str | None] = {}
        for summary in page.sessions:
            header = (await store.load(SessionRef(tenant, summary.ref.id))).header
            out[summary.ref.id] = header.get("parentSession")
        return out
    finally:
        await store.aclose()


def test_new_fork_and_clone_stay_in_the_store(rpc_world: RpcWorld) -> None:
    folder = rpc_world.project.parent / "store"
    folder.mkdir()
    rpc = rpc_world.spawn("--session", f"{folder}#conv-1", "--tenant", "acme")
    for n, text in enumerate(("hello", "again")):
        rpc_world.server.add(text_reply(f"answer {n}"))
        rpc.send({"id": f"p{n}", "type": "prompt", "message": text})
        rpc.until_type("agent_settled")  # the next prompt may follow at once
    forks = rpc.call({"id": "fm", "type": "get_fork_messages"})["data"]["messages"]
    forked = rpc.call({"id": "f", "type": "fork", "entryId": forks[1]["entryId"]})
    assert forked["data"] == {"text": "again", "cancelled": False}
    fork_id = rpc.call({"id": "s1", "type": "get_state"})["data"]["sessionId"]
    assert rpc.call({"id": "cl", "type": "clone"})["data"] == {"cancelled": False}
    clone_id = rpc.call({"id": "s2", "type": "get_state"})["data"]["sessionId"]
    assert rpc.call({"id": "ns", "type": "new_session"})["data"] == {"cancelled": False}
    new_id = rpc.call({"id": "s3", "type": "get_state"})["data"]["sessionId"]
    some_file = rpc_world.project.parent / "elsewhere.jsonl"
    some_file.write_text(
        '{"type":"session","version":3,"id":"f1","timestamp":"2026-01-01T00:00:00.000Z"}\n'
    )
    refused = rpc.call({"id": "sw", "type": "switch_session", "sessionPath": str(some_file)})
    assert refused["success"] is False
    assert "stored session resumes only sessions of its store and tenant" in refused["error"]
    assert "\n" not in refused["error"]
    assert rpc.call({"id": "s4", "type": "get_state"})["data"]["sessionId"] == new_id
    assert rpc.close() == 0
    stored = asyncio.run(_stored(folder, "acme"))
    assert stored == {
        "conv-1": None,
        fork_id: "conv-1",
        clone_id: fork_id,
        new_id: None,
    }
    assert list((rpc_world.agent_dir / "sessions").rglob("*.jsonl")) == []
