"""A small HTTP server on 127.0.0.1 that replays scripted responses and records requests.

Each request takes the next :class:`Reply` from the queue. Streamed replies are sent with
chunked transfer encoding, one chunk per SSE event, so a reply with ``cut=True`` can stop
mid-stream and drop the connection the way a failing proxy does.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes | None = None
    chunks: list[bytes] = field(default_factory=list)
    cut: bool = False


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


def openai_sse(chunks: list[dict[str, Any]], *, done: bool = True) -> list[bytes]:
    events = [b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks]
    if done:
        events.append(b"data: [DONE]\n\n")
    return events


def anthropic_sse(events: list[dict[str, Any]]) -> list[bytes]:
    return [
        f"event: {e['type']}\n".encode() + b"data: " + json.dumps(e).encode() + b"\n\n"
        for e in events
    ]


def responses_sse(events: list[dict[str, Any]]) -> list[bytes]:
    """OpenAI Responses events (``event: <type>`` then ``data:``), numbered in order."""
    out: list[bytes] = []
    for n, event in enumerate(events):
        data = {"sequence_number": n, **event}
        out.append(
            f"event: {event['type']}\n".encode() + b"data: " + json.dumps(data).encode() + b"\n\n"
        )
    return out


def google_sse(chunks: list[dict[str, Any]]) -> list[bytes]:
    """Gemini ``streamGenerateContent?alt=sse`` chunks."""
    return [b"data: " + json.dumps(c).encode() + b"\r\n\r\n" for c in chunks]


def stream(chunks: list[bytes], *, cut: bool = False, status: int = 200) -> Reply:
    return Reply(
        status=status,
        headers={"content-type": "text/event-stream"},
        chunks=chunks,
        cut=cut,
    )


def json_reply(status: int, payload: Any, headers: dict[str, str] | None = None) -> Reply:
    return Reply(
        status=status,
        headers={"content-type": "application/json", **(headers or {})},
        body=json.dumps(payload).encode(),
    )


class ReplayServer:
    """Start with ``with ReplayServer() as server:``; ``server.url`` is ``http://127.0.0.1:PORT``."""

    def __init__(self) -> None:
        self.replies: deque[Reply] = deque()
        self.requests: list[Recorded] = []
        self.models: list[str] | None = None
        """What ``GET .../models`` lists (``None``: 404)."""
        self.gets: list[Recorded] = []
        """GET requests, kept apart from ``requests``: they never take a scripted reply, so a
        client's model-list check shifts neither the script nor the indexes of ``requests``."""
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_GET(self) -> None:
                with server._lock:
                    server.gets.append(
                        Recorded(
                            self.command,
                            self.path,
                            {k.lower(): v for k, v in self.headers.items()},
                            b"",
                        )
                    )
                    models = server.models
                if models is None or not self.path.rstrip("/").endswith("/models"):
                    reply = json_reply(404, {"error": {"message": "no such route"}})
                else:
                    listed = [{"id": m, "object": "model"} for m in models]
                    reply = json_reply(200, {"object": "list", "data": listed})
                assert reply.body is not None
                self.send_response(reply.status)
                for key, value in reply.headers.items():
                    self.send_header(key, value)
                self.send_header("content-length", str(len(reply.body)))
                self.end_headers()
                self.wfile.write(reply.body)

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length)
                with server._lock:
                    server.requests.append(
                        Recorded(
                            self.command,
                            self.path,
                            {k.lower(): v for k, v in self.headers.items()},
                            body,
                        )
                    )
                    reply = server.replies.popleft() if server.replies else None
                if reply is None:
                    reply = json_reply(
                        500, {"error": {"message": "replay server: no scripted reply left"}}
                    )
                self.send_response(reply.status)
                for key, value in reply.headers.items():
                    self.send_header(key, value)
                if reply.body is not None:
                    self.send_header("content-length", str(len(reply.body)))
                    self.end_headers()
                    self.wfile.write(reply.body)
                    return
                self.send_header("transfer-encoding", "chunked")
                if reply.cut:
                    self.send_header("connection", "close")
                self.end_headers()
                for chunk in reply.chunks:
                    self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                    self.wfile.flush()
                if reply.cut:
                    self.close_connection = True
                    return
                self.wfile.write(b"0\r\n\r\n")

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True)

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def add(self, *replies: Reply) -> None:
        self.replies.extend(replies)

    def bodies(self) -> list[bytes]:
        return [r.body for r in self.requests]

    def __enter__(self) -> ReplayServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)
