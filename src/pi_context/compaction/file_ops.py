"""Which files a summarized stretch of conversation read and modified.

Only the ``read``, ``write`` and ``edit`` tools with a non-empty string ``path`` count, from
assistant tool calls and from calls a code-mode tool result made (``nestedCalls.calls``). Paths
are kept exactly as the model wrote them. Lists are sorted in JavaScript's default order
(UTF-16 code units) and a read of a file that was also modified is reported as modified only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from msgspec import Struct, field

__all__ = [
    "FileOperations",
    "compute_file_lists",
    "format_file_operations",
    "js_sorted",
]


def _utf16_key(text: str) -> bytes:
    return text.encode("utf-16-be", errors="surrogatepass")


def js_sorted(items: Iterable[str]) -> list[str]:
    """``Array.prototype.sort()`` on strings: UTF-16 code-unit order."""
    return sorted(items, key=_utf16_key)


class FileOperations(Struct):
    """Paths seen per operation, in first-seen order (pi uses insertion-ordered sets)."""

    read: dict[str, None] = field(default_factory=dict)
    written: dict[str, None] = field(default_factory=dict)
    edited: dict[str, None] = field(default_factory=dict)

    def seed(self, details: Any) -> None:
        """Carry over a previous summary's ``details``: read files stay read, modified count as edited."""
        if not isinstance(details, Mapping):
            return
        for path in _strings(details.get("readFiles")):
            self.read[path] = None
        for path in _strings(details.get("modifiedFiles")):
            self.edited[path] = None

    def _record(self, name: Any, arguments: Any) -> None:
        if name not in ("read", "write", "edit") or not isinstance(arguments, Mapping):
            return
        path = arguments.get("path")
        if not isinstance(path, str) or not path:
            return
        if name == "read":
            self.read[path] = None
        elif name == "write":
            self.written[path] = None
        elif name == "edit":
            self.edited[path] = None

    def add_message(self, message: Mapping[str, Any]) -> None:
        """Record the file operations of one message (pi's ``extractFileOpsFromMessage``)."""
        role = message.get("role")
        if role == "assistant":
            content = message.get("content")
            if not isinstance(content, list):
                return
            for block in content:
                if type(block) is dict and block.get("type") == "toolCall":
                    self._record(block.get("name"), block.get("arguments"))
        elif role == "toolResult":
            nested = message.get("nestedCalls")
            calls = nested.get("calls") if isinstance(nested, Mapping) else None
            if isinstance(calls, list):
                for call in calls:
                    if isinstance(call, Mapping):
                        self._record(call.get("name"), call.get("arguments"))

    def lists(self) -> tuple[list[str], list[str]]:
        """``(read_files, modified_files)`` as pi's ``computeFileLists``."""
        return compute_file_lists(self)

    def copy(self) -> FileOperations:
        return FileOperations(dict(self.read), dict(self.written), dict(self.edited))

    def to_json(self) -> dict[str, list[str]]:
        return {"read": list(self.read), "written": list(self.written), "edited": list(self.edited)}


def _strings(value: Any) -> list[str]:
    if not isinstance(value, list):
        return []
    return [v for v in value if isinstance(v, str)]


def compute_file_lists(ops: FileOperations) -> tuple[list[str], list[str]]:
    modified = {**ops.edited, **ops.written}
    read_only = [p for p in ops.read if p not in modified]
    return js_sorted(read_only), js_sorted(modified)


def format_file_operations(read_files: Sequence[str], modified_files: Sequence[str]) -> str:
    """The ``<read-files>``/``<modified-files>`` blocks appended to a summary (``""`` if none)."""
    blocks: list[str] = []
    if read_files:
        blocks.append("<read-files>\n" + "\n".join(read_files) + "\n</read-files>")
    if modified_files:
        blocks.append("<modified-files>\n" + "\n".join(modified_files) + "\n</modified-files>")
    if not blocks:
        return ""
    return "\n\n" + "\n\n".join(blocks)
