"""``ctx.shutdown()`` in RPC mode: the command that asked gets its response, then the process
ends in order (``session_shutdown`` told, exit code 0) without end of input."""

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
