"""The provider simulator: one local HTTP server on 127.0.0.1 speaking both APIs.

``POST /v1/messages`` is the Anthropic Messages API, ``POST /v1/chat/completions`` OpenAI's
Chat Completions; both stream server-sent events (or answer JSON when ``stream`` is false)
with usage as the provider reports it. Each request is billed by the cache model of its API
(:mod:`.cache_anthropic` / :mod:`.cache_openai`) on a simulated clock, answered by the
:class:`~.responder.Responder`, and recorded as a :class:`~.ledger.RequestRecord`. A request
over the context window is rejected with the provider's overflow error (and counted).

The clock: a new prompt adds the user's pause (from the workload) once; every answer adds
2 s plus the time to generate its output at 60 tokens/s.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

from benchmarks.economy.cache_anthropic import AnthropicCache, CacheResult
from benchmarks.economy.cache_openai import OpenAICache
from benchmarks.economy.ledger import Clock, RequestRecord
from benchmarks.economy.pricing import ANTHROPIC_PRICES, OPENAI_PRICES, Prices
from benchmarks.economy.responder import Responder
from benchmarks.economy.tokens import Tokenizer
from benchmarks.economy.wire import (
    Reply,
    anthropic_blocks,
    anthropic_conversation,
    anthropic_error,
    anthropic_events,
    openai_conversation,
    openai_error,
    openai_events,
    openai_tokens,
    thinking_config,
)
from benchmarks.economy.workload import Workload

__all__ = ["Api", "Simulator", "SimulatorServer"]

Api = Literal["anthropic", "openai"]


@dataclass(slots=True)
class _Outcome:
    status: int
    body: Any = None
    events: Iterator[bytes] | None = None


@dataclass(slots=True)
class Simulator:
    """The billing and answering state of one contender's run on one API."""

    api: Api
    workload: Workload
    tokenizer: Tokenizer
    window: int
    summary_keep: str = "plausible"
    """What the simulated summaries keep of the planted facts (``--summary-keep``)."""
    prices: Prices = field(init=False)
    responder: Responder = field(init=False)
    clock: Clock = field(default_factory=Clock)
    records: list[RequestRecord] = field(default_factory=list)
    _anthropic: AnthropicCache = field(default_factory=AnthropicCache)
    _openai: OpenAICache = field(default_factory=OpenAICache)
    _last_prompt: int = -1
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.prices = ANTHROPIC_PRICES if self.api == "anthropic" else OPENAI_PRICES
        self.responder = Responder(self.workload, self.summary_keep)

    def reset(self) -> None:
        """A fresh account: empty cache, clock at zero, no records."""
        with self._lock:
            self.clock = Clock()
            self.records = []
            self._anthropic = AnthropicCache()
            self._openai = OpenAICache()
            self._last_prompt = -1

    def handle(self, path: str, body: dict[str, Any]) -> _Outcome:
        with self._lock:
            return self._handle(path, body)

    def _handle(self, path: str, body: dict[str, Any]) -> _Outcome:
        is_anthropic = path.rstrip("/").endswith("/messages")
        if is_anthropic != (self.api == "anthropic"):
            return _Outcome(404, {"error": {"message": f"this simulator speaks {self.api}"}})
        if is_anthropic:
            conv = anthropic_conversation(body)
            blocks = anthropic_blocks(body, self.tokenizer)
            total = sum(b.tokens for b in blocks)
        else:
            conv = openai_conversation(body)
            tokens = openai_tokens(body, self.tokenizer)
            total = len(tokens)
        decision = self.responder.decide(conv, input_text=conv.last_user_text, input_tokens=total)
        if decision.kind == "turn" and decision.prompt != self._last_prompt:
            prompt = self.workload.prompt(decision.prompt)
            if prompt is not None and decision.prompt > self._last_prompt:
                self.clock.advance(prompt.gap)
            self._last_prompt = decision.prompt
        index = len(self.records)
        now = self.clock.now
        if total > self.window:
            self.records.append(
                RequestRecord(index, decision.prompt, "overflow", now, total, 0, 0, 0, 0, None, 0.0)
            )
            message = (
                f"prompt is too long: {total} tokens > {self.window} maximum"
                if is_anthropic
                else f"This model's maximum context length is {self.window} tokens. However, "
                f"your messages resulted in {total} tokens. Please reduce the length of the "
                "messages."
            )
            return _Outcome(
                400, anthropic_error(message) if is_anthropic else openai_error(message)
            )
        if is_anthropic:
            bill: CacheResult = self._anthropic.account(blocks, now=now, request=index)
        else:
            bill = self._openai.account(tokens, now=now, request=index)
        reply = decision.reply
        output = self.tokenizer.count(reply.text) + sum(
            self.tokenizer.count(json.dumps(c.arguments)) + 5 for c in reply.calls
        )
        cost = self.prices.cost(
            uncached=bill.uncached,
            cache_read=bill.cache_read,
            cache_write=bill.cache_write,
            output=output,
        )
        self.records.append(
            RequestRecord(
                index,
                decision.prompt,
                decision.kind,
                now,
                bill.input,
                bill.cache_read,
                bill.cache_write,
                bill.uncached,
                output,
                bill.hit_from,
                cost,
                thinking_config(body),
                decision.probe,
            )
        )
        self.clock.advance(2.0 + output / 60.0)
        model = str(body.get("model", "sim"))
        stream = bool(body.get("stream"))
        if is_anthropic:
            usage = {
                "input_tokens": bill.uncached,
                "cache_creation_input_tokens": bill.cache_write,
                "cache_read_input_tokens": bill.cache_read,
                "output_tokens": output,
            }
            if stream:
                return _Outcome(
                    200,
                    events=anthropic_events(
                        reply, model=model, message_id=f"msg_{index:06d}", usage=usage
                    ),
                )
            return _Outcome(200, _anthropic_message(reply, model, index, usage))
        usage = {
            "prompt_tokens": bill.input,
            "completion_tokens": output,
            "cached_tokens": bill.cache_read,
        }
        if stream:
            return _Outcome(
                200,
                events=openai_events(
                    reply, model=model, completion_id=f"chatcmpl-{index:06d}", usage=usage
                ),
            )
        return _Outcome(200, _openai_completion(reply, model, index, usage))


def _anthropic_message(
    reply: Reply, model: str, index: int, usage: dict[str, int]
) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": reply.text}] if reply.text else []
    content += [
        {"type": "tool_use", "id": c.id, "name": c.name, "input": dict(c.arguments)}
        for c in reply.calls
    ]
    return {
        "id": f"msg_{index:06d}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": "tool_use" if reply.calls else "end_turn",
        "stop_sequence": None,
        "usage": usage,
    }


def _openai_completion(
    reply: Reply, model: str, index: int, usage: dict[str, int]
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if reply.calls:
        message["tool_calls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.name, "arguments": json.dumps(c.arguments)},
            }
            for c in reply.calls
        ]
    return {
        "id": f"chatcmpl-{index:06d}",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if reply.calls else "stop",
            }
        ],
        "usage": {
            "prompt_tokens": usage["prompt_tokens"],
            "completion_tokens": usage["completion_tokens"],
            "total_tokens": usage["prompt_tokens"] + usage["completion_tokens"],
            "prompt_tokens_details": {"cached_tokens": usage["cached_tokens"]},
        },
    }


class SimulatorServer:
    """Serves a :class:`Simulator` on 127.0.0.1 (a free port) in a background thread."""

    def __init__(self, simulator: Simulator) -> None:
        self.simulator = simulator
        handler = _handler_for(simulator)
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> SimulatorServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=10)


def _handler_for(simulator: Simulator) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            return

        def _json(self, status: int, body: Any) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
            except ValueError as exc:
                self._json(400, {"error": {"message": f"invalid JSON body: {exc}"}})
                return
            if not isinstance(body, dict):
                self._json(400, {"error": {"message": "the body must be a JSON object"}})
                return
            outcome = simulator.handle(self.path.split("?")[0], body)
            if outcome.events is None:
                self._json(outcome.status, outcome.body)
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.end_headers()
            for event in outcome.events:
                self.wfile.write(event)
            self.wfile.flush()

    return Handler
