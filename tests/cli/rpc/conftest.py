"""``pictx --mode rpc`` as a subprocess talking to a replay server on 127.0.0.1."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import pytest

from tests.cli.replay_world import ReplayWorld
from tests.cli.rpc.chat_stream import chunk, text_reply
from tests.providers.replay_server import ReplayServer, Reply, openai_sse, stream

HANG_GUARD = 60.0
"""Seconds before a test gives up waiting for a record (a hang, not a speed check)."""

Record = dict[str, Any]

__all__ = ["HANG_GUARD", "Record", "RpcProcess", "RpcWorld", "bash_call_reply", "text_reply"]


def bash_call_reply(command: str, call_id: str = "call_1") -> Reply:
    """A streamed answer that calls the bash tool."""
    call = {
        "index": 0,
        "id": call_id,
        "type": "function",
        "function": {"name": "bash", "arguments": json.dumps({"command": command})},
    }
    return stream(
        openai_sse([chunk({"role": "assistant", "tool_calls": [call]}), chunk({}, "tool_calls")])
    )


class RpcProcess:
    """One ``pictx --mode rpc`` child; records are read on a thread as they arrive."""

    def __init__(self, args: list[str], *, cwd: Path, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "pi_context", "--mode", "rpc", *args],
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.seen: list[Record] = []
        self.raw: list[bytes] = []
        self._records: queue.Queue[Record | None] = queue.Queue()
        assert self.proc.stdout is not None
        self._reader = threading.Thread(target=self._pump, args=(self.proc.stdout,), daemon=True)
        self._reader.start()

    def _pump(self, out: IO[bytes]) -> None:
        for line in out:
            self.raw.append(line)
            self._records.put(json.loads(line))
        self._records.put(None)

    def send_raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, record: Record) -> None:
        self.send_raw(json.dumps(record).encode() + b"\n")

    def next(self) -> Record:
        item = self._records.get(timeout=HANG_GUARD)
        if item is None:
            raise AssertionError(f"pictx exited; stderr: {self.stderr()}")
        self.seen.append(item)
        return item

    def until(self, predicate: Callable[[Record], bool]) -> list[Record]:
        """Records up to and including the first one ``predicate`` accepts."""
        got: list[Record] = []
        while True:
            record = self.next()
            got.append(record)
            if predicate(record):
                return got

    def until_type(self, kind: str) -> list[Record]:
        return self.until(lambda r: r.get("type") == kind)

    def response(self, command_id: str) -> Record:
        return self.until(lambda r: r.get("type") == "response" and r.get("id") == command_id)[-1]

    def call(self, record: Record) -> Record:
        """Send a command and wait for its response."""
        self.send(record)
        return self.response(str(record["id"]))

    def close(self) -> int:
        """End of input: the orderly shutdown; returns the exit code."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        code = self.proc.wait(timeout=HANG_GUARD)
        self._reader.join(timeout=HANG_GUARD)  # every line written is in ``raw`` before we return
        return code

    def stderr(self) -> str:
        if self.proc.poll() is None:
            return "(running)"
        assert self.proc.stderr is not None
        return self.proc.stderr.read().decode(errors="replace")

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=HANG_GUARD)
        for stream_ in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream_ is not None:
                stream_.close()


class RpcWorld(ReplayWorld):
    """:class:`~tests.cli.replay_world.ReplayWorld`'s project, agent dir and replay models,
    with spawned ``pictx --mode rpc`` processes."""

    def __init__(self, root: Path, server: ReplayServer) -> None:
        super().__init__(root, server)
        self.children: list[RpcProcess] = []

    def spawn(self, *args: str) -> RpcProcess:
        child = RpcProcess(
            ["--model", "replay/tiny", *args] if "--model" not in args else list(args),
            cwd=self.project,
            env=self.env,
        )
        self.children.append(child)
        return child


@pytest.fixture
def rpc_world(tmp_path: Path) -> Iterator[RpcWorld]:
    with ReplayServer() as server:
        w = RpcWorld(tmp_path, server)
        try:
            yield w
        finally:
            for child in w.children:
                child.kill()
