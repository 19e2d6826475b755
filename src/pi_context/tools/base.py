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
import inspect
import json
import os
import re
import unicodedata
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final
from urllib.parse import unquote, urlparse

from msgspec import Struct, field

from pi_context._json import js_number
from pi_context.errors import ToolError
from pi_context.messages import TextContent, ToolDeclaration, UserContent, text_block
from pi_context.prompt.replay import to_tool_declaration

__all__ = [
    "ABORTED_TEXT",
    "CONSTRAINED_SAMPLING",
    "TOOL_NAME",
    "AbortSignal",
    "ContextTool",
    "FunctionTool",
    "PathLocks",
    "Tool",
    "ToolContext",
    "ToolFunction",
    "ToolOutcome",
    "UpdateCallback",
    "check_parameters",
    "check_tool_name",
    "error_outcome",
    "os_error_message",
    "read_path_variants",
    "resolve_path",
    "result_outcome",
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


class ToolOutcome(Struct, frozen=True):
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
    (bullets for ``<rules>``) feed the system prompt. A tool named like a built-in replaces
    it only when ``replaces_builtin`` is true.
    """

    name: str
    description: str
    parameters: dict[str, Any]
    prompt_snippet: str | None = None
    prompt_guidelines: tuple[str, ...] = ()
    constrained_sampling: dict[str, Any] | None = None
    replaces_builtin: bool = False
    """Whether this tool may take the place of the built-in tool of the same name."""
    exposure: str = "direct"
    """How the tool reaches the model: ``direct`` (declared while active), ``deferred``
    (registered but declared only once something loads it, e.g. ``tool_search``) or
    ``model-only`` (a discovery tool the agent activates itself)."""

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


class ToolContext(Struct, frozen=True):
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


ToolFunction = Callable[[dict[str, Any], Path], Any]
"""``(arguments, cwd) -> result`` for :class:`FunctionTool`: async or not, any result."""

TOOL_NAME: Final = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
"""A name every provider accepts for a tool (letters, digits, ``_``, ``-``; at most 64)."""


def check_tool_name(name: object) -> str:
    """``name`` when it is a valid tool name, else :class:`ValueError` saying the rule."""
    if not isinstance(name, str):
        raise TypeError(f"a tool name must be a text, not {type(name).__name__}")
    if not TOOL_NAME.match(name):
        raise ValueError(
            f"tool name {name!r} is invalid: use 1 to 64 letters, digits, '_' or '-' "
            "(what every provider accepts)"
        )
    return name


def check_parameters(name: str, parameters: object) -> dict[str, Any]:
    """``parameters`` when it is a JSON-schema object a model can fill, else an error naming
    the tool and the problem."""
    where = f"tool {name!r}: parameters"
    if not isinstance(parameters, dict):
        raise TypeError(f"{where} must be a JSON-schema dict, not {type(parameters).__name__}")
    if parameters.get("type") != "object":
        raise ValueError(f'{where} must be a JSON schema with "type": "object"')
    properties = parameters.get("properties", {})
    if not isinstance(properties, Mapping) or not all(
        isinstance(key, str) and isinstance(value, Mapping) for key, value in properties.items()
    ):
        raise ValueError(f'{where}: "properties" must map names to schemas')
    required = parameters.get("required", [])
    if not isinstance(required, list) or not all(isinstance(key, str) for key in required):
        raise ValueError(f'{where}: "required" must be a list of property names')
    missing = [key for key in required if key not in properties]
    if missing:
        raise ValueError(f'{where}: "required" names {missing[0]!r}, which is not in "properties"')
    try:
        json.dumps(parameters, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{where} must be plain JSON data: {exc}") from None
    return parameters


def result_outcome(name: str, result: object) -> ToolOutcome:
    """Any value a tool function returned, as the result the model sees: a
    :class:`ToolOutcome` as it is, a text as one text block, JSON-able data as its JSON, and
    anything else as an error result naming the tool and the type."""
    if isinstance(result, ToolOutcome):
        return result
    if isinstance(result, str):
        return text_outcome(result)
    try:
        text = json.dumps(result, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError):
        return error_outcome(
            f'Tool "{name}" returned a {type(result).__name__}, which is neither text, '
            "JSON data nor a ToolOutcome"
        )
    return text_outcome(text)


class FunctionTool(ContextTool):
    """A tool made from a function (the easy way for extensions and library users to add one).

    ::

        async def shout(args, cwd):
            return args["text"].upper()

        FunctionTool("shout", "Upper-case a text.", {
            "type": "object", "required": ["text"],
            "properties": {"text": {"type": "string", "description": "Text to shout"}},
        }, shout)

    The function gets the validated arguments and the working directory. It may be async, or
    a plain function, which runs in a worker thread so that it never blocks the event loop.
    Its result may be a text (one text block), a :class:`ToolOutcome`, or other JSON data
    (``dict``, ``list``, numbers, ``None``: sent as JSON text); anything else becomes an error
    result naming the tool and the type. Raise :class:`ToolError` for a bad call.

    The name (1 to 64 letters, digits, ``_``, ``-``), the schema (a JSON-schema object whose
    ``required`` names are properties) and the function are checked here. A tool named like a
    built-in (``read``, ``bash``, ``edit``, ``write``) replaces it only with
    ``replaces_builtin=True``.
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
        replaces_builtin: bool = False,
    ) -> None:
        self.name = check_tool_name(name)
        if not isinstance(description, str):
            raise TypeError(f"tool {name!r}: description must be a text")
        self.description = description
        self.parameters = check_parameters(name, parameters)
        if not callable(function):
            raise TypeError(
                f"tool {name!r}: function must be callable, not {type(function).__name__}"
            )
        self.function = function
        # an object whose __call__ is async counts as an async function
        call = type(function).__call__ if not inspect.isroutine(function) else function
        self._is_async = inspect.iscoroutinefunction(function) or inspect.iscoroutinefunction(call)
        if isinstance(prompt_guidelines, str):
            raise TypeError(f"tool {name!r}: prompt_guidelines must be a sequence of texts")
        self.prompt_snippet = prompt_snippet
        self.prompt_guidelines = tuple(prompt_guidelines)
        self.replaces_builtin = bool(replaces_builtin)

    async def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        if self._is_async:
            result = await self.function(arguments, ctx.cwd)
        else:
            result = await asyncio.to_thread(self.function, arguments, ctx.cwd)
            if inspect.isawaitable(result):  # a plain function that hands back a coroutine
                result = await result
        return result_outcome(self.name, result)


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
        outcome: object = await tool.execute(
            call_id, valid, cwd=cwd, signal=signal, on_update=on_update
        )
        # a third-party tool may return something else despite its annotation
        return result_outcome(tool.name, outcome)
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


class PathLocks(Struct):
    """Serializes file mutations (``write``/``edit``) per absolute path within one event loop."""

    _locks: dict[str, asyncio.Lock] = field(default_factory=dict)

    def lock(self, path: Path) -> asyncio.Lock:
        key = os.path.normpath(str(path))
        if key not in self._locks:
            self._locks[key] = asyncio.Lock()
        return self._locks[key]
