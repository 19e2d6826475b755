"""The one exception hierarchy of pi-context.

::

    PiContextError
    ├── SessionError                 a session file or tree cannot be used as asked
    │   ├── SessionFormatError       a line is not a valid entry (names file and line)
    │   ├── SessionLockedError       another process holds the session's append lock
    │   ├── TreeError                a parent cycle, a duplicate or unknown id
    │   ├── NotRegularFileError      a FIFO, device, socket or directory (session._file.opening)
    │   └── StaleIndexError          a search index no longer matches its file (session.search.index)
    ├── StoreError                   a session store cannot do what was asked
    │   ├── SessionNotFoundError     no session of that id in that tenant
    │   ├── SessionBusyError         another holder has the session's lease
    │   ├── LeafMovedError           the session's leaf is not the one the append expected
    │   ├── InvalidEntryError        an appended entry breaks a rule (names the entry and the rule)
    │   ├── StoreSchemaError         the database has no schema, or a newer one than the code
    │   ├── StoreUnavailableError    the server cannot be reached, or the connection was lost
    │   └── StoreTimeoutError        a statement or lock timeout ended the operation
    ├── PromptError                  invalid system-prompt options (e.g. a bad section name)
    ├── ImageError                   an image cannot be decoded or fitted to a model's limits
    ├── ResourceError                a context file, skill or extension cannot be loaded
    │   ├── SettingsError            a settings file is not valid JSON or has a bad value
    │   ├── FrontmatterError         a markdown file's frontmatter is not valid YAML
    │   └── ExtensionError           an extension failed to load or misused the extension API
    ├── CompactionError              a compaction or branch summary could not be produced
    │   └── CompactionCancelledError
    ├── ProviderError                a model request failed (``kind`` classifies it)
    │   └── ModelNotFoundError       a model name matches no model, or several
    ├── ToolError                    a tool was called with bad arguments (its message goes to the model)
    ├── ToolSelectionError           a ``--tools`` value pi refuses (agent.tool_selection)
    ├── McpRequestError              a request to an MCP server failed (mcp.connection)
    ├── McpFileError                 an ``mcp.json`` that cannot be edited (mcp.files)
    ├── ValueResolutionError         a configured MCP value could not be resolved (mcp.values)
    ├── SwitchCancelledError         an extension cancelled a session switch (cli.app.session_replacement)
    └── ClipboardError               the clipboard could not be read (cli.interactive.clipboard_paste)

The eight with a module in brackets live beside the code that raises them, so the modules
that only use the hierarchy do not import those subsystems (``tests/test_errors.py`` checks
that this tree names every subclass, under its base).

Every error that is about a file carries ``path`` (and ``line`` where there is one), and
its ``str()`` names them, so the CLI can print one line and exit non-zero.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from pathlib import Path

__all__ = [
    "CompactionCancelledError",
    "CompactionError",
    "ExtensionError",
    "FrontmatterError",
    "ImageError",
    "InvalidEntryError",
    "LeafMovedError",
    "ModelNotFoundError",
    "PiContextError",
    "PromptError",
    "ProviderError",
    "ProviderErrorKind",
    "ResourceError",
    "SessionBusyError",
    "SessionError",
    "SessionFormatError",
    "SessionLockedError",
    "SessionNotFoundError",
    "SettingsError",
    "StoreError",
    "StoreSchemaError",
    "StoreTimeoutError",
    "StoreUnavailableError",
    "ToolError",
    "TreeError",
]


class PiContextError(Exception):
    """Base class of every error raised by pi-context."""


class ImageError(PiContextError):
    """An image cannot be decoded, is too large to decode safely, or cannot be made to fit a
    model's limits. The message says which, in one line."""


class SessionError(PiContextError):
    """A session file or tree cannot be used as asked."""

    def __init__(self, message: str, *, path: str | Path | None = None, line: int | None = None):
        self.path = str(path) if path is not None else None
        self.line = line
        self.reason = message
        where = ""
        if self.path is not None:
            where = f"{self.path}:{line}: " if line is not None else f"{self.path}: "
        super().__init__(f"{where}{message}")


class SessionFormatError(SessionError):
    """A line of a session file is not a valid entry."""


class SessionLockedError(SessionError):
    """Another process is appending to the same session file."""


class TreeError(SessionError):
    """The entry tree is inconsistent: a parent cycle, a duplicate id, an unknown id."""


class StoreError(PiContextError):
    """A session store (``pi_context.store``) cannot do what was asked. The message is one
    line and never holds a password."""


class SessionNotFoundError(StoreError):
    """No session of that id in that tenant (a ref of another tenant included)."""


class SessionBusyError(StoreError):
    """Another holder has the session's lease (one agent turn per session at a time)."""


class LeafMovedError(StoreError):
    """``append(..., if_leaf=X)``: the session's leaf is no longer ``X``; nothing was stored."""


class InvalidEntryError(StoreError):
    """An entry of an append breaks a rule (named with the entry); nothing of the batch was
    stored."""


class StoreSchemaError(StoreError):
    """The database has no store schema (run ``migrate()`` / ``pictx store migrate``), or
    one newer than this code."""


class StoreUnavailableError(StoreError):
    """The server cannot be reached or the connection broke. ``retryable`` says whether the
    operation may be repeated as it was (an append with the same entry ids stores each once)."""

    def __init__(self, message: str, *, retryable: bool = True) -> None:
        self.retryable = retryable
        super().__init__(message)


class StoreTimeoutError(StoreError):
    """A statement or lock timeout ended the operation; nothing of it was stored."""


class PromptError(PiContextError):
    """The system-prompt options are invalid."""


class ResourceError(PiContextError):
    """A resource (context file, skill, extension) cannot be loaded."""

    def __init__(self, message: str, *, path: str | Path | None = None):
        self.path = str(path) if path is not None else None
        super().__init__(f"{self.path}: {message}" if self.path else message)


class SettingsError(ResourceError):
    """A settings file is broken."""


class FrontmatterError(ResourceError, ValueError):
    """A markdown file's frontmatter is not valid YAML (the message is the parser's).

    Also a ``ValueError``, as parsing errors are.
    """


class ExtensionError(ResourceError):
    """An extension could not be loaded, or used the extension API wrongly (names it)."""

    def __init__(
        self, message: str, *, path: str | Path | None = None, extension: str | None = None
    ):
        self.extension = extension
        super().__init__(f"extension {extension}: {message}" if extension else message, path=path)


class CompactionError(PiContextError):
    """A compaction or branch summary could not be produced; nothing was appended."""


class CompactionCancelledError(CompactionError):
    """The compaction was cancelled."""


ProviderErrorKind = Literal["context_overflow", "transient", "authentication", "aborted", "other"]


class ProviderError(PiContextError):
    """A model request failed.

    ``kind`` is ``context_overflow`` (the prompt does not fit the window), ``transient``
    (429, 5xx, a dropped connection: worth retrying), ``authentication``, ``aborted`` or
    ``other``.
    """

    def __init__(
        self,
        message: str,
        *,
        kind: ProviderErrorKind = "other",
        status: int | None = None,
        retry_after: float | None = None,
    ):
        self.kind: ProviderErrorKind = kind
        self.status = status
        self.retry_after = retry_after
        super().__init__(message)


class ModelNotFoundError(ProviderError):
    """A model name (``--model``) matches no known model, or is ambiguous."""


class ToolError(PiContextError):
    """A tool call failed; the message is what the model sees."""
