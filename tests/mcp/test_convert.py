"""Result conversion and the 20 KB middle truncation."""

from __future__ import annotations

import base64
import os
import stat
from pathlib import Path

from pi_context.mcp.convert import convert_blocks, limit_output
from pi_context.messages import text_block


def test_blocks() -> None:
    blob = base64.b64encode(b"\x00\x01").decode()
    out = convert_blocks(
        [
            {"type": "text", "text": "t"},
            {"type": "image", "data": "AAA", "mimeType": "image/png"},
            {"type": "audio", "data": "x", "mimeType": "audio/wav"},
            {
                "type": "resource_link",
                "uri": "file:///a",
                "name": "a",
                "mimeType": "text/plain",
                "size": 2048,
                "description": "the a",
            },
            {"type": "resource", "resource": {"uri": "file:///t", "text": "inline"}},
            {
                "type": "resource",
                "resource": {
                    "uri": "file:///j",
                    "mimeType": "application/json; x=1",
                    "blob": base64.b64encode(b'{"a":1}').decode(),
                },
            },
            {
                "type": "resource",
                "resource": {"uri": "file:///p.png", "mimeType": "image/png", "blob": "QUJD"},
            },
            {"type": "thing"},
        ],
        "srv",
        resources_reachable=True,
    )
    assert out[0] == text_block("t")
    assert out[1] == {"type": "image", "data": "AAA", "mimeType": "image/png"}
    assert out[2] == text_block("[audio audio/wav omitted]")
    assert out[3] == text_block(
        '[Resource file:///a "a" (text/plain, 2.0KB): the a. Read it with read_mcp_resource (server "srv")]'
    )
    assert out[4] == text_block("inline")
    assert out[5] == text_block('{"a":1}')
    assert out[6] == {"type": "image", "data": "QUJD", "mimeType": "image/png"}
    assert out[7] == text_block("[unsupported MCP content thing]")
    (saved,) = convert_blocks(
        [{"type": "resource", "resource": {"uri": "file:///x/data.bin", "blob": blob}}], "srv"
    )
    assert saved["type"] == "text"
    text = saved["text"]
    assert text.startswith("[Binary resource file:///x/data.bin (unknown type, 2B) saved to ")
    path = text.rsplit(" ", 1)[1].rstrip("]")
    assert Path(path).read_bytes() == b"\x00\x01"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    os.unlink(path)


def test_small_output_is_untouched() -> None:
    content = [text_block("a" * 100)]
    assert limit_output(content) == (content, None)


def test_large_output_keeps_head_and_tail_and_saves_the_whole() -> None:
    text = "\n".join(f"line {i:05d} " + "é" * 10 for i in range(2000)) + "\n"
    image = {"type": "image", "data": "AAA", "mimeType": "image/png"}
    out, path = limit_output([text_block(text), image])  # type: ignore[list-item]
    assert path is not None
    assert Path(path).read_text() == text
    body = out[0]["text"]  # type: ignore[typeddict-item]
    size = len(text.encode())
    assert body.startswith(
        f"Warning: truncated output (original token count: {-(-size // 4)})\nTotal output lines: 2000\n\nline 00000 "
    )
    assert body.endswith(f"\n\n[Full output: {path} (read it with offset/limit)]")
    head, _, rest = body.partition("…")
    removed = int(rest.split(" chars truncated…", 1)[0])
    tail = rest.split(" chars truncated…", 1)[1].rsplit("\n\n[Full output", 1)[0]
    head = head.split("\n\n", 1)[1]
    assert len(head.encode()) <= 10240
    assert len(tail.encode()) <= 10240
    assert text.startswith(head)
    assert text.endswith(tail)
    assert len(head) + removed + len(tail) == len(text)
    assert out[1] == image
    os.unlink(path)
