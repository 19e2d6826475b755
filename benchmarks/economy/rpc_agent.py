"""One agent process in ``--mode rpc`` (pi's JSON-lines protocol), as a benchmark client.

The process runs in its own session (process group) so that stopping it also stops the tool
processes it started; its stdout is read by a thread that keeps only the records a client
waits for (responses, ``agent_end``, ``agent_settled``) and drops the rest unparsed (the
event stream of one prompt can be megabytes of deltas and system-message copies); its
stderr is read by another thread that keeps the last lines for failure reports.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import re
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

__all__ = ["AgentDied", "AgentTimeout", "CommandFailed", "RpcAgent"]

_KEPT = frozenset({"response", "agent_end", "agent_settled"})
_TYPE = re.compile(rb'"type"\s*:\s*"([a-z_]+)"')
_STOP_GRACE = 10.0


class AgentDied(Exception):
    """The process exited (or closed its stdout) while a reply was awaited."""


class AgentTimeout(Exception):
    """No awaited reply within the time limit."""


class CommandFailed(Exception):
    """The agent answered a command with ``success: false``; the message is its error."""


def _record_type(line: bytes) -> str | None:
    """The record's ``type``: the first ``"type"`` key of the line (records put ``id`` and
    ``type`` first; the nested objects of events come after their own ``type``)."""
    match = _TYPE.search(line, 0, 200)
    return match.group(1).decode() if match else None


class RpcAgent:
    """A running ``<command> --mode rpc ...``; :meth:`stop` (or the context manager) ends it."""

    def __init__(
        self, args: Sequence[str], *, cwd: Path, env: Mapping[str, str], stderr_lines: int = 40
    ) -> None:
        self.args = list(args)
        self._records: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._held: list[dict[str, Any]] = []
        self._stderr: deque[str] = deque(maxlen=stderr_lines)
        self._next_id = 0
        self.proc = subprocess.Popen(
            self.args,
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        assert self.proc.stdout is not None
        assert self.proc.stderr is not None
        self._threads = [
            threading.Thread(target=self._read_stdout, args=(self.proc.stdout,), daemon=True),
            threading.Thread(target=self._read_stderr, args=(self.proc.stderr,), daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    def __enter__(self) -> RpcAgent:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop()

    # -- reading --------------------------------------------------------------------------------

    def _read_stdout(self, stream: IO[bytes]) -> None:
        try:
            for line in stream:
                if _record_type(line) not in _KEPT:
                    continue
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                if isinstance(record, dict):
                    self._records.put(record)
        finally:
            self._records.put(None)

    def _read_stderr(self, stream: IO[bytes]) -> None:
        for line in stream:
            self._stderr.append(line.decode("utf-8", "replace").rstrip())

    def stderr_tail(self, chars: int = 600) -> str:
        return " | ".join(self._stderr)[-chars:]

    def _take(self, wanted: Callable[[dict[str, Any]], bool], timeout: float) -> dict[str, Any]:
        """The first record (held or arriving) for which ``wanted`` is true."""
        for i, record in enumerate(self._held):
            if wanted(record):
                return self._held.pop(i)
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AgentTimeout(f"no reply within {timeout:.0f}s")
            try:
                arrived = self._records.get(timeout=left)
            except queue.Empty:
                continue
            if arrived is None:
                self._records.put(None)  # stays at the end for later waits
                code = self.proc.wait()
                raise AgentDied(f"exited with {code}")
            if wanted(arrived):
                return arrived
            self._held.append(arrived)

    # -- commands -------------------------------------------------------------------------------

    def send(self, command: str, **fields: Any) -> str:
        """Write one command; return its id."""
        self._next_id += 1
        ident = f"b{self._next_id}"
        line = json.dumps({"id": ident, "type": command, **fields}) + "\n"
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(line.encode())
            self.proc.stdin.flush()
        except (BrokenPipeError, ValueError) as exc:
            raise AgentDied(f"stdin closed ({exc})") from exc
        return ident

    def response(self, ident: str, timeout: float) -> Any:
        record = self._take(lambda r: r.get("type") == "response" and r.get("id") == ident, timeout)
        if not record.get("success"):
            raise CommandFailed(str(record.get("error")))
        return record.get("data")

    def call(self, command: str, timeout: float, **fields: Any) -> Any:
        """Send ``command`` and return its response's ``data`` (raises :class:`CommandFailed`)."""
        return self.response(self.send(command, **fields), timeout)

    def prompt(self, text: str, timeout: float) -> None:
        """Send a prompt and wait until its run has settled (compaction and retries included)."""
        deadline = time.monotonic() + timeout
        data = self.call("prompt", timeout, message=text)
        if isinstance(data, dict) and data.get("disposition") != "started":
            raise CommandFailed(f"prompt was {data.get('disposition')}, not started")
        self._take(lambda r: r.get("type") == "agent_settled", deadline - time.monotonic())
        # whatever the run held back (e.g. agent_end records) is of no further use
        self._held = [r for r in self._held if r.get("type") == "response"]

    # -- stopping -------------------------------------------------------------------------------

    def _signal_group(self, sig: signal.Signals) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, sig)

    def stop(self, grace: float = _STOP_GRACE) -> int:
        """End of input (an orderly shutdown), then SIGTERM, then SIGKILL to the process group;
        always reaped. Returns the exit code."""
        if self.proc.stdin is not None:
            with contextlib.suppress(OSError, ValueError):
                self.proc.stdin.close()
        try:
            code = self.proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            self._signal_group(signal.SIGTERM)
            try:
                code = self.proc.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                self._signal_group(signal.SIGKILL)
                code = self.proc.wait()
        # tool processes left behind in the group (a killed run's bash) go too
        self._signal_group(signal.SIGKILL)
        for thread in self._threads:
            thread.join(timeout=grace)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        return code
