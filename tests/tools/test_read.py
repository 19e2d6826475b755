"""The read tool: windows, truncation notes, errors, images."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import threading
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_context.tools import ReadTool, run_tool
from pi_context.tools.read import _chunks, sniff_image_mime
from pi_context.tools.truncate import format_size, truncate_head

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


async def test_structured_content_is_the_text(call: Runner, tmp_path: Path) -> None:
    """pi hands programs a read's text as ``structuredContent`` (never stored)."""
    (tmp_path / "a.txt").write_text("alpha\nbeta\n")
    out = await call(ReadTool(), path="a.txt")
    assert out.structured_content == out.text == "alpha\nbeta\n"
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


# --- hostile files: pipes, devices, huge and endless files, aborts -------------------------


async def test_a_fifo_is_refused_without_waiting_for_a_writer(call: Runner, tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    out = await call(ReadTool(), path="pipe")
    assert out.is_error
    assert out.text == f"Cannot read {fifo}: it is a named pipe (FIFO), not a regular file."


async def test_a_device_is_refused_even_through_a_symlink(call: Runner, tmp_path: Path) -> None:
    (tmp_path / "zero").symlink_to("/dev/zero")
    out = await call(ReadTool(), path="zero")
    assert out.is_error
    assert (
        out.text
        == f"Cannot read {tmp_path / 'zero'}: it is a character device, not a regular file."
    )


async def test_a_socket_is_refused(call: Runner, tmp_path: Path) -> None:
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(tmp_path / "sock"))
        out = await call(ReadTool(), path="sock")
    finally:
        server.close()
    assert out.is_error
    assert out.text.endswith("sock: it is a socket, not a regular file.")


async def test_a_nul_in_the_path_is_a_clear_error(call: Runner) -> None:
    out = await call(ReadTool(), path="a\x00b")
    assert out.is_error
    assert out.text == "Cannot read 'a\\x00b': the path contains a NUL character."


async def test_a_2gb_sparse_file_is_read_in_bounded_memory(call: Runner, tmp_path: Path) -> None:
    big = tmp_path / "sparse"
    with big.open("wb") as f:
        f.write(b"first line\n")
        f.truncate(2 << 30)  # one more "line": 2 GiB of NUL bytes, no disk used
    tracemalloc.start()
    try:
        out = await call(ReadTool(), path="sparse", offset=2)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 32 << 20, f"peak {peak} bytes"  # a few 1 MiB chunks, not the file
    assert out.text == (
        "[Line 2 is 2048.0MB, exceeds 50.0KB limit. Use bash: sed -n '2p' sparse | head -c 51200]"
    )
    assert out.details["truncation"]["totalBytes"] == (2 << 30) - len("first line\n")


async def test_an_oversized_image_is_not_read_into_memory(call: Runner, tmp_path: Path) -> None:
    big = tmp_path / "huge.png"
    with big.open("wb") as f:
        f.write(PNG)
        f.truncate(1 << 30)
    tracemalloc.start()
    try:
        out = await call(ReadTool(), path="huge.png")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 << 20
    assert out.text == (
        "Read image file [image/png]\nImage is 1365.3MB encoded, over the 4.5MB limit; "
        "it was not attached."
    )


def _holds_open(path: Path) -> bool:
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            if os.readlink(f"/proc/self/fd/{fd}") == str(path):
                return True
    return False


async def _wait_until(predicate: Callable[[], bool]) -> None:
    while not predicate():  # bounded by the test's timeout
        await asyncio.sleep(0.01)


def _endless_file(tmp_path: Path) -> Path:
    """A 1 TiB sparse file: reading it all would take minutes, far past the test timeout."""
    big = tmp_path / "endless"
    with big.open("wb") as f:
        f.truncate(1 << 40)
    return big


@pytest.mark.timeout(60)
async def test_cancelling_a_read_stops_it(tmp_path: Path) -> None:
    big = _endless_file(tmp_path)
    task = asyncio.create_task(run_tool(ReadTool(), "c", {"path": "endless"}, cwd=tmp_path))
    await _wait_until(lambda: _holds_open(big))
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await _wait_until(lambda: not _holds_open(big))  # the worker thread stopped and closed it


@pytest.mark.timeout(60)
async def test_an_abort_signal_stops_a_read(tmp_path: Path) -> None:
    big = _endless_file(tmp_path)
    signal = asyncio.Event()
    task = asyncio.create_task(
        run_tool(ReadTool(), "c", {"path": "endless"}, cwd=tmp_path, signal=signal)
    )
    await _wait_until(lambda: _holds_open(big))
    signal.set()
    out = await task
    assert out.is_error
    assert out.text == "Operation aborted"
    await _wait_until(lambda: not _holds_open(big))


async def test_a_non_finite_offset_is_a_clear_error(call: Runner, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a")
    out = await call(ReadTool(), path="a.txt", offset="nan")
    assert out.is_error
    assert out.text == "Invalid offset: must be a finite number"


async def test_a_file_reporting_size_zero_is_read_to_its_end(call: Runner) -> None:
    status = Path("/proc/self/status")
    assert status.stat().st_size == 0
    out = await call(ReadTool(), path=str(status))
    assert out.text.startswith("Name:\t")
    assert "\nPid:\t" in out.text


def test_bytes_appended_after_the_open_are_not_read(tmp_path: Path) -> None:
    # A file that grows while it is read (a log another process writes) cannot keep the read
    # going: the size seen at open bounds it.
    grown = tmp_path / "log"
    grown.write_bytes(b"0123456789")
    with grown.open("rb", buffering=0) as f:
        assert b"".join(_chunks(f, b"", 4, threading.Event())) == b"0123"


def test_a_read_stuck_in_the_kernel_does_not_hold_the_exit(tmp_path: Path) -> None:
    # Some regular files block in read() (/proc/kmsg, a hung network mount): the stop flag
    # cannot reach such a thread. The abort still answers, and the program still exits.
    (tmp_path / "stuck").write_text("x")
    script = (
        "import asyncio, pathlib, threading\n"
        "import pi_context.tools.read as read_module\n"
        "from pi_context.tools import ReadTool, run_tool\n"
        "started = threading.Event()\n"
        "def blocked(*args, **kwargs):\n"
        "    started.set()\n"
        "    threading.Event().wait()  # never returns, like a read() the kernel holds\n"
        "read_module.read_line_window = blocked\n"
        "async def main():\n"
        "    abort = asyncio.Event()\n"
        "    task = asyncio.create_task(run_tool(ReadTool(), 'c', {'path': 'stuck'},\n"
        f"        cwd=pathlib.Path({str(tmp_path)!r}), signal=abort))\n"
        "    await asyncio.to_thread(started.wait)\n"
        "    abort.set()\n"
        "    print((await task).text)\n"
        "asyncio.run(main())\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.stdout == "Operation aborted\n"
    assert done.stderr == ""


def _pi_read(data: bytes, offset: int | None, limit: int | None) -> tuple[str, bool]:
    """pi's read of a text file (decode all, split, slice, head-truncate), as the reference."""
    lines = data.decode("utf-8", "replace").split("\n")
    total = len(lines)
    start = max(0, offset - 1) if offset else 0
    if start >= total:
        return f"Offset {offset} is beyond end of file ({total} lines total)", True
    end = total if limit is None else min(total, start + max(0, limit))
    selected = lines[start:end]
    trunc = truncate_head("\n".join(selected))
    if trunc.first_line_exceeds_limit:
        size = format_size(len(selected[0].encode("utf-8")))
        return (
            f"[Line {start + 1} is {size}, exceeds 50.0KB limit. "
            f"Use bash: sed -n '{start + 1}p' f.txt | head -c 51200]"
        ), False
    if trunc.truncated:
        last = start + trunc.output_lines
        note = " (50.0KB limit)" if trunc.truncated_by == "bytes" else ""
        return (
            f"{trunc.content}\n\n[Showing lines {start + 1}-{last} of {total}{note}. "
            f"Use offset={last + 1} to continue.]"
        ), False
    if end < total:
        return (
            f"{trunc.content}\n\n[{total - end} more lines in file. Use offset={end + 1} to continue.]"
        ), False
    return trunc.content, False


_RUNS = st.tuples(
    st.sampled_from([b"a", b"\n", b"\xc3\xa9", b"\xff", b"xyz\n", b"\xe2\x82"]),
    st.integers(min_value=1, max_value=30000),
)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(_RUNS, max_size=6).map(lambda runs: b"".join(piece * n for piece, n in runs)),
    st.none() | st.integers(min_value=0, max_value=40000),
    st.none() | st.integers(min_value=0, max_value=3000),
)
def test_any_text_file_reads_as_pi_reads_it(
    data: bytes, offset: int | None, limit: int | None
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "f.txt").write_bytes(data)
        arguments: dict[str, object] = {"path": "f.txt", "offset": offset, "limit": limit}
        out = asyncio.run(run_tool(ReadTool(), "c", arguments, cwd=Path(tmp)))
        assert (Path(tmp) / "f.txt").read_bytes() == data
    if sniff_image_mime(data[:4100]) is not None:
        return
    assert (out.text, out.is_error) == _pi_read(data, offset, limit)
