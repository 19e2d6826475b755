"""Finding and loading extensions.

Sources, in load order (which is also handler order):

1. ``<agentDir>/extensions/`` — your own extensions, always loaded;
2. ``<project>/.pi/extensions/`` — only when the project is trusted (a project's code must
   not run just because you opened it);
3. installed distributions that declare an entry point in the group
   ``pi_context.extensions`` (the entry point names a module with ``register`` or the
   ``register`` callable itself);
4. explicit paths (``pictx -e <path>``).

In a directory, every ``*.py`` file and every package (a directory with ``__init__.py``) is an
extension, sorted by name; names starting with ``_`` or ``.`` are skipped. An extension module
defines ``register(pi)``. One that fails to import or register is reported with its path and
skipped; the others still load.
"""

from __future__ import annotations

import hashlib
import importlib.util
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from pi_context.errors import ExtensionError
from pi_context.extensions.api import Extension, ExtensionAPI
from pi_context.extensions.context import ExtensionActions
from pi_context.extensions.discovery import ENTRY_POINT_GROUP, discover_extension_paths
from pi_context.extensions.runner import ExtensionRunner

if TYPE_CHECKING:
    import importlib.metadata

__all__ = [
    "ENTRY_POINT_GROUP",
    "discover_extension_paths",
    "load_extension_module",
    "load_extensions",
]


def _module_name(path: Path) -> str:
    digest = hashlib.sha1(str(path).encode("utf-8")).hexdigest()[:10]
    stem = "".join(ch if ch.isalnum() else "_" for ch in path.stem)
    return f"pi_context_extension_{stem}_{digest}"


def load_extension_module(path: Path) -> ModuleType:
    """Import an extension file or package under a private module name."""
    path = path.resolve()
    name = _module_name(path)
    if path.is_dir():
        spec = importlib.util.spec_from_file_location(
            name, path / "__init__.py", submodule_search_locations=[str(path)]
        )
    else:
        spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ExtensionError("not a loadable Python module or package", path=path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def _register_function(target: Any, where: str) -> Callable[[ExtensionAPI], Any]:
    if isinstance(target, ModuleType):
        register = getattr(target, "register", None)
        if not callable(register):
            raise ExtensionError(f"{where} defines no register(pi) function")
        return register  # type: ignore[no-any-return]
    if callable(target):
        return target  # type: ignore[no-any-return]
    raise ExtensionError(f"{where} is neither a module nor a register(pi) callable")


class _Loader:
    def __init__(self, host: Callable[[], ExtensionActions | None]) -> None:
        self.host = host
        self.extensions: list[Extension] = []
        self.errors: list[Exception] = []
        self.seen: set[str] = set()

    def first_time(self, key: str) -> bool:
        """Whether ``key`` (a resolved path or an entry point) has not been loaded yet."""
        if key in self.seen:
            return False
        self.seen.add(key)
        return True

    def activate(self, ext: Extension, register: Callable[[ExtensionAPI], Any]) -> None:
        try:
            register(ExtensionAPI(ext, self.host))
        except Exception as exc:  # noqa: BLE001 - a broken extension must not stop the others
            self.errors.append(
                ExtensionError(
                    f"register failed: {type(exc).__name__}: {exc}",
                    path=ext.path,
                    extension=ext.name,
                )
            )
            return
        self.extensions.append(ext)

    def load_path(self, path: Path, source: str) -> None:
        if not self.first_time(str(path.resolve())):
            return
        ext = Extension(
            name=path.stem if path.is_file() else path.name, source=source, path=str(path)
        )
        try:
            module = load_extension_module(path)
            register = _register_function(module, str(path))
        except ExtensionError as exc:
            self.errors.append(exc if exc.path else ExtensionError(str(exc), path=path))
            return
        except Exception as exc:  # noqa: BLE001 - import errors of third-party code
            self.errors.append(
                ExtensionError(f"import failed: {type(exc).__name__}: {exc}", path=path)
            )
            return
        self.activate(ext, register)

    def load_entry_point(self, ep: importlib.metadata.EntryPoint) -> None:
        if not self.first_time(f"entry_point:{ep.value}"):
            return
        ext = Extension(name=ep.name, source="entry_point", path=ep.value)
        try:
            register = _register_function(ep.load(), f"entry point {ep.name} ({ep.value})")
        except Exception as exc:  # noqa: BLE001 - import errors of third-party code
            self.errors.append(
                ExtensionError(
                    f"entry point {ep.value} failed: {type(exc).__name__}: {exc}", extension=ep.name
                )
            )
            return
        self.activate(ext, register)


def load_extensions(
    *,
    cwd: Path | str,
    agent_dir: Path | str | None = None,
    trusted: bool = False,
    paths: Sequence[Path | str] = (),
    entry_points: bool = True,
    include_discovered: bool = True,
    registrations: Iterable[tuple[str, Callable[[ExtensionAPI], Any]]] = (),
    settings_paths: Sequence[Path | str] = (),
    settings_problems: Sequence[str] = (),
) -> ExtensionRunner:
    """Load every extension and return a runner over them.

    ``trusted`` is the project's trust decision; ``.pi/extensions`` is skipped without it.
    ``include_discovered=False`` (``-ne``) skips directories and entry points but still loads
    explicit ``paths``. ``registrations`` adds in-process extensions as ``(name, register)``.
    ``settings_paths`` are the ones the settings' ``extensions`` lists name
    (:func:`~pi_context.extensions.discovery.settings_extension_paths`), loaded after the
    extension folders, as discovered ones (not under ``-ne``); ``settings_problems`` are
    reported with the load errors.
    Failures are collected in ``runner.load_errors``; nothing here raises for a bad extension.
    """
    runner = ExtensionRunner(cwd=cwd)
    loader = _Loader(runner.host)
    if include_discovered:
        if agent_dir is not None:
            for path in discover_extension_paths(Path(agent_dir) / "extensions"):
                loader.load_path(path, "agent")
        if trusted:
            for path in discover_extension_paths(Path(cwd) / ".pi" / "extensions"):
                loader.load_path(path, "project")
        for listed in settings_paths:
            loader.load_path(Path(listed), "settings")
        loader.errors.extend(ExtensionError(problem) for problem in settings_problems)
        if entry_points:
            import importlib.metadata  # costly to import (benchmarks/README.md); only discovery needs it

            for ep in sorted(
                importlib.metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name
            ):
                loader.load_entry_point(ep)
    for raw in paths:
        path = Path(raw)
        if not path.is_absolute():
            path = Path(cwd) / path
        if not path.exists():
            loader.errors.append(ExtensionError("extension not found", path=path))
            continue
        loader.load_path(path, "path")
    for name, register in registrations:
        loader.activate(Extension(name=name, source="inline"), register)
    runner.extensions = loader.extensions
    runner.load_errors = loader.errors
    return runner
