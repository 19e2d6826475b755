"""Tool declarations, argument validation and the error boundary of run_tool."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest

from pi_context.errors import ToolError
from pi_context.tools import (
    BUILTIN_TOOL_NAMES,
    ContextTool,
    FunctionTool,
    Tool,
    ToolContext,
    ToolOutcome,
    default_tools,
    run_tool,
    select_tools,
    text_outcome,
    tool_declarations,
)
from pi_context.tools.base import CONSTRAINED_SAMPLING, resolve_path, validate_arguments


class Boom(Tool):
    name = "boom"
    description = "raises"
    parameters = {"type": "object", "required": [], "properties": {"n": {"type": "integer"}}}  # noqa: RUF012

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc

    async def execute(self, call_id: str, arguments: dict[str, Any], **_: Any) -> ToolOutcome:
        raise self.exc


def test_default_tools_in_pi_order_with_pi_schema_layout() -> None:
    tools = default_tools()
    assert [t.name for t in tools] == list(BUILTIN_TOOL_NAMES) == ["read", "bash", "edit", "write"]
    decls = tool_declarations(tools)
    for decl in decls:
        assert list(decl) == ["name", "description", "parameters", "constrainedSampling"]
        assert decl["constrainedSampling"] == CONSTRAINED_SAMPLING
        assert list(decl["parameters"]) == ["type", "required", "properties"]
        for prop in decl["parameters"]["properties"].values():
            assert next(iter(prop)) == "type"
    edits = decls[2]["parameters"]["properties"]["edits"]
    assert list(edits) == ["type", "items", "description"]
    # Declarations are copies: changing one never changes the tool.
    decls[0]["parameters"]["properties"].clear()
    assert tool_declarations(tools)[0]["parameters"]["properties"]
    json.dumps(decls)


def test_write_and_edit_share_one_lock_table() -> None:
    tools = {t.name: t for t in default_tools()}
    assert tools["edit"].locks is tools["write"].locks  # type: ignore[attr-defined]


def test_select_tools_keeps_requested_order_and_skips_unknown() -> None:
    tools = default_tools()
    assert [t.name for t in select_tools(tools, ["write", "nope", "read", "write"])] == [
        "write",
        "read",
    ]


def test_validation_coerces_and_drops_null_optionals() -> None:
    read = default_tools()[0]
    assert validate_arguments(read, {"path": "a", "offset": "5", "limit": None}) == {
        "path": "a",
        "offset": 5,
    }


def test_numbers_given_for_strings_are_spelled_as_javascript_does() -> None:
    read = default_tools()[0]
    for number, text in ((7, "7"), (2.0, "2"), (0.5, "0.5"), (1e21, "1e+21"), (1e-7, "1e-7")):
        assert validate_arguments(read, {"path": number})["path"] == text


def test_validation_error_lists_every_problem() -> None:
    edit = default_tools()[2]
    with pytest.raises(ToolError) as info:
        validate_arguments(edit, {"path": 3.5, "edits": [{"oldText": 1, "newText": []}]})
    lines = str(info.value).split("\n")
    assert lines[0] == 'Validation failed for tool "edit":'
    assert "  - edits.0.newText: must be string" in lines
    assert "Received arguments:" in lines


async def test_run_tool_turns_any_failure_into_an_error_result(tmp_path: Path) -> None:
    for exc, text in [
        (ToolError("bad call"), "bad call"),
        (RuntimeError("kaput"), "kaput"),
        (
            FileNotFoundError(2, "No such file or directory", "/x"),
            "ENOENT: no such file or directory, '/x'",
        ),
    ]:
        out = await run_tool(Boom(exc), "c", {}, cwd=tmp_path)
        assert out == ToolOutcome([{"type": "text", "text": text}], {}, True)
    out = await run_tool(Boom(RuntimeError()), "c", "not an object", cwd=tmp_path)
    assert out.is_error
    assert out.text.startswith('Validation failed for tool "boom":\n  - root: must be object')


async def test_cancellation_propagates(tmp_path: Path) -> None:
    with pytest.raises(asyncio.CancelledError):
        await run_tool(Boom(asyncio.CancelledError()), "c", {}, cwd=tmp_path)


async def test_signal_set_before_start_aborts(tmp_path: Path) -> None:
    signal = asyncio.Event()
    signal.set()
    out = await run_tool(Boom(RuntimeError()), "c", {}, cwd=tmp_path, signal=signal)
    assert out.text == "Operation aborted"


def test_resolve_path(tmp_path: Path) -> None:
    assert resolve_path("a.txt", tmp_path) == tmp_path / "a.txt"
    assert resolve_path("@a.txt", tmp_path) == tmp_path / "a.txt"
    assert resolve_path("~/x", tmp_path) == Path.home() / "x"
    assert resolve_path("file:///etc/hosts", tmp_path) == Path("/etc/hosts")
    assert resolve_path("a\u202fb", tmp_path) == tmp_path / "a b"


def test_text_outcome() -> None:
    assert text_outcome("x").text == "x"


class Probe(ContextTool):
    """Records the context of each call and says whether it was asked to stop."""

    name = "probe"
    description = "records its context"
    parameters = {"type": "object", "properties": {"n": {"type": "integer"}}}  # noqa: RUF012

    def __init__(self) -> None:
        self.calls: list[tuple[dict[str, Any], ToolContext]] = []

    async def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        self.calls.append((arguments, ctx))
        return text_outcome("stopped" if ctx.aborted else "ran")


async def test_context_tool_receives_the_whole_call(tmp_path: Path) -> None:
    probe = Probe()
    signal = asyncio.Event()
    updates: list[ToolOutcome] = []
    out = await run_tool(
        probe, "c7", {"n": "3"}, cwd=tmp_path, signal=signal, on_update=updates.append
    )
    assert out.text == "ran"
    [(arguments, ctx)] = probe.calls
    assert arguments == {"n": 3}
    assert (ctx.call_id, ctx.cwd, ctx.signal) == ("c7", tmp_path, signal)
    assert ctx.on_update == updates.append
    signal.set()
    assert ctx.aborted


async def test_context_tool_sees_an_abort_and_gets_a_path_cwd(tmp_path: Path) -> None:
    probe = Probe()
    signal = asyncio.Event()
    signal.set()
    out = await probe.execute("c8", {}, cwd=str(tmp_path), signal=signal)  # type: ignore[arg-type]
    assert out.text == "stopped"
    assert probe.calls[0][1].cwd == tmp_path
    assert not ToolContext("c9", tmp_path).aborted


def test_builtin_tools_are_context_tools_with_constrained_sampling() -> None:
    for tool in default_tools():
        assert isinstance(tool, ContextTool)
        assert tool.declaration()["constrainedSampling"] == CONSTRAINED_SAMPLING


# --- FunctionTool: any function, any result, checked at construction ---------------------

_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["n"],
    "properties": {"n": {"type": "integer"}},
}


async def _call(tool: Tool, arguments: dict[str, Any], tmp_path: Path) -> ToolOutcome:
    return await run_tool(tool, "c1", arguments, cwd=tmp_path)


@pytest.mark.parametrize(
    ("result", "text"),
    [
        ({"n": 2, "items": ["a"]}, '{"n": 2, "items": ["a"]}'),
        (7, "7"),
        ([1, "x"], '[1, "x"]'),
        (None, "null"),
        ("plain", "plain"),
        ("é ✓", "é ✓"),
    ],
)
async def test_a_function_tool_result_of_any_json_value_becomes_its_text(
    tmp_path: Path, result: Any, text: str
) -> None:
    async def fn(args: dict[str, Any], cwd: Path) -> Any:
        return result

    outcome = await _call(FunctionTool("f", "d", _SCHEMA, fn), {"n": 1}, tmp_path)
    assert (outcome.text, outcome.is_error) == (text, False)


async def test_a_result_that_is_no_json_is_an_error_result_naming_tool_and_type(
    tmp_path: Path,
) -> None:
    async def fn(args: dict[str, Any], cwd: Path) -> Any:
        return object()

    outcome = await _call(FunctionTool("odd", "d", _SCHEMA, fn), {"n": 1}, tmp_path)
    assert outcome.is_error
    assert outcome.text == (
        'Tool "odd" returned a object, which is neither text, JSON data nor a ToolOutcome'
    )


async def test_a_plain_function_runs_off_the_event_loop(tmp_path: Path) -> None:
    import threading

    seen: list[tuple[bool, Path]] = []

    def fn(args: dict[str, Any], cwd: Path) -> str:
        seen.append((threading.current_thread() is threading.main_thread(), cwd))
        return f"n={args['n']}"

    outcome = await _call(FunctionTool("sync", "d", _SCHEMA, fn), {"n": "3"}, tmp_path)
    assert (outcome.text, outcome.is_error) == ("n=3", False)
    assert seen == [(False, tmp_path)]


async def test_an_object_with_an_async_call_is_awaited(tmp_path: Path) -> None:
    class Counter:
        async def __call__(self, args: dict[str, Any], cwd: Path) -> dict[str, int]:
            return {"twice": args["n"] * 2}

    outcome = await _call(FunctionTool("count", "d", _SCHEMA, Counter()), {"n": 4}, tmp_path)
    assert outcome.text == '{"twice": 8}'


@pytest.mark.parametrize(
    ("name", "parameters", "function", "error", "message"),
    [
        ("has space", _SCHEMA, print, ValueError, "tool name 'has space' is invalid"),
        ("x" * 65, _SCHEMA, print, ValueError, "is invalid: use 1 to 64"),
        ("", _SCHEMA, print, ValueError, "is invalid"),
        ("ok", {"properties": {}}, print, ValueError, '"type": "object"'),
        ("ok", "{}", print, TypeError, "parameters must be a JSON-schema dict"),
        (
            "ok",
            {"type": "object", "required": ["n"], "properties": {}},
            print,
            ValueError,
            '"required" names \'n\', which is not in "properties"',
        ),
        ("ok", _SCHEMA, "not callable", TypeError, "function must be callable, not str"),
    ],
)
def test_construction_checks_name_schema_and_function(
    name: str, parameters: Any, function: Any, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=re.escape(message)):
        FunctionTool(name, "d", parameters, function)


def test_a_tool_that_returns_no_outcome_is_an_error_result_not_a_crash(tmp_path: Path) -> None:
    class Sloppy(Tool):
        name = "sloppy"
        description = "returns a dict"
        parameters = {"type": "object", "properties": {}}  # noqa: RUF012

        async def execute(self, call_id: str, arguments: dict[str, Any], **_: Any) -> Any:
            return {"ok": True}

    outcome = asyncio.run(_call(Sloppy(), {}, tmp_path))
    assert (outcome.text, outcome.is_error) == ('{"ok": true}', False)
