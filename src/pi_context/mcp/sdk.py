"""The parts of the official ``mcp`` SDK a client needs, without the rest of the package.

``import mcp`` runs the package's ``__init__``, which imports the server side too (Starlette,
uvicorn's types, the server framework, the client's in-memory transport built on it): over a
second on a small machine, paid before the first server could be spoken to. A client needs
``mcp.client.session``, one transport module and what they import — about half of that.

:func:`load_client_parts` registers ``mcp`` and ``mcp.client`` as packages whose ``__init__``
has not run yet, so their submodules import alone. The first time anything asks one of them for
a name it does not have (``from mcp import ClientSession`` in a user's own code), its
``__init__`` runs then, into the same module, and the name is there: the package is complete
for whoever needs it, only later.

:func:`import_client` imports those parts with the cyclic collector paused, then freezes what
exists (:func:`gc.freeze`), as the console script does with its own start-up: the SDK's
types are some 500 pydantic models whose classes and schemas the collector would otherwise
walk at every full collection and once more while the interpreter exits (about a second at
the exit of a short run on a loaded 2-core machine, a tenth of that frozen).
"""

from __future__ import annotations

import gc
import importlib
import importlib.util
import sys
from types import ModuleType
from typing import Any, Final

__all__ = ["import_client", "load_client_parts"]

SHALLOW_PACKAGES: Final = ("mcp", "mcp.client")
"""The packages whose ``__init__`` imports far more than a client uses."""


def load_client_parts() -> None:
    """Make ``mcp`` and ``mcp.client`` importable without their ``__init__`` (no-op for one
    already imported)."""
    for name in SHALLOW_PACKAGES:
        if name in sys.modules:
            continue
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return  # not installed: the import that needs it reports that
        module = importlib.util.module_from_spec(spec)
        module.__getattr__ = _completer(module)  # type: ignore[method-assign]
        sys.modules[name] = module
        parent, _, child = name.rpartition(".")
        if parent:
            setattr(sys.modules[parent], child, module)


CLIENT_MODULES: Final = ("mcp_types", "mcp.shared.exceptions", "mcp.client.session")
TRANSPORT_MODULES: Final = {
    "stdio": ("mcp.shared.message",),
    "http": ("mcp.client.streamable_http", "mcp.shared._httpx_utils"),
}
_imported: set[str] = set()


def import_client(transport: str) -> None:
    """Import the client session and ``transport``'s modules (``stdio`` or ``http``), once."""
    if transport in _imported:
        return
    load_client_parts()
    enabled = gc.isenabled()
    gc.disable()
    try:
        for name in (*CLIENT_MODULES, *TRANSPORT_MODULES[transport]):
            importlib.import_module(name)
    finally:
        if enabled:
            gc.freeze()
            gc.enable()
    _imported.add(transport)


def _completer(module: ModuleType) -> Any:
    """A module ``__getattr__`` that runs the package's ``__init__`` on the first missing name."""

    def complete(name: str) -> Any:
        if name.startswith("__") and name != "__all__":
            raise AttributeError(f"module {module.__name__!r} has no attribute {name!r}")
        vars(module).pop("__getattr__", None)
        spec = module.__spec__
        assert spec is not None
        assert spec.loader is not None
        spec.loader.exec_module(module)
        return getattr(module, name)

    return complete
