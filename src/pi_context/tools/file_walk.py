"""A directory tree as the ``grep`` and ``find`` tools search it.

pi runs ripgrep and fd for these tools; pictx walks the tree itself, with the rules both
programs share for a search of a project:

- hidden files and directories are included; a ``.git`` entry is never entered or listed;
- ``.gitignore`` and ``.ignore`` files apply, each to the directory holding it and below (a
  deeper file's rule wins; ``!pattern`` re-includes), with git's pattern rules (``pathspec``);
  the ones in the search root's parent directories apply too, up to the repository root (the
  directory holding ``.git``; without one, up to the filesystem root), and so does the
  repository's ``.git/info/exclude``; a nested repository starts afresh;
- an ignored directory is not entered, so nothing below it can be re-included (as in git);
- symbolic links are listed but never followed.

Entries come in a stable order: each directory's entries sorted by name, a directory's
contents right after it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from pathspec import GitIgnoreSpec

__all__ = ["IGNORE_FILES", "Entry", "IgnoreRules", "walk"]

IGNORE_FILES: Final = (".gitignore", ".ignore")
"""The ignore files read in every directory (later ones win over earlier ones)."""
_GIT: Final = ".git"


@dataclass(frozen=True, slots=True)
class Entry:
    """One entry below the search root."""

    path: Path
    """Its absolute path."""
    relative: str
    """Its path from the search root, ``/``-separated."""
    is_dir: bool
    """A directory (not a link to one)."""
    is_link: bool


@dataclass(frozen=True, slots=True)
class _Layer:
    base: Path
    spec: GitIgnoreSpec
    prefix: str = ""
    """``base`` as text ending with a separator: paths below it are matched by plain string
    slicing (``Path.relative_to`` per entry dominated the walk of a large tree)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "prefix", os.path.join(os.fspath(self.base), ""))


def _read_layer(directory: Path, names: tuple[str, ...] = IGNORE_FILES) -> _Layer | None:
    lines: list[str] = []
    for name in names:
        try:
            lines += (directory / name).read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue
    return _Layer(directory, GitIgnoreSpec.from_lines(lines)) if lines else None


class IgnoreRules:
    """The ignore files in force at one directory, deepest last."""

    def __init__(self, layers: tuple[_Layer, ...] = ()) -> None:
        self._layers = layers

    @classmethod
    def for_root(cls, root: Path) -> IgnoreRules:
        """The rules of ``root``'s parent directories (see the module text); ``root``'s own
        files are added by :meth:`entering`."""
        parents: list[Path] = []
        current = root.parent if root.parent != root else None
        top: Path | None = None
        if (root / _GIT).exists():
            top = root
        while current is not None and top is None:
            parents.append(current)
            if (current / _GIT).exists():
                top = current
                break
            current = current.parent if current.parent != current else None
        layers: list[_Layer] = []
        if top is not None:
            exclude = _read_layer(top / _GIT / "info", ("exclude",))
            if exclude is not None:
                layers.append(_Layer(top, exclude.spec))
        for directory in reversed(parents):
            layer = _read_layer(directory)
            if layer is not None:
                layers.append(layer)
        return cls(tuple(layers))

    def entering(self, directory: Path) -> IgnoreRules:
        """The rules inside ``directory`` (a nested repository drops the outer ones)."""
        layers = self._layers
        if layers and (directory / _GIT).exists():
            layers = ()
            exclude = _read_layer(directory / _GIT / "info", ("exclude",))
            if exclude is not None:
                layers = (_Layer(directory, exclude.spec),)
        layer = _read_layer(directory)
        if layer is not None:
            layers = (*layers, layer)
        return self if layers is self._layers else IgnoreRules(layers)

    def ignores(self, path: Path, is_dir: bool) -> bool:
        """Whether ``path`` is ignored: the deepest file with a matching rule decides."""
        text = os.fspath(path)
        for layer in reversed(self._layers):
            if not text.startswith(layer.prefix):
                continue
            relative = text[len(layer.prefix) :]
            if os.sep != "/":
                relative = relative.replace(os.sep, "/")
            result = layer.spec.check_file(relative + "/" if is_dir else relative)
            if result.include is not None:
                return result.include
        return False


def walk(root: Path, *, stop: Callable[[], bool] = lambda: False) -> Iterator[Entry]:
    """Every entry below the directory ``root`` that the rules keep (``stop``: asked before
    each directory is read; ``True`` ends the walk)."""
    yield from _walk(root, "", IgnoreRules.for_root(root).entering(root), stop)


def _walk(
    directory: Path, prefix: str, rules: IgnoreRules, stop: Callable[[], bool]
) -> Iterator[Entry]:
    if stop():
        return
    try:
        with os.scandir(directory) as it:
            found = sorted(it, key=lambda e: e.name)
    except OSError:
        return  # unreadable: skipped, as the search programs do
    for item in found:
        if item.name == _GIT:
            continue
        path = directory / item.name
        try:
            is_link = item.is_symlink()
            is_dir = not is_link and item.is_dir(follow_symlinks=False)
        except OSError:
            continue
        if rules.ignores(path, is_dir):
            continue
        relative = prefix + item.name
        yield Entry(path, relative, is_dir, is_link)
        if is_dir:
            yield from _walk(path, relative + "/", rules.entering(path), stop)
