"""A project and an agent dir whose ``models.json`` points at a 127.0.0.1 replay server, for
running ``pictx`` as a subprocess (print mode) or in a pseudo-terminal (interactive)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.providers.replay_server import ReplayServer, Reply, openai_sse, stream

PICTX = [sys.executable, "-m", "pi_context.cli.main"]
HANG_GUARD = 90.0
"""Seconds before a run is treated as hung (a hang guard, not a speed check)."""


def text_reply(text: str) -> Reply:
    """A streamed Chat Completions answer with usage."""
    chunk: dict[str, Any] = {"id": "c1", "object": "chat.completion.chunk", "created": 1}
    return stream(
        openai_sse(
            [
                {**chunk, "choices": [{"index": 0, "delta": {"content": text}}]},
                {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
                {
                    **chunk,
                    "choices": [],
                    "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12},
                },
            ]
        )
    )


class ReplayWorld:
    """``replay/tiny`` (no reasoning) and ``replay/thinker`` (reasoning) on the server."""

    def __init__(self, root: Path, server: ReplayServer) -> None:
        self.server = server
        self.project = root / "proj"
        self.project.mkdir()
        self.agent_dir = root / "agent"
        self.agent_dir.mkdir()
        (root / "home").mkdir()
        self.env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(root / "home"),
            "PI_CODING_AGENT_DIR": str(self.agent_dir),
            "PI_OFFLINE": "1",
            "LANG": "C.UTF-8",
        }
        if "PYTHONPATH" in os.environ:
            self.env["PYTHONPATH"] = os.environ["PYTHONPATH"]
        models = {
            "providers": {
                "replay": {
                    "baseUrl": server.url + "/v1",
                    "api": "openai-completions",
                    "apiKey": "test-key",
                    "models": [
                        {"id": "tiny", "contextWindow": 100000, "maxTokens": 1000},
                        {
                            "id": "thinker",
                            "reasoning": True,
                            "contextWindow": 200000,
                            "maxTokens": 32000,
                        },
                    ],
                }
            }
        }
        (self.agent_dir / "models.json").write_text(json.dumps(models), encoding="utf-8")

    def write_settings(self, settings: dict[str, Any]) -> None:
        (self.agent_dir / "settings.json").write_text(json.dumps(settings), encoding="utf-8")

    def run(self, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
        """``pictx ARGS`` to completion (stdin is a pipe, so not interactive)."""
        return subprocess.run(
            [*PICTX, *args],
            cwd=self.project,
            env=self.env,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=HANG_GUARD,
            check=False,
        )

    def sessions(self) -> list[Path]:
        return sorted((self.agent_dir / "sessions").rglob("*.jsonl"))

    def sessions_by_message(self) -> list[Path]:
        """The session files ordered by their first user message's timestamp."""

        def first_message_time(path: Path) -> str:
            for line in path.read_text(encoding="utf-8").splitlines():
                entry = json.loads(line)
                if entry.get("type") == "message":
                    return str(entry["timestamp"])
            return ""

        return sorted(self.sessions(), key=first_message_time)

    def entries(self) -> list[dict[str, Any]]:
        [file] = self.sessions()
        return [json.loads(line) for line in file.read_text(encoding="utf-8").splitlines()]
