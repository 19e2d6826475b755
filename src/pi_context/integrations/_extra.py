"""Importing an adapter's framework, or saying which extra installs it."""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["require"]


def require(module: str, extra: str, framework: str) -> ModuleType:
    """``module`` imported; an :class:`ImportError` naming the extra when it is missing.

    Each adapter depends on its framework only through its extra, so a plain install of
    pi-context never pulls three agent frameworks in; the error tells the user the one command
    that fixes it.
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(
            f"pi_context.integrations needs {framework} for this adapter; "
            f"install it with: pip install 'pi-context[{extra}]'"
        ) from exc
