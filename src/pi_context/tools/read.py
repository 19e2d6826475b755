"""The ``read`` tool: a text file by line window, or an image as an image block.

Text is cut to 2000 lines / 50 KB (head truncation) and the result ends with a note telling
the model which ``offset`` continues. Images are recognized by their magic bytes, not their
extension, and sent base64-encoded.

Unlike pi, the file is streamed in a worker thread (:mod:`~pi_context.tools.line_window`):
memory stays bounded whatever the file's size, an abort or a cancelled task stops the read at
the next 1 MiB chunk, and only regular files are read (a FIFO or a device is a tool error
instead of a hang or an endless read).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import math
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO, Final

from msgspec.structs import replace

from pi_context._keywords import keyword_checked
from pi_context.errors import ToolError
from pi_context.images import SNIFF_BYTES, sniff_image_mime
from pi_context.messages import ImageContent, UserContent, text_block
from pi_context.tools.base import (
    ABORTED_TEXT,
    CONSTRAINED_SAMPLING,
    ContextTool,
    ToolContext,
    ToolOutcome,
    error_outcome,
    os_error_message,
    read_path_variants,
    resolve_path,
)
from pi_context.tools.file_access import open_regular
from pi_context.tools.line_window import LineWindow, read_line_window
from pi_context.tools.truncate import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_LINES,
    format_size,
)

__all__ = ["MAX_IMAGE_BASE64_BYTES", "ReadTool", "sniff_image_mime"]

MAX_IMAGE_BASE64_BYTES: Final = 4_718_592
"""4.5 MiB of base64: pi's default image size limit."""

_MAX_IMAGE_BYTES: Final = MAX_IMAGE_BASE64_BYTES // 4 * 3
_CHUNK_BYTES: Final = 1 << 20


@keyword_checked
class ReadTool(ContextTool):
    """Read a text file (windowed, truncated) or an image."""

    name = "read"
    description = (
        "Read a file. Text files come back as text; images (jpg, png, gif, webp, bmp) are "
        f"attached as images. Text is cut at {DEFAULT_MAX_LINES} lines or "
        f"{DEFAULT_MAX_BYTES // 1024}KB, whichever comes first; page through longer files with "
        "offset and limit until you have what you need."
    )
    parameters: dict[str, Any] = {  # noqa: RUF012 - class-level schema, never mutated
        "type": "object",
        "required": ["path"],
        "properties": {
            "path": {
                "type": "string",
                "description": "File to read, relative to the cwd or absolute",
            },
            "offset": {"type": "number", "description": "First line to return (1-based)"},
            "limit": {"type": "number", "description": "How many lines to return at most"},
        },
    }
    prompt_snippet = "Read a file's contents (text or image)"
    prompt_guidelines = ("Use read to look at files instead of cat, head, tail or sed.",)
    constrained_sampling = CONSTRAINED_SAMPLING

    def __init__(self, *, images_unsupported_by: str | None = None) -> None:
        self.images_unsupported_by = images_unsupported_by
        """Set to a model id when the current model cannot take images (recorded in details)."""

    async def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        raw_path: str = arguments["path"]
        path = resolve_path(raw_path, ctx.cwd)
        offset, start, limit = _window_arguments(arguments)
        stop = threading.Event()
        work = _in_daemon_thread(lambda: self._load(path, raw_path, offset, start, limit, stop))
        abort = asyncio.ensure_future(ctx.signal.wait()) if ctx.signal is not None else None
        waits: list[asyncio.Future[Any]] = [work] if abort is None else [work, abort]
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            stop.set()  # the thread stops at its next chunk and closes the file
            work.cancel()
            raise
        finally:
            if abort is not None:
                abort.cancel()
        if not work.done():
            stop.set()
            work.cancel()
            return error_outcome(ABORTED_TEXT)
        outcome: ToolOutcome = work.result()
        if outcome.is_error:
            return outcome
        return replace(outcome, structured_content=_structured(outcome))

    def _load(
        self,
        path: Path,
        raw_path: str,
        offset: int | None,
        start: int,
        limit: int | None,
        stop: threading.Event,
    ) -> ToolOutcome:
        """Runs in a worker thread: checks, opens and streams the file."""
        if "\x00" in str(path):
            raise ToolError(f"Cannot read {raw_path!r}: the path contains a NUL character.")
        if not path.exists():
            path = next((p for p in read_path_variants(path) if p.exists()), path)
        if not os.access(path, os.R_OK):
            err: OSError = FileNotFoundError(2, "No such file or directory", str(path))
            if path.exists():
                err = PermissionError(13, "Permission denied", str(path))
            raise ToolError(os_error_message(err, "access"))
        try:
            fd = open_regular(path, os.O_RDONLY, action="read")
        except IsADirectoryError:
            raise ToolError(
                os_error_message(IsADirectoryError(21, "Illegal operation on a directory"), "read")
            ) from None
        with os.fdopen(fd, "rb", buffering=0) as file:
            size = os.fstat(fd).st_size
            head = _read_up_to(file, min(SNIFF_BYTES, size) if size > 0 else SNIFF_BYTES, stop)
            mime = sniff_image_mime(head)
            if mime is not None:
                return self._image(file, head, size, mime, stop)
            window = read_line_window(_chunks(file, head, size, stop), start, limit)
        return _text_result(window, raw_path, offset, start)

    def _image(
        self, file: BinaryIO, head: bytes, size: int, mime: str, stop: threading.Event
    ) -> ToolOutcome:
        details = (
            {"imageUnsupportedByModel": self.images_unsupported_by}
            if self.images_unsupported_by
            else None
        )
        data = b""
        if _base64_size(size) <= MAX_IMAGE_BASE64_BYTES:
            data = head + _read_up_to(file, _MAX_IMAGE_BYTES + 1 - len(head), stop)
            size = max(size, len(data))
        if _base64_size(size) > MAX_IMAGE_BASE64_BYTES:
            note = (
                f"Read image file [{mime}]\nImage is {format_size(_base64_size(size))} encoded, "
                f"over the {format_size(MAX_IMAGE_BASE64_BYTES)} limit; it was not attached."
            )
            return ToolOutcome([text_block(note)], details)
        image: ImageContent = {
            "type": "image",
            "data": base64.b64encode(data).decode("ascii"),
            "mimeType": mime,
        }
        content: list[UserContent] = [text_block(f"Read image file [{mime}]"), image]
        return ToolOutcome(content, details)


class _StoppedError(Exception):
    """The call was aborted or cancelled while its thread was reading."""


def _in_daemon_thread(load: Callable[[], ToolOutcome]) -> asyncio.Future[ToolOutcome]:
    """Run ``load`` in a new daemon thread; its outcome arrives in the returned future.

    Not the loop's default executor: a read blocked in the kernel (a ``/proc`` file that waits
    for data, a hung network mount) cannot see the stop flag, and ``asyncio.run`` waits for the
    executor's threads at exit, so one such read would hang the program's exit. A daemon thread
    is abandoned instead; an outcome nobody waits for any more is dropped.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[ToolOutcome] = loop.create_future()

    def deliver(outcome: ToolOutcome | None, error: BaseException | None) -> None:
        if future.done():
            return
        if error is not None:
            future.set_exception(error)
        else:
            assert outcome is not None
            future.set_result(outcome)

    def work() -> None:
        outcome: ToolOutcome | None = None
        error: BaseException | None = None
        try:
            outcome = load()
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting coroutine
            error = exc
        with contextlib.suppress(RuntimeError):  # the loop has closed meanwhile
            loop.call_soon_threadsafe(deliver, outcome, error)

    threading.Thread(target=work, name="pictx-read", daemon=True).start()
    return future


def _base64_size(n: int) -> int:
    return 4 * ((n + 2) // 3)


def _read_up_to(file: BinaryIO, n: int, stop: threading.Event) -> bytes:
    parts: list[bytes] = []
    while n > 0:
        if stop.is_set():
            raise _StoppedError
        data = file.read(min(n, _CHUNK_BYTES))
        if not data:
            break
        parts.append(data)
        n -= len(data)
    return b"".join(parts)


def _chunks(file: BinaryIO, head: bytes, size: int, stop: threading.Event) -> Iterator[bytes]:
    """The file's bytes: ``size`` of them as ``fstat`` gave it when opened (what is appended
    meanwhile is not read, as in Node's ``readFile``), or up to EOF when that size is 0 (files
    in ``/proc`` report 0)."""
    left = size - len(head) if size > 0 else None
    if head:
        yield head
    while left is None or left > 0:
        if stop.is_set():
            raise _StoppedError
        data = file.read(_CHUNK_BYTES if left is None else min(left, _CHUNK_BYTES))
        if not data:
            return
        if left is not None:
            left -= len(data)
        yield data


def _as_int(value: Any, name: str) -> int | None:
    if value is None:
        return None
    number = float(value)
    if not math.isfinite(number):
        raise ToolError(f"Invalid {name}: must be a finite number")
    return int(number)


def _window_arguments(arguments: dict[str, Any]) -> tuple[int | None, int, int | None]:
    """``offset`` as given (an integer), the 0-based first line, and ``limit``."""
    offset = _as_int(arguments.get("offset"), "offset")
    limit = _as_int(arguments.get("limit"), "limit")
    start = max(0, offset - 1) if offset else 0
    return offset, start, limit


def _text_result(window: LineWindow, raw_path: str, offset: int | None, start: int) -> ToolOutcome:
    total = window.total_lines
    trunc = window.selection
    if trunc is None:
        raise ToolError(f"Offset {offset} is beyond end of file ({total} lines total)")
    end = window.end
    if trunc.first_line_exceeds_limit:
        n = start + 1
        size = format_size(window.first_line_bytes)
        note = (
            f"[Line {n} is {size}, exceeds {format_size(DEFAULT_MAX_BYTES)} limit. "
            f"Use bash: sed -n '{n}p' {raw_path} | head -c {DEFAULT_MAX_BYTES}]"
        )
        return ToolOutcome([text_block(note)], {"truncation": trunc.to_json()})
    if trunc.truncated:
        first = start + 1
        last = start + trunc.output_lines
        limit_note = (
            f" ({format_size(DEFAULT_MAX_BYTES)} limit)" if trunc.truncated_by == "bytes" else ""
        )
        body = (
            f"{trunc.content}\n\n[Showing lines {first}-{last} of {total}{limit_note}. "
            f"Use offset={last + 1} to continue.]"
        )
        return ToolOutcome([text_block(body)], {"truncation": trunc.to_json()})
    if end < total:
        rest = total - end
        body = f"{trunc.content}\n\n[{rest} more lines in file. Use offset={end + 1} to continue.]"
        return ToolOutcome([text_block(body)])
    return ToolOutcome([text_block(trunc.content)])


def _structured(outcome: ToolOutcome) -> Any:
    """What pi hands programs for a read: the text, or for an image ``{type, data, mimeType,
    note}`` with the text as the note."""
    text = next((b["text"] for b in outcome.content if b["type"] == "text"), "")
    image = next((b for b in outcome.content if b["type"] == "image"), None)
    if image is None:
        return text
    return {"type": "image", "data": image["data"], "mimeType": image["mimeType"], "note": text}
