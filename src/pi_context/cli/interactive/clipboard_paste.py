"""Clipboard paste in interactive mode (Ctrl+V, Alt+V), as pi's ``app.clipboard.pasteImage``.

What the clipboard holds decides what is inserted at the cursor, in this order:

1. file paths (a ``text/uri-list`` of ``file://`` URIs; a path with a control character is
   refused): newline-joined, or space-joined and shell-quoted when the line is a ``!`` bash
   command;
2. an image: written to ``<tmpdir>/pi-clipboard-<uuid>.<ext>`` and that path inserted (the
   model reads it with the ``read`` tool; nothing is attached);
3. text, as it is.

Paths get a space on a side where they would touch a non-space character. The clipboard is
read with the system's tools: ``wl-paste`` under Wayland, ``xclip`` under X11, ``pbpaste`` on
macOS (text only). Without one, or when a tool fails, the error is
``Failed to paste from clipboard: <why>``. Every tool runs with a timeout and its output is
bounded, so a broken clipboard owner can neither hang the prompt nor fill memory.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final
from urllib.parse import unquote, urlparse

from prompt_toolkit.buffer import Buffer
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.keys import Keys

from pi_context.errors import PiContextError
from pi_context.images import MAX_SOURCE_BYTES, SNIFF_BYTES, sniff_image_mime

__all__ = [
    "ClipboardContent",
    "ClipboardError",
    "clipboard_key_bindings",
    "insertion_for",
    "paste_into",
    "read_clipboard",
]

TOOL_TIMEOUT: Final = 5.0
"""Seconds a clipboard tool may take."""

_IMAGE_TYPES: Final = ("image/png", "image/jpeg", "image/gif", "image/webp", "image/bmp")
_EXTENSIONS: Final = {
    "image/png": "png",
    "image/jpeg": "jpg",
    "image/gif": "gif",
    "image/webp": "webp",
    "image/bmp": "bmp",
}


class ClipboardError(PiContextError):
    """The clipboard could not be read; ``str()`` is the line shown to the user."""

    def __init__(self, why: str) -> None:
        super().__init__(f"Failed to paste from clipboard: {why}")


@dataclass(frozen=True, slots=True)
class ClipboardContent:
    """What the clipboard offers: file paths, an image (bytes, MIME type) or text."""

    paths: tuple[str, ...] = ()
    image: tuple[bytes, str] | None = None
    text: str = ""


Runner = Callable[[Sequence[str]], bytes]
"""Runs a tool's argv and returns its stdout (raises :class:`ClipboardError`)."""


def _run_tool(argv: Sequence[str]) -> bytes:
    """``argv``'s stdout, read in a thread that stops past :data:`MAX_SOURCE_BYTES`; the tool
    is killed when it takes longer than :data:`TOOL_TIMEOUT`."""
    try:
        proc = subprocess.Popen(
            list(argv), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
    except OSError as exc:
        raise ClipboardError(f"cannot run {argv[0]}: {exc.strerror or exc}") from exc
    chunks: list[bytes] = []
    size = 0

    def pump() -> None:
        nonlocal size
        assert proc.stdout is not None
        while chunk := proc.stdout.read(1 << 16):
            size += len(chunk)
            if size > MAX_SOURCE_BYTES:
                proc.kill()
                return
            chunks.append(chunk)

    reader = threading.Thread(target=pump, daemon=True)
    with proc:
        reader.start()
        reader.join(TOOL_TIMEOUT)
        if reader.is_alive():
            proc.kill()
            reader.join()
            raise ClipboardError(f"{argv[0]} did not answer within {TOOL_TIMEOUT:g}s")
        assert proc.stderr is not None
        err = proc.stderr.read(4096)
        code = proc.wait()
    if size > MAX_SOURCE_BYTES:
        raise ClipboardError(f"the clipboard holds over {MAX_SOURCE_BYTES >> 20} MiB")
    if code != 0:
        why = err.decode("utf-8", "replace").strip().splitlines()
        raise ClipboardError(f"{argv[0]} failed: {why[0] if why else f'exit {code}'}")
    return b"".join(chunks)


def _paths(uri_list: str) -> tuple[str, ...]:
    paths: list[str] = []
    for line in uri_list.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        parsed = urlparse(line)
        if parsed.scheme != "file":
            return ()  # not a list of files: treat the clipboard as text
        path = unquote(parsed.path)
        if any(ord(c) < 32 or ord(c) == 127 for c in path):
            raise ClipboardError("a file path on the clipboard holds a control character")
        paths.append(path)
    return tuple(paths)


def _from_types(types: Sequence[str], get: Callable[[str | None], bytes]) -> ClipboardContent:
    if "text/uri-list" in types:
        paths = _paths(get("text/uri-list").decode("utf-8", "replace"))
        if paths:
            return ClipboardContent(paths=paths)
    for mime in _IMAGE_TYPES:
        if mime in types:
            data = get(mime)
            sniffed = sniff_image_mime(data[:SNIFF_BYTES])
            if sniffed is not None:
                return ClipboardContent(image=(data, sniffed))
    return ClipboardContent(text=get(None).decode("utf-8", "replace"))


def read_clipboard(
    env: Mapping[str, str] | None = None,
    *,
    run: Runner = _run_tool,
    which: Callable[[str], str | None] | None = None,
    platform: str = sys.platform,
) -> ClipboardContent:
    """What the clipboard holds, read with the first tool that fits the session."""
    env = os.environ if env is None else env
    path = env.get("PATH")

    def find(name: str) -> str | None:
        return which(name) if which is not None else shutil.which(name, path=path)

    if env.get("WAYLAND_DISPLAY") and (wl := find("wl-paste")):
        types = run([wl, "--list-types"]).decode("utf-8", "replace").split()
        return _from_types(
            types,
            lambda t: run([wl, "--no-newline", "--type", t] if t else [wl, "--no-newline"]),
        )
    if env.get("DISPLAY") and (xclip := find("xclip")):
        base = [xclip, "-selection", "clipboard"]
        types = run([*base, "-t", "TARGETS", "-o"]).decode("utf-8", "replace").split()
        return _from_types(types, lambda t: run([*base, "-t", t, "-o"] if t else [*base, "-o"]))
    if platform == "darwin" and (pb := find("pbpaste")):
        return ClipboardContent(text=run([pb]).decode("utf-8", "replace"))
    raise ClipboardError("no clipboard tool found (install wl-clipboard or xclip)")


def _spaced(insert: str, before: str, after: str) -> str:
    if before and not before[-1].isspace():
        insert = " " + insert
    if after and not after[0].isspace():
        insert += " "
    return insert


def insertion_for(
    content: ClipboardContent,
    *,
    line: str,
    cursor: int,
    tmpdir: str | None = None,
    new_id: Callable[[], str] = lambda: str(uuid.uuid4()),
) -> str:
    """The text to insert at ``cursor`` in ``line`` for ``content`` (see the module
    docstring); an image is written to a temporary file first."""
    before, after = line[:cursor], line[cursor:]
    if content.paths:
        if line.startswith("!"):
            joined = " ".join(shlex.quote(p) for p in content.paths)
        else:
            joined = "\n".join(content.paths)
        return _spaced(joined, before, after)
    if content.image is not None:
        data, mime = content.image
        target = (
            Path(tmpdir or tempfile.gettempdir()) / f"pi-clipboard-{new_id()}.{_EXTENSIONS[mime]}"
        )
        try:
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as file:
                file.write(data)
        except OSError as exc:
            raise ClipboardError(f"cannot write {target}: {exc.strerror or exc}") from exc
        return _spaced(str(target), before, after)
    return content.text


def paste_into(
    buffer: Buffer,
    *,
    read: Callable[[], ClipboardContent] = read_clipboard,
    tmpdir: str | None = None,
    new_id: Callable[[], str] = lambda: str(uuid.uuid4()),
) -> None:
    """Insert the clipboard at ``buffer``'s cursor; raises :class:`ClipboardError`."""
    text = insertion_for(
        read(), line=buffer.text, cursor=buffer.cursor_position, tmpdir=tmpdir, new_id=new_id
    )
    if text:
        buffer.insert_text(text)


def clipboard_key_bindings(
    on_error: Callable[[str], None],
    *,
    read: Callable[[], ClipboardContent] = read_clipboard,
    tmpdir: str | None = None,
    keys: Sequence[Sequence[str]] = ((Keys.ControlV,), (Keys.Escape, "v")),
) -> KeyBindings:
    """Ctrl+V and Alt+V (or ``keys``: pi's ``app.clipboard.pasteImage`` as remapped) paste
    from the clipboard; a failure goes to ``on_error``."""
    bindings = KeyBindings()

    def paste(event: KeyPressEvent) -> None:
        try:
            paste_into(event.current_buffer, read=read, tmpdir=tmpdir)
        except ClipboardError as exc:
            on_error(str(exc))

    for sequence in keys:
        bindings.add(*sequence)(paste)
    return bindings
