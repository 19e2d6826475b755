"""The embedded model's tool calls: the grammar that shapes them and the parser that reads them.

A call is written as ``<tool_call>{"name": "read", "arguments": {"path": "notes.txt"}}</tool_call>``
under a llama.cpp GBNF grammar built from the declared tools' JSON schemas (required
properties, simple types), so every emitted call parses and names a real tool. Path-like
arguments can be pinned to the file names the user mentioned (:func:`mentioned_files`): a
135M model otherwise invents paths.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pi_context import _json
from pi_context.messages import ToolDeclaration

__all__ = [
    "CALL_CLOSE",
    "CALL_OPEN",
    "PATH_NAMES",
    "arguments_grammar",
    "call_head",
    "is_complete_call",
    "mentioned_files",
    "parse_tool_calls",
    "tool_grammar",
]

CALL_OPEN = "<tool_call>"
CALL_CLOSE = "</tool_call>"

PATH_NAMES = ("path", "file", "file_path", "filename")
"""Argument names that hold a file path."""

_JSON_RULES = r"""
value ::= object | array | string | number | "true" | "false" | "null"
object ::= "{" ws ( string ws ":" ws value ( ws "," ws string ws ":" ws value )* )? ws "}"
array ::= "[" ws ( value ( ws "," ws value )* )? ws "]"
string ::= "\"" char* "\""
filled ::= "\"" char+ "\""
char ::= [^"\\\x7F\x00-\x1F] | "\\" ( ["\\/bfnrt] | "u" [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F] )
number ::= "-"? ( "0" | [1-9] [0-9]* ) ( "." [0-9]+ )? ( [eE] [-+]? [0-9]+ )?
integer ::= "-"? ( "0" | [1-9] [0-9]* )
boolean ::= "true" | "false"
ws ::= " "?
"""

_FILE_LIKE = re.compile(r"(?<![\w@])[\w./-]*\w\.[A-Za-z][A-Za-z0-9]{0,4}\b")


def _literal(text: str) -> str:
    """``text`` as a GBNF string literal."""
    return _json.js_stringify(text)


def _schema_rules(tool: ToolDeclaration, n: int, paths: Sequence[str] = ()) -> str | None:
    """GBNF rule ``args<n>`` for a tool's parameter schema (simple object schemas only).

    With ``paths``, a required string property named like a path may only take one of them.
    """
    schema = tool.get("parameters") or {}
    props = schema.get("properties")
    if schema.get("type") != "object" or not isinstance(props, dict) or not props:
        return None
    required = [name for name in schema.get("required") or list(props) if name in props]
    if not required:
        return None
    # a required string is never empty: an empty path, command or file content is no call
    kinds = {"string": "filled", "integer": "integer", "number": "number", "boolean": "boolean"}
    parts: list[str] = []
    for name in required:
        kind = kinds.get(str((props[name] or {}).get("type")), "value")
        if kind == "filled" and name in PATH_NAMES and paths:
            kind = "( " + " | ".join(_literal(_json.js_stringify(p)) for p in paths) + " )"
        parts.append(f'{_literal(_json.js_stringify(name))} ws ":" ws {kind}')
    body = ' ws "," ws '.join(parts)
    return f'args{n} ::= "{{" ws {body} ws "}}"'


def tool_grammar(
    tools: Sequence[ToolDeclaration], *, required: bool = False, paths: Sequence[str] = ()
) -> str:
    """A GBNF grammar: one well-formed call of one of ``tools``, or (unless ``required``) text.

    Text may not contain ``<t``, so it cannot begin a malformed call. ``paths`` (file names
    the user mentioned) pin path-like arguments to those names.
    """
    calls: list[str] = []
    rules: list[str] = []
    for n, tool in enumerate(tools):
        name = _literal(_json.js_stringify(tool["name"]))
        args = _schema_rules(tool, n, paths)
        if args is not None:
            rules.append(args)
        calls.append(
            f'"{{" ws "\\"name\\"" ws ":" ws {name} ws "," ws "\\"arguments\\"" ws ":" ws '
            f'{f"args{n}" if args is not None else "object"} ws "}}"'
        )
    call = (
        f"call ::= {_literal(CALL_OPEN)} ( "
        + " | ".join(f"( {c} )" for c in calls)
        + f" ) {_literal(CALL_CLOSE)}"
    )
    root = "root ::= call" if required else "root ::= call | text"
    text = 'text ::= textchar+\ntextchar ::= [^<] | "<" [^t]'
    return "\n".join([root, call, text, *rules]) + _JSON_RULES


def call_head(tool: ToolDeclaration) -> str:
    """The fixed start of a call of ``tool``: the tag and the name, up to its arguments.

    Once the tool is chosen, nothing in this text is the model's to decide, so it is written
    for the model (:func:`arguments_grammar` shapes the rest).
    """
    return f'{CALL_OPEN}{{"name": {_json.js_stringify(tool["name"])}, "arguments": '


def arguments_grammar(tool: ToolDeclaration, *, paths: Sequence[str] = ()) -> str:
    """A GBNF grammar for the rest of a call of ``tool`` after :func:`call_head`.

    The arguments as :func:`tool_grammar` shapes them, then the closing brace and tag.
    """
    args = _schema_rules(tool, 0, paths)
    rest = f'ws "}}" {_literal(CALL_CLOSE)}'
    root = f"root ::= {'args0' if args is not None else 'object'} {rest}"
    return "\n".join([root, *([args] if args is not None else [])]) + _JSON_RULES


def is_complete_call(text: str) -> bool:
    """True when ``text`` is one whole call: nothing a grammar admits can follow it."""
    stripped = text.strip()
    return stripped.startswith(CALL_OPEN) and stripped.endswith(CALL_CLOSE)


def parse_tool_calls(text: str) -> tuple[str, list[tuple[str, str, str]]]:
    """Split model output into ``(text, [(name, arguments_json, error)])``.

    Lenient for output produced without the grammar: every ``<tool_call>{...}</tool_call>``
    (closing tag optional at the end) is taken. Bad JSON or a missing name is kept as a call
    named ``invalid`` with an error, so the model sees why it failed; an unknown tool name
    is left for the tool runner to report, like any other model's.
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
        calls.append((data["name"], _json.js_stringify(args if isinstance(args, dict) else {}), ""))
    return "".join(rest).strip() if calls else "".join(rest), calls


def mentioned_files(text: str) -> list[str]:
    """File-like words in ``text`` (``notes.txt``, ``src/app.py``), in order, once each."""
    return list(dict.fromkeys(m.group(0) for m in _FILE_LIKE.finditer(text)))
