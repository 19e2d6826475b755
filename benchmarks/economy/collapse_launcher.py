"""``python -m benchmarks.economy.collapse_launcher ARGS``: pictx with pi's collapse delivery.

The same ``pictx`` command line, except that the HTTP adapters deliver system prompt changes
the way pi 1.6.0 does for models without mid-conversation system messages: one replayed
prompt at the head of the request (``system_delivery = "collapse"``). It isolates the effect
of pictx's in-place delivery from everything else it does.

The switch is a read-only ``system_delivery`` on the adapters' shared base class, so neither
SDK is imported before pictx needs it (startup costs the same as plain ``pictx``).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from benchmarks.economy.clock import install_clock

from pi_context.providers._sdk import SDKModel


def install_collapse() -> Callable[[], None]:
    """Make every SDK adapter deliver by collapsing; returns the undo."""
    had = "system_delivery" in SDKModel.__dict__
    previous: Any = SDKModel.__dict__.get("system_delivery")

    def ignore(self: Any, value: Any) -> None:
        return

    # a data descriptor on the class wins over the adapters' instance assignment
    SDKModel.system_delivery = property(lambda self: "collapse", ignore)  # type: ignore[assignment]

    def undo() -> None:
        if had:
            SDKModel.system_delivery = previous
        else:
            del SDKModel.system_delivery

    return undo


def main() -> int:
    install_clock()
    install_collapse()
    from pi_context.cli.main import main as pictx_main

    return int(pictx_main() or 0)


if __name__ == "__main__":
    sys.exit(main())
