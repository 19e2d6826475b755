"""Clipboard paste (spec §4.7) through fake ``wl-paste`` and ``xclip`` tools on PATH: file
paths, an image written to ``pi-clipboard-<uuid>.<ext>``, text, and the failure message."""

from __future__ import annotations

import asyncio
import os
import stat
from pathlib import Path

import pytest
from prompt_toolkit import PromptSession
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.document import Document
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.keys import Keys
from prompt_toolkit.output import DummyOutput

from pi_context.cli.app.app import AppAgent, AppConfig
from pi_context.cli.interactive.clipboard_paste import (
    ClipboardContent,
    ClipboardError,
    clipboard_key_bindings,
    insertion_for,
    paste_into,
    read_clipboard,
)
from pi_context.cli.interactive.mode import InteractiveShell
from pi_context.testing import ScriptedModel
from tests.images.helpers import image_bytes


def fake_tool(
    bin_dir: Path, name: str, types: str, payloads: dict[str, bytes], text: bytes
) -> None:
    """A shell script answering like ``wl-paste``/``xclip``: the type list, a typed payload
    (from files beside it) or the plain text."""
    bin_dir.mkdir(exist_ok=True)
    for kind, data in payloads.items():
        (bin_dir / kind.replace("/", "_")).write_bytes(data)
    (bin_dir / "text").write_bytes(text)
    (bin_dir / "types").write_text(types)
    script = f"""#!/bin/sh
d="{bin_dir}"
want=""
list=0
while [ $# -gt 0 ]; do
  case "$1" in
    --list-types) list=1 ;;
    --type|-t) shift; want="$1" ;;
  esac
  shift
done
if [ "$list" = 1 ] || [ "$want" = TARGETS ]; then cat "$d/types"; exit 0; fi
if [ -z "$want" ]; then cat "$d/text"; exit 0; fi
f="$d/$(echo "$want" | tr / _)"
[ -f "$f" ] && cat "$f" && exit 0
echo "no $want on the clipboard" >&2; exit 1
"""
    tool = bin_dir / name
    tool.write_text(script)
    tool.chmod(tool.stat().st_mode | stat.S_IEXEC)


def wayland(bin_dir: Path) -> dict[str, str]:
    return {"PATH": str(bin_dir), "WAYLAND_DISPLAY": "wayland-0"}


def test_file_paths_come_first(tmp_path: Path) -> None:
    uris = b"file:///home/me/a%20b.txt\r\nfile:///tmp/c.png\r\n"
    fake_tool(
        tmp_path / "bin", "wl-paste", "text/uri-list\ntext/plain\n", {"text/uri-list": uris}, b"x"
    )
    content = read_clipboard(wayland(tmp_path / "bin"))
    assert content == ClipboardContent(paths=("/home/me/a b.txt", "/tmp/c.png"))
    assert insertion_for(content, line="see", cursor=3) == " /home/me/a b.txt\n/tmp/c.png"
    assert insertion_for(content, line="!ls x", cursor=4) == "'/home/me/a b.txt' /tmp/c.png "


def test_a_path_with_a_control_character_is_refused(tmp_path: Path) -> None:
    fake_tool(
        tmp_path / "bin", "wl-paste", "text/uri-list", {"text/uri-list": b"file:///a%1Bb"}, b""
    )
    with pytest.raises(ClipboardError, match=r"^Failed to paste from clipboard: a file path"):
        read_clipboard(wayland(tmp_path / "bin"))


def test_an_image_is_written_to_a_temporary_file_and_its_path_inserted(tmp_path: Path) -> None:
    png = image_bytes("PNG")
    fake_tool(tmp_path / "bin", "xclip", "TARGETS\nimage/png\n", {"image/png": png}, b"")
    content = read_clipboard({"PATH": str(tmp_path / "bin"), "DISPLAY": ":0"})
    assert content.image == (png, "image/png")
    text = insertion_for(content, line="", cursor=0, tmpdir=str(tmp_path), new_id=lambda: "u-1")
    target = tmp_path / "pi-clipboard-u-1.png"
    assert text == str(target)
    assert target.read_bytes() == png


def test_text_is_inserted_as_it_is(tmp_path: Path) -> None:
    fake_tool(tmp_path / "bin", "wl-paste", "text/plain;charset=utf-8\n", {}, b"two\nlines")
    buffer = Buffer(document=Document("ab", 1), multiline=True)
    paste_into(buffer, read=lambda: read_clipboard(wayland(tmp_path / "bin")))
    assert buffer.text == "atwo\nlinesb"


def test_no_clipboard_tool_is_the_spec_failure() -> None:
    with pytest.raises(ClipboardError) as caught:
        read_clipboard({"PATH": "/nonexistent"}, platform="linux")
    assert str(caught.value) == (
        "Failed to paste from clipboard: no clipboard tool found (install wl-clipboard or xclip)"
    )


def test_a_failing_tool_is_reported(tmp_path: Path) -> None:
    fake_tool(tmp_path / "bin", "wl-paste", "image/png\n", {}, b"")  # lists a type it cannot give
    with pytest.raises(ClipboardError, match="wl-paste failed: no image/png on the clipboard"):
        read_clipboard(wayland(tmp_path / "bin"))


@pytest.mark.parametrize("keys", ["\x16", "\x1bv"])  # Ctrl+V, Alt+V
async def test_the_paste_keys_insert_the_clipboard_at_the_cursor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, keys: str
) -> None:
    fake_tool(tmp_path / "bin", "wl-paste", "text/plain\n", {}, b"pasted words")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-0")
    errors: list[str] = []
    with create_pipe_input() as pipe:
        session: PromptSession[str] = PromptSession(
            key_bindings=clipboard_key_bindings(errors.append), input=pipe, output=DummyOutput()
        )
        pipe.send_text(f"say{keys}\r")
        line = await asyncio.wait_for(session.prompt_async(), 30)
    assert (line, errors) == ("saypasted words", [])  # text goes in as it is


async def test_the_interactive_prompt_has_the_paste_keys(tmp_path: Path) -> None:
    (tmp_path / "agent").mkdir()
    config = AppConfig(cwd=str(tmp_path), agent_dir=tmp_path / "agent", session_dir=None)
    agent = AppAgent(await config.create(ScriptedModel([])), config)
    with create_pipe_input() as pipe:
        shell = InteractiveShell(agent, pt_input=pipe, pt_output=DummyOutput())
        bindings = shell._prompt.key_bindings
        assert bindings is not None
        assert bindings.get_bindings_for_keys((Keys.ControlV,))
        assert bindings.get_bindings_for_keys((Keys.Escape, "v"))


async def test_a_paste_failure_is_reported_and_the_line_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.delenv("DISPLAY", raising=False)
    errors: list[str] = []
    with create_pipe_input() as pipe:
        session: PromptSession[str] = PromptSession(
            key_bindings=clipboard_key_bindings(errors.append), input=pipe, output=DummyOutput()
        )
        pipe.send_text("kept\x16\r")
        line = await asyncio.wait_for(session.prompt_async(), 30)
    assert line == "kept"
    assert errors == [
        "Failed to paste from clipboard: no clipboard tool found (install wl-clipboard or xclip)"
    ]
