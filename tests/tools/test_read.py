"""The read tool: windows, truncation notes, errors, images."""

from __future__ import annotations

import base64
from pathlib import Path

from pi_context.tools import ReadTool
from pi_context.tools.read import sniff_image_mime

from .conftest import Runner

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg=="
)


async def test_whole_file_is_returned_verbatim(call: Runner, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("l1\nl2\n")
    out = await call(ReadTool(), path="a.txt")
    assert out.text == "l1\nl2\n"
    assert not out.is_error
    assert out.details is None


async def test_limit_note_counts_the_trailing_newline_as_a_line(
    call: Runner, tmp_path: Path
) -> None:
    (tmp_path / "a.txt").write_text("l1\nl2\nl3\n")
    out = await call(ReadTool(), path="a.txt", limit=1)
    assert out.text == "l1\n\n[3 more lines in file. Use offset=2 to continue.]"


async def test_offset_and_coerced_string_numbers(call: Runner, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a\nb\nc\nd")
    out = await call(ReadTool(), path="a.txt", offset="2", limit="2")
    assert out.text == "b\nc\n\n[1 more lines in file. Use offset=4 to continue.]"
    assert (await call(ReadTool(), path="a.txt", offset=0)).text == "a\nb\nc\nd"


async def test_offset_beyond_end(call: Runner, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a\nb")
    out = await call(ReadTool(), path="a.txt", offset=5)
    assert out.is_error
    assert out.text == "Offset 5 is beyond end of file (2 lines total)"
    assert out.details == {}


async def test_missing_file_names_the_absolute_path(call: Runner, tmp_path: Path) -> None:
    out = await call(ReadTool(), path="nope.txt")
    assert out.is_error
    assert out.text == f"ENOENT: no such file or directory, access '{tmp_path / 'nope.txt'}'"


async def test_truncated_by_lines_has_continue_note_and_details(
    call: Runner, tmp_path: Path
) -> None:
    (tmp_path / "big.txt").write_text("".join(f"{i}\n" for i in range(1, 2501)))
    out = await call(ReadTool(), path="big.txt")
    assert out.text.endswith(
        "\n1999\n2000\n\n[Showing lines 1-2000 of 2501. Use offset=2001 to continue.]"
    )
    trunc = out.details["truncation"]
    assert trunc["truncatedBy"] == "lines"
    assert trunc["outputLines"] == 2000
    assert trunc["content"].endswith("2000")
    again = await call(ReadTool(), path="big.txt", offset=2001)
    assert again.text.startswith("2001\n")
    assert again.details is None


async def test_truncated_by_bytes(call: Runner, tmp_path: Path) -> None:
    (tmp_path / "wide.txt").write_text(("x" * 99 + "\n") * 1000)
    out = await call(ReadTool(), path="wide.txt", offset=3)
    assert "[Showing lines 3-514 of 1001 (50.0KB limit). Use offset=515 to continue.]" in out.text


async def test_single_huge_line(call: Runner, tmp_path: Path) -> None:
    (tmp_path / "one.txt").write_text("short\n" + "y" * 60000)
    out = await call(ReadTool(), path="one.txt", offset=2)
    assert out.text == (
        "[Line 2 is 58.6KB, exceeds 50.0KB limit. Use bash: sed -n '2p' one.txt | head -c 51200]"
    )
    assert out.details["truncation"]["firstLineExceedsLimit"] is True


async def test_path_forms(call: Runner, tmp_path: Path) -> None:
    (tmp_path / "a b.txt").write_text("hi")
    assert (await call(ReadTool(), path="@a\u00a0b.txt")).text == "hi"
    assert (await call(ReadTool(), path=f"file://{tmp_path}/a%20b.txt")).text == "hi"
    assert (await call(ReadTool(), path=str(tmp_path / "a b.txt"))).text == "hi"


async def test_image_sniffed_by_content_not_extension(call: Runner, tmp_path: Path) -> None:
    (tmp_path / "pic.dat").write_bytes(PNG)
    out = await call(ReadTool(), path="pic.dat")
    assert out.content[0] == {"type": "text", "text": "Read image file [image/png]"}
    assert out.content[1] == {
        "type": "image",
        "data": base64.b64encode(PNG).decode(),
        "mimeType": "image/png",
    }
    assert out.details is None
    tool = ReadTool(images_unsupported_by="tiny-model")
    assert (await call(tool, path="pic.dat")).details == {"imageUnsupportedByModel": "tiny-model"}


def test_sniffing() -> None:
    assert sniff_image_mime(b"\xff\xd8\xff\xe0") == "image/jpeg"
    assert sniff_image_mime(b"GIF89a....") == "image/gif"
    assert sniff_image_mime(b"RIFF\x00\x00\x00\x00WEBPVP8 ") == "image/webp"
    assert sniff_image_mime(b"BM\x00\x00") == "image/bmp"
    assert sniff_image_mime(b"hello") is None


async def test_read_never_modifies_the_file(call: Runner, tmp_path: Path) -> None:
    target = tmp_path / "crlf.txt"
    target.write_bytes(b"\xef\xbb\xbfa\r\nb\r\n")
    before = target.stat().st_mtime_ns
    out = await call(ReadTool(), path="crlf.txt")
    assert out.text == "\ufeffa\r\nb\r\n"  # BOM and CR kept, as pi does
    assert target.read_bytes() == b"\xef\xbb\xbfa\r\nb\r\n"
    assert target.stat().st_mtime_ns == before


async def test_missing_required_argument_is_a_validation_error(call: Runner) -> None:
    out = await call(ReadTool(), offset=1)
    assert out.is_error
    assert out.text == (
        'Validation failed for tool "read":\n'
        "  - root: must have required property 'path'\n\n"
        'Received arguments:\n{\n  "offset": 1\n}'
    )


async def test_directory_is_an_error(call: Runner, tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    out = await call(ReadTool(), path="d")
    assert out.is_error
    assert out.text == "EISDIR: illegal operation on a directory, read"
