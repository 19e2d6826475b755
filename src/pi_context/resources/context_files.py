"""Context files (AGENTS.md and friends): discovery exactly as pi 1.6.0 does it.

Order: the agent dir's file first, then one file per directory from the filesystem root down to
``cwd`` (nearest last). Per directory the first regular file among ``AGENTS.override.md``,
``AGENTS.md``, ``AGENTS.MD``, ``CLAUDE.md``, ``CLAUDE.MD`` wins; one leading BOM is stripped;
a path already loaded is not loaded twice; inside a linked git worktree nested in its main
repository, the main repository's file of the same name is skipped. Context files need no
project trust.

Beyond pi: a binary file (NUL bytes), a file over :data:`MAX_CONTEXT_FILE_BYTES`, a symlink
loop or an unreadable file is skipped with a diagnostic naming it (discovery moves on to the
next candidate); a file that is not valid UTF-8 is loaded with replacement characters, as pi
does, and reported.
"""

from __future__ import annotations

import errno
import os
import stat

from msgspec import Struct

from pi_context.resources.paths import ancestors, find_git_root
from pi_context.resources.types import ContextFile, Diagnostic

__all__ = [
    "CONTEXT_FILE_NAMES",
    "MAX_CONTEXT_FILE_BYTES",
    "GitPaths",
    "find_git_paths",
    "find_shadowed_context_file",
    "load_context_file_from_dir",
    "load_context_files",
    "read_error_reason",
    "read_text_file",
]

CONTEXT_FILE_NAMES: tuple[str, ...] = (
    "AGENTS.override.md",
    "AGENTS.md",
    "AGENTS.MD",
    "CLAUDE.md",
    "CLAUDE.MD",
)
MAX_CONTEXT_FILE_BYTES = 1024 * 1024


def read_text_file(
    path: str,
    diagnostics: list[Diagnostic] | None = None,
    *,
    max_bytes: int | None = None,
    reject_binary: bool = False,
) -> str:
    """Read ``path`` as UTF-8 with one leading BOM stripped.

    Invalid UTF-8 is replaced (and reported in ``diagnostics``). Raises ``OSError`` when the
    file cannot be read and :class:`ValueError` when it is binary or too large.
    """
    with open(path, "rb") as f:
        if max_bytes is not None and os.fstat(f.fileno()).st_size > max_bytes:
            raise ValueError(f"file is larger than {max_bytes} bytes")
        data = f.read() if max_bytes is None else f.read(max_bytes + 1)
    if max_bytes is not None and len(data) > max_bytes:
        raise ValueError(f"file is larger than {max_bytes} bytes")
    if reject_binary and b"\x00" in data:
        raise ValueError("file looks binary (contains NUL bytes)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        text = data.decode("utf-8", errors="replace")
        if diagnostics is not None:
            diagnostics.append(
                Diagnostic("warning", f"not valid UTF-8 ({exc.reason} at byte {exc.start})", path)
            )
    if text.startswith("\ufeff"):
        text = text[1:]
    return text


def read_error_reason(exc: OSError | ValueError) -> str:
    """Why :func:`read_text_file` failed, short enough for a diagnostic."""
    if isinstance(exc, OSError):
        if exc.errno == errno.ELOOP:
            return "symlink loop"
        if exc.strerror:
            return exc.strerror
    return str(exc)


def _cannot_read(
    path: str, exc: OSError | ValueError, diagnostics: list[Diagnostic] | None
) -> None:
    if diagnostics is not None:
        message = f"Could not read {path}: {read_error_reason(exc)}"
        diagnostics.append(Diagnostic("warning", message, path))


def load_context_file_from_dir(
    directory: str, diagnostics: list[Diagnostic] | None = None
) -> ContextFile | None:
    """The first usable candidate file of ``directory`` (``None`` when there is none)."""
    for name in CONTEXT_FILE_NAMES:
        path = os.path.join(directory, name)
        try:
            if not stat.S_ISREG(os.stat(path).st_mode):
                continue
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError as exc:
            _cannot_read(path, exc, diagnostics)
            continue
        try:
            content = read_text_file(
                path, diagnostics, max_bytes=MAX_CONTEXT_FILE_BYTES, reject_binary=True
            )
        except (OSError, ValueError) as exc:
            _cannot_read(path, exc, diagnostics)
            continue
        return ContextFile(path, content)
    return None


class GitPaths(Struct, frozen=True):
    repo_dir: str
    git_dir: str
    common_git_dir: str


def find_git_paths(cwd: str) -> GitPaths | None:
    """The repository holding ``cwd``: nearest ancestor with a ``.git`` file or directory."""
    directory = find_git_root(cwd)
    if directory is None:
        return None
    try:
        return _git_paths_at(directory)
    except OSError:
        return None


def _git_paths_at(directory: str) -> GitPaths | None:
    """A main checkout (``.git`` directory) or a linked worktree (``.git`` file: ``gitdir: …``)."""
    dot_git = os.path.join(directory, ".git")
    if os.path.isdir(dot_git):
        has_head = os.path.exists(os.path.join(dot_git, "HEAD"))
        return GitPaths(directory, dot_git, dot_git) if has_head else None
    if not os.path.isfile(dot_git):
        return None
    with open(dot_git, encoding="utf-8", errors="replace") as f:
        text = f.read()
    if not text.startswith("gitdir: "):
        return None
    git_dir = os.path.normpath(os.path.join(directory, text[8:].strip()))
    if not os.path.exists(os.path.join(git_dir, "HEAD")):
        return None
    common = os.path.join(git_dir, "commondir")
    if not os.path.exists(common):
        return GitPaths(directory, git_dir, git_dir)
    with open(common, encoding="utf-8", errors="replace") as f:
        common_dir = os.path.normpath(os.path.join(git_dir, f.read().strip()))
    return GitPaths(directory, git_dir, common_dir)


def find_shadowed_context_file(cwd: str) -> str | None:
    """In a linked worktree nested inside its main repo, the main repo's context file path that
    the worktree's own file replaces (realpath form); ``None`` otherwise."""
    paths = find_git_paths(cwd)
    if paths is None:
        return None
    try:
        common = os.path.realpath(paths.common_git_dir, strict=True)
        worktree_root = os.path.realpath(paths.repo_dir, strict=True)
        main_root = os.path.dirname(common)
        if worktree_root == main_root or not worktree_root.startswith(
            main_root.rstrip(os.sep) + os.sep
        ):
            return None
        if os.path.realpath(os.path.join(main_root, ".git"), strict=True) != common:
            return None
    except OSError:
        return None
    own = load_context_file_from_dir(worktree_root)
    if own is None:
        return None
    return os.path.join(main_root, os.path.basename(own.path))


def load_context_files(
    cwd: str | os.PathLike[str],
    agent_dir: str | os.PathLike[str],
    *,
    diagnostics: list[Diagnostic] | None = None,
) -> list[ContextFile]:
    """Global file first, then ancestors from the filesystem root down to ``cwd``."""
    cwd_s = os.path.abspath(os.fspath(cwd))
    files: list[ContextFile] = []
    seen: set[str] = set()
    global_file = load_context_file_from_dir(os.path.abspath(os.fspath(agent_dir)), diagnostics)
    if global_file is not None:
        files.append(global_file)
        seen.add(global_file.path)
    shadowed = find_shadowed_context_file(cwd_s)
    nearest_first: list[ContextFile] = []
    for directory in ancestors(cwd_s):
        found = load_context_file_from_dir(directory, diagnostics)
        if found is not None:
            is_shadowed = shadowed is not None and (
                os.path.join(os.path.realpath(directory), os.path.basename(found.path)) == shadowed
            )
            if not is_shadowed and found.path not in seen:
                nearest_first.append(found)
                seen.add(found.path)
    return files + nearest_first[::-1]
