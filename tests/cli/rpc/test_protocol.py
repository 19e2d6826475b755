"""RPC framing, records and the extension UI sub-protocol, in-process."""

from __future__ import annotations

import asyncio
import io
import os
from typing import Any

import pytest

from pi_context.cli.rpc.extension_ui import RpcExtensionUI
from pi_context.cli.rpc.framing import (
    OVERLONG,
    LineReader,
    RecordWriter,
    encode_record,
    split_lines,
)
from pi_context.cli.rpc.records import (
    NO_DATA,
    RpcCommandError,
    failure,
    parse_command,
    parse_error_message,
    success,
)
from pi_context.cli.rpc.user_bash import UserBash
from pi_context.model import ModelInfo
from pi_context.model.thinking import (
    clamp_thinking_level,
    cycle_thinking_level,
    supported_thinking_levels,
)

# -- framing ----------------------------------------------------------------------------------------


def test_records_are_compact_with_raw_unicode_and_javascript_numbers() -> None:
    record = {"type": "x", "text": "é\u2028中", "n": 0.0, "f": 1.5, "list": [1, None]}
    assert encode_record(record) == (
        '{"type":"x","text":"é\u2028中","n":0,"f":1.5,"list":[1,null]}\n'.encode()
    )


def test_lines_split_on_lf_only_and_lose_one_trailing_cr() -> None:
    assert split_lines("a\r\nb\rc\n\nrest") == (["a", "b\rc", ""], "rest")


async def test_reader_joins_multibyte_characters_split_across_reads() -> None:
    read_fd, write_fd = os.pipe()
    data = '{"m":"é"}\r\n\n{"tail":1}'.encode()
    cut = data.index("é".encode()) + 1  # in the middle of the two-byte character
    lines: list[str] = []

    async def collect() -> None:
        async for line in LineReader(read_fd).lines():
            assert isinstance(line, str)
            lines.append(line)

    task = asyncio.create_task(collect())
    os.write(write_fd, data[:cut])
    await asyncio.sleep(0.05)
    os.write(write_fd, data[cut:])
    os.close(write_fd)
    await asyncio.wait_for(task, 30)
    os.close(read_fd)
    assert lines == ['{"m":"é"}', "", '{"tail":1}']


async def test_an_overlong_line_is_skipped_and_reported() -> None:
    read_fd, write_fd = os.pipe()
    os.write(write_fd, b'{"ok":1}\n' + b"x" * 50 + b"\n" + b'{"ok":2}\n' + b"y" * 50)
    os.close(write_fd)
    got = [line async for line in LineReader(read_fd, max_line=20).lines()]
    os.close(read_fd)
    assert got == ['{"ok":1}', OVERLONG, '{"ok":2}', OVERLONG]


def test_writer_stops_after_a_failed_write() -> None:
    class Broken(io.BytesIO):
        def write(self, data: Any) -> int:
            raise BrokenPipeError(32, "Broken pipe")

    failures: list[OSError] = []
    writer = RecordWriter(Broken(), on_failure=failures.append)
    writer.write({"type": "a"})
    writer.write({"type": "b"})
    assert len(failures) == 1
    assert isinstance(writer.failed, BrokenPipeError)


# -- records ----------------------------------------------------------------------------------------


def test_response_key_order_and_omitted_fields() -> None:
    assert list(success("get_state", "1", {"a": 1})) == ["id", "type", "command", "success", "data"]
    assert success("abort", None) == {"type": "response", "command": "abort", "success": True}
    assert success("x", None, NO_DATA) == success("x", None)
    assert success("cycle_model", "2", None)["data"] is None  # null is data, not "no data"
    assert failure(None, "3", "Unknown command: undefined") == {
        "id": "3",
        "type": "response",
        "success": False,
        "error": "Unknown command: undefined",
    }


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("not json", "Unexpected token 'o', \"not json\" is not valid JSON"),
        ("", "Unexpected end of JSON input"),
        ("   ", "Unexpected end of JSON input"),
        ('{"a":1', "Expected ',' or '}' after property value in JSON at position 6"),
        ("[1", "Expected ',' or ']' after array element in JSON at position 2"),
        ("{a:1}", "Expected property name or '}' in JSON at position 1"),
        ('{"a":1} x', "Unexpected non-whitespace character after JSON at position 8"),
        ('"abc', "Unterminated string in JSON at position 4"),
        ("hello world this is long", "Unexpected token 'h', \"hello worl\"... is not valid JSON"),
        ("NaN", "Unexpected token 'N', \"NaN\" is not valid JSON"),
    ],
)
def test_parse_errors_read_like_node(text: str, message: str) -> None:
    assert parse_error_message(text) == message
    with pytest.raises(RpcCommandError) as caught:
        parse_command(text)
    assert str(caught.value) == f"Failed to parse command: {message}"


def test_commands_without_a_string_type_have_no_type() -> None:
    assert parse_command("[1]").type is None
    assert parse_command('{"type": 3, "id": "x"}').type is None
    parsed = parse_command('{"type": "steer", "id": "x", "message": "hi"}')
    assert (parsed.type, parsed.id, parsed.fields["message"]) == ("steer", "x", "hi")


# -- thinking levels --------------------------------------------------------------------------------


def _info(*, reasoning: bool) -> ModelInfo:
    return ModelInfo("p", "m", "openai-completions", 1000, 100, reasoning=reasoning)


def test_levels_clamp_and_cycle() -> None:
    plain, thinker = _info(reasoning=False), _info(reasoning=True)
    assert supported_thinking_levels(plain) == supported_thinking_levels(None) == ("off",)
    assert clamp_thinking_level(plain, "high") == clamp_thinking_level(None, "high") == "off"
    assert clamp_thinking_level(thinker, "xhigh") == "high"  # nothing above: the nearest below
    assert clamp_thinking_level(thinker, "bogus") == "off"  # unknown: the first supported
    assert cycle_thinking_level(plain, "off") is None
    assert cycle_thinking_level(None, "off") is None
    assert cycle_thinking_level(thinker, "high") == "off"
    assert cycle_thinking_level(thinker, "max") == "off"


# -- extension UI -----------------------------------------------------------------------------------


async def test_dialogs_wait_for_the_matching_response() -> None:
    sent: list[dict[str, Any]] = []
    ids = iter(["id-1", "id-2", "id-3"])
    ui = RpcExtensionUI(sent.append, ids=lambda: next(ids))
    confirm = asyncio.create_task(ui.confirm("Deploy?", "Target prod", timeout=5000))
    await asyncio.sleep(0)
    assert sent == [
        {
            "type": "extension_ui_request",
            "id": "id-1",
            "method": "confirm",
            "title": "Deploy?",
            "message": "Target prod",
            "timeout": 5000,
        }
    ]
    ui.resolve({"type": "extension_ui_response", "id": "unknown", "confirmed": False})
    ui.resolve({"type": "extension_ui_response", "id": "id-1", "confirmed": True})
    assert await confirm is True
    select = asyncio.create_task(ui.select("Pick", ["a", "b"]))
    await asyncio.sleep(0)
    ui.resolve({"id": "id-2", "cancelled": True})
    assert await select is None
    ui.notify("deployed", "info")
    assert sent[-1] == {
        "type": "extension_ui_request",
        "id": "id-3",
        "method": "notify",
        "message": "deployed",
        "notifyType": "info",
    }
    assert ui.pending == 0


async def test_a_dialog_timeout_gives_the_default() -> None:
    ui = RpcExtensionUI(lambda _r: None)
    assert await ui.input("Name?", timeout=1) is None
    assert await ui.confirm("Sure?", "really", timeout=1) is False
    assert ui.pending == 0
    assert ui.set_theme("dark") == {
        "success": False,
        "error": "Theme switching not supported in RPC mode",
    }


# -- user bash --------------------------------------------------------------------------------------


async def test_abort_bash_cancels_a_running_command(tmp_path: Any) -> None:
    bash = UserBash()
    seen: list[str] = []
    run = asyncio.create_task(
        bash.run("echo started; sleep 60", cwd=str(tmp_path), on_output=seen.append)
    )
    while not seen:
        await asyncio.sleep(0.01)
    bash.abort_all()
    result = await asyncio.wait_for(run, 30)
    assert result.cancelled is True
    assert result.exit_code is None
    assert result.to_json() == {"output": "started\n", "cancelled": True, "truncated": False}
