"""Extensions in RPC mode: ``ctx.shutdown()`` ends the process in order after the asking
command's response (``session_shutdown`` told, exit code 0) without end of input, and a name an
extension gives the session reaches the client as ``session_info_changed``."""

from __future__ import annotations

import json
from pathlib import Path

from .conftest import HANG_GUARD, RpcWorld

LEAVER = """
import json
from pathlib import Path

LOG = Path({log!r})


def register(pi):
    async def bye(args, ctx):
        LOG.write_text(json.dumps({{"asked": True, "trusted": ctx.is_project_trusted()}}))
        ctx.shutdown()

    pi.register_command("bye", bye, description="leave")
    pi.on("session_shutdown", lambda event, ctx: LOG.write_text(
        json.dumps({{**json.loads(LOG.read_text()), "shutdown": event.reason}})))
"""


def test_ctx_shutdown_ends_the_process_after_the_response(
    rpc_world: RpcWorld, tmp_path: Path
) -> None:
    log = tmp_path / "log.json"
    extensions = rpc_world.agent_dir / "extensions"
    extensions.mkdir()
    (extensions / "leaver.py").write_text(LEAVER.format(log=str(log)))
    rpc = rpc_world.spawn()
    answer = rpc.call({"id": "b", "type": "prompt", "message": "/bye"})
    assert answer["success"] is True
    assert rpc.proc.wait(timeout=HANG_GUARD) == 0  # stdin still open: the extension ended it
    assert json.loads(log.read_text()) == {"asked": True, "trusted": True, "shutdown": "quit"}
    rpc.kill()


NAMER = """
def register(pi):
    async def title(args, ctx):
        pi.set_session_name(args)

    pi.register_command("title", title, description="name the session")
"""


def test_a_name_an_extension_sets_reaches_the_client(rpc_world: RpcWorld) -> None:
    extensions = rpc_world.agent_dir / "extensions"
    extensions.mkdir()
    (extensions / "namer.py").write_text(NAMER)
    rpc = rpc_world.spawn()
    rpc.send({"id": "t", "type": "prompt", "message": "/title release notes"})
    records = rpc.until(lambda r: r.get("type") == "session_info_changed")
    assert records[-1] == {"type": "session_info_changed", "name": "release notes"}
    named = rpc.call({"id": "n", "type": "set_session_name", "name": "by rpc"})
    assert named["success"] is True
    changed = [r for r in rpc.seen if r.get("type") == "session_info_changed"]
    assert [r["name"] for r in changed] == ["release notes", "by rpc"]
    assert rpc.close() == 0
