"""What a tool is, what it returns, and the one place a tool call is run.

A :class:`Tool` has a name, a description written for the model, a JSON-schema for its
arguments, and an async :meth:`Tool.execute`. :func:`run_tool` is what the agent loop calls:
it prepares and validates the model's arguments (coercing ``"5"`` to ``5`` like pi does) and
turns every failure into an error :class:`ToolOutcome`, because a bad tool call is something
the model must see and correct, never an exception that ends the run.

Cancellation: pass an :class:`asyncio.Event` as ``signal``; a tool that sees it set stops and
returns an aborted error result. Cancelling the task that runs the tool also stops it (``bash``
kills its process group) and propagates :class:`asyncio.CancelledError`.
"""

from __future__ import annotations

import asyncio
import errno
import json
import os
import re
import unicodedata
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final
from urllib.parse import unquote, urlparse

from pi_context._json import js_number
from pi_context.errors import ToolError
from pi_context.messages import TextContent, ToolDeclaration, UserContent, text_block
from pi_context.prompt.replay import to_tool_declaration

__all__ = [
    "ABORTED_TEXT",
    "CONSTRAINED_SAMPLING",
    "AbortSignal",
    "ContextTool",
    "FunctionTool",
    "PathLocks",
    "Tool",
    "ToolContext",
    "ToolFunction",
    "ToolOutcome",
    "UpdateCallback",
    "error_outcome",
    "os_error_message",
    "read_path_variants",
    "resolve_path",
    "run_tool",
    "text_outcome",
    "utf8_bytes",
    "validate_arguments",
    "without_surrogates",
]

AbortSignal = asyncio.Event
"""Set it to ask a running tool to stop."""

CONSTRAINED_SAMPLING: Final[dict[str, str]] = {"type": "json_schema", "strict": "prefer"}
"""What pi declares for its built-in tools: prefer strict JSON-schema sampling."""

ABORTED_TEXT: Final = "Operation aborted"
"""The error text of a call stopped by its abort signal."""


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    """A tool's result: content blocks for the model, optional details, and the error flag.

    ``details`` ``None`` means "no details" (the key is left out of the stored result).
    ``structured_content`` is the result in a form for programs rather than the model (``read``:
    the text; ``bash``: output, exit code, wall time); it travels in ``tool_execution_end`` as
    pi's ``structuredContent`` and is never stored in the session.
    """

    content: list[UserContent]
    details: Any = None
    is_error: bool = False
    structured_content: Any = None

    @property
    def text(self) -> str:
        return "".join(b["text"] for b in self.content if b["type"] == "text")


UpdateCallback = Callable[[ToolOutcome], None]
"""Receives partial results while a tool runs (``tool_execution_update``)."""


def text_outcome(text: str, *, details: Any = None, is_error: bool = False) -> ToolOutcome:
    return ToolOutcome([text_block(text)], details, is_error)


def error_outcome(message: str) -> ToolOutcome:
    """An error result as pi builds it from a thrown error: the message and empty details."""
    block: TextContent = text_block(message)
    return ToolOutcome([block], {}, True)


class Tool(ABC):
    """A tool the model can call.

    Subclasses set ``name``, ``description`` and ``parameters`` and implement :meth:`execute`
    (or derive from :class:`ContextTool` and implement ``run``), which may raise
    :class:`~pi_context.errors.ToolError` for a call it cannot carry out.
    ``prompt_snippet`` (one line for the ``<tools>`` section) and ``prompt_guidelines``
    (bullets for ``<rules>``) feed the system prompt.
    """

    name: str
    description: str
    parameters: dict[str, Any]
    prompt_snippet: str | None = None
    prompt_guidelines: tuple[str, ...] = ()
    constrained_sampling: dict[str, Any] | None = None

    def declaration(self) -> ToolDeclaration:
        """The declaration sent to the model: ``{name, description, parameters[, constrainedSampling]}``."""
        return to_tool_declaration(
            {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
                "constrainedSampling": self.constrained_sampling,
            }
        )

    def prepare_arguments(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """Repair common argument shapes before validation (default: unchanged)."""
        return arguments

    @abstractmethod
    async def execute(
        self,
        call_id: str,
        arguments: dict[str, Any],
        *,
        cwd: Path,
        signal: AbortSignal | None = None,
        on_update: UpdateCallback | None = None,
    ) -> ToolOutcome:
        """Run the call with validated arguments."""


@dataclass(frozen=True, slots=True)
class ToolContext:
    """Everything about one call except its arguments, as :meth:`ContextTool.run` gets it."""

    call_id: str
    cwd: Path
    signal: AbortSignal | None = None
    on_update: UpdateCallback | None = None

    @property
    def aborted(self) -> bool:
        """Whether the caller has asked the call to stop."""
        return self.signal is not None and self.signal.is_set()


class ContextTool(Tool):
    """A tool written as ``run(arguments, ctx)``: the call's surroundings come as one value.

    The built-in tools and :class:`FunctionTool` use it; :meth:`Tool.execute` stays the one
    interface the agent calls.
    """

    async def execute(
        self,
        call_id: str,
        arguments: dict[str, Any],
        *,
        cwd: Path,
        signal: AbortSignal | None = None,
        on_update: UpdateCallback | None = None,
    ) -> ToolOutcome:
        return await self.run(arguments, ToolContext(call_id, Path(cwd), signal, on_update))

    @abstractmethod
    async def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        """Run the call with validated arguments."""


ToolFunction = Callable[[dict[str, Any], Path], Awaitable["ToolOutcome | str"]]
"""``async (arguments, cwd) -> ToolOutcome | str`` for :class:`FunctionTool`."""


class FunctionTool(ContextTool):
    """A tool made from an async function (the easy way for extensions to add one).

    ::

        async def shout(args, cwd):
            return args["text"].upper()

        pi.register_tool(FunctionTool("shout", "Upper-case a text.", {
            "type": "object", "required": ["text"],
            "properties": {"text": {"type": "string", "description": "Text to shout"}},
        }, shout))

    A plain string result becomes one text block; raise :class:`ToolError` for a bad call.
    """

    def __init__(
        self,
        name: str,
        description: str,
        parameters: dict[str, Any],
        function: ToolFunction,
        *,
        prompt_snippet: str | None = None,
        prompt_guidelines: Sequence[str] = (),
    ) -> None:
        self.name = name
        self.description = description
        self.parameters = parameters
        self.function = function
        self.prompt_snippet = prompt_snippet
        self.prompt_guidelines = tuple(prompt_guidelines)

    async def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        result = await self.function(arguments, ctx.cwd)
        return text_outcome(result) if isinstance(result, str) else result


# --- argument validation -------------------------------------------------------------------

_JSON_TYPES: Final = frozenset(
    ("string", "number", "integer", "boolean", "object", "array", "null")
)


def _coerce(value: Any, schema: Mapping[str, Any]) -> Any:
    """Coerce scalars the way pi's validator does before checking types."""
    kind = schema.get("type")
    if kind in ("number", "integer") and isinstance(value, str):
        try:
            number = float(value.strip()) if value.strip() else None
        except ValueError:
            return value
        if number is None:
            return value
        if number.is_integer() and (kind == "integer" or "." not in value):
            return int(number)
        return number
    if kind in ("number", "integer") and isinstance(value, bool):
        return int(value)
    if kind == "boolean" and isinstance(value, str) and value in ("true", "false"):
        return value == "true"
    if kind == "string" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return js_number(value)
    return value


def _type_ok(value: Any, kind: str) -> bool:
    if kind == "string":
        return isinstance(value, str)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "integer":
        return (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, float) and value.is_integer()
        )
    if kind == "object":
        return isinstance(value, dict)
    if kind == "array":
        return isinstance(value, list)
    return value is None


def _validate(value: Any, schema: Mapping[str, Any], path: str, errors: list[str]) -> Any:
    kind = schema.get("type")
    if isinstance(kind, str) and kind in _JSON_TYPES:
        value = _coerce(value, schema)
        if not _type_ok(value, kind):
            errors.append(f"{path or 'root'}: must be {kind}")
            return value
    if isinstance(value, dict):
        props: Mapping[str, Any] = schema.get("properties", {})
        required: Sequence[str] = schema.get("required", ())
        out: dict[str, Any] = {}
        for key, item in value.items():
            if item is None and key in props and key not in required:
                continue  # null for an omitted optional argument
            sub = props.get(key)
            out[key] = (
                _validate(item, sub, f"{path}.{key}" if path else key, errors) if sub else item
            )
        for key in required:
            if key not in out:
                errors.append(f"{path or 'root'}: must have required property '{key}'")
        return out
    if isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        return [
            _validate(item, schema["items"], f"{path}.{i}" if path else str(i), errors)
            for i, item in enumerate(value)
        ]
    return value


def validate_arguments(tool: Tool, arguments: Any) -> dict[str, Any]:
    """Coerce and check ``arguments`` against ``tool.parameters``.

    Raises :class:`ToolError` with pi's message layout (one line per problem, then the
    arguments received) when they do not fit.
    """
    errors: list[str] = []
    value = _validate(arguments, tool.parameters, "", errors)
    if errors or not isinstance(value, dict):
        lines = "\n".join(f"  - {e}" for e in errors) or "  - root: must be object"
        received = json.dumps(arguments, indent=2, ensure_ascii=False)
        raise ToolError(
            f'Validation failed for tool "{tool.name}":\n{lines}\n\nReceived arguments:\n{received}'
        )
    return value


async def run_tool(
    tool: Tool,
    call_id: str,
    arguments: Any,
    *,
    cwd: Path,
    signal: AbortSignal | None = None,
    on_update: UpdateCallback | None = None,
) -> ToolOutcome:
    """Prepare, validate and execute one call; every failure becomes an error outcome.

    Only :class:`asyncio.CancelledError` (task cancellation) propagates.
    """
    if signal is not None and signal.is_set():
        return error_outcome(ABORTED_TEXT)
    try:
        args = tool.prepare_arguments(dict(arguments)) if isinstance(arguments, dict) else arguments
        valid = validate_arguments(tool, args)
        return await tool.execute(call_id, valid, cwd=cwd, signal=signal, on_update=on_update)
    except ToolError as exc:
        return error_outcome(str(exc))
    except OSError as exc:
        return error_outcome(os_error_message(exc))
    except Exception as exc:  # noqa: BLE001 - extension tools are third-party code
        return error_outcome(str(exc) or type(exc).__name__)


def os_error_message(exc: OSError, syscall: str | None = None) -> str:
    """An OS error the way Node prints it: ``ENOENT: no such file or directory, open '<path>'``."""
    code = errno.errorcode.get(exc.errno or 0, "EIO")
    reason = exc.strerror or str(exc)
    target = f" '{exc.filename}'" if exc.filename else ""
    where = f", {syscall}{target}" if syscall else (f",{target}" if target else "")
    return f"{code}: {reason[:1].lower()}{reason[1:]}{where}"


# --- text ---------------------------------------------------------------------------------

_SURROGATE = re.compile("[\ud800-\udfff]")


def without_surrogates(text: str) -> str:
    """``text`` with lone surrogates (or escaped undecodable bytes) shown as U+FFFD."""
    if text.isascii():  # the common case, checked at C speed
        return text
    return _SURROGATE.sub("\ufffd", text)


def utf8_bytes(text: str) -> bytes:
    """UTF-8 for writing a file; lone surrogates become U+FFFD as in Node."""
    return without_surrogates(text).encode("utf-8")


# --- paths --------------------------------------------------------------------------------

_UNICODE_SPACES: Final = frozenset(
    "\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u202f\u205f\u3000"
)


def resolve_path(raw: str, cwd: Path) -> Path:
    """Resolve a path the model gave: one leading ``@`` dropped, odd spaces made plain,
    ``~`` expanded, ``file://`` URLs accepted, relative paths taken from ``cwd``."""
    text = raw[1:] if raw.startswith("@") else raw
    text = "".join(" " if ch in _UNICODE_SPACES else ch for ch in text)
    if text.startswith("file://"):
        text = unquote(urlparse(text).path)
    if text == "~" or text.startswith("~/"):
        text = str(Path.home()) + text[1:]
    path = Path(text)
    return path if path.is_absolute() else Path(cwd) / path


def read_path_variants(path: Path) -> list[Path]:
    """Other spellings to try when a file to read does not exist (macOS screenshot names)."""
    text = str(path)
    narrow = text.replace(" AM.", "\u202fAM.").replace(" PM.", "\u202fPM.")
    nfd = unicodedata.normalize("NFD", text)
    curly = text.replace("'", "\u2019")
    candidates = [narrow, nfd, curly, unicodedata.normalize("NFD", curly)]
    seen = {text}
    out: list[Path] = []
    for cand in candidates:
        if cand not in seen:
            seen.add(cand)
            out.append(Path(cand))
    return out


@dataclass
class PathLocks:
    """Serializes file mutations (``write``/``edit``) per absolute path within one event loop."""

    _locks: dict[str, asyncio.Lock] = field(default_factory=dict)

    def lock(self, path: Path) -> asyncio.Lock:
        key = os.path.normpath(str(path))
        if key not in self._locks:
            self._locks[key] = asyncio.Lock()
        return self._locks[key]
