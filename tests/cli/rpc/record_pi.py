"""Record pi 1.6.0's side of the RPC client scenario (run by hand; tests never need pi).

::

    python -m tests.cli.rpc.record_pi NODE PI_CLI_JS

writes ``tests/data/rpc/pi-1.6.0-scenario.json`` (every step's command, response and events)
and ``tests/data/rpc/pi-1.6.0-session.jsonl`` (the first session file as pi wrote it), with the
run's temporary paths replaced by ``<ROOT>`` and pi's prompt wording (system-prompt sections,
tool declarations) replaced by placeholders: only shapes are compared. ``benchmarks/economy/pi_install.py`` installs a
Node and pi 1.6.0 to pass here.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from tests.cli.rpc.client_scenario import Client, prepare, run_scenario, script
from tests.providers.replay_server import ReplayServer

DATA = Path(__file__).resolve().parents[2] / "data" / "rpc"


_WORDING_KEYS = frozenset({"sections", "toolsAdded"})
"""pi's own prompt text (system-prompt sections, tool descriptions) is not kept: only its
shape matters here, so every string under these keys becomes a placeholder of its length."""


def _scrub(value: Any, root: str, wording: bool = False) -> Any:
    if isinstance(value, str):
        if wording and value not in ("object", "string", "number", "array", "json_schema"):
            return f"<pi text, {len(value)} chars>"
        return value.replace(root, "<ROOT>")
    if isinstance(value, list):
        return [_scrub(v, root, wording) for v in value]
    if isinstance(value, dict):
        return {k: _scrub(v, root, wording or k in _WORDING_KEYS) for k, v in value.items()}
    return value


def main(node: str, cli: str) -> None:
    with tempfile.TemporaryDirectory() as tmp, ReplayServer() as server:
        root = Path(tmp).resolve()
        project, env = prepare(root, server)
        script(server)
        client = Client(
            [node, cli, "--mode", "rpc", "--model", "replay/tiny"], cwd=project, env=env
        )
        try:
            steps = run_scenario(client, project)
        finally:
            code = client.close()
        first = Path(next(s for s in steps if s["step"] == "get_state" and s is not steps[0])
                     ["response"]["data"]["sessionFile"])  # fmt: skip
        scrubbed = _scrub({"piVersion": "1.6.0", "exitCode": code, "steps": steps}, str(root))
        DATA.mkdir(parents=True, exist_ok=True)
        (DATA / "pi-1.6.0-scenario.json").write_text(
            json.dumps(scrubbed, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
        )
        lines = first.read_text(encoding="utf-8").splitlines()
        (DATA / "pi-1.6.0-session.jsonl").write_text(
            "".join(
                json.dumps(_scrub(json.loads(line), str(root)), separators=(",", ":"),
                           ensure_ascii=False) + "\n"
                for line in lines
            ),
            encoding="utf-8",
        )  # fmt: skip


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
