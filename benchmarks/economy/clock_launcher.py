"""``python -m benchmarks.economy.clock_launcher ARGS``: pictx on the workload's clock.

The same ``pictx`` command line, with the wall clock moved forward by the user's pauses so
far (:mod:`benchmarks.economy.clock`): what a time-aware setting sees is what a user's pauses
would show it. Without ``SIM_CLOCK_FILE`` it is plain ``pictx``.
"""

from __future__ import annotations

import sys

from benchmarks.economy.clock import install_clock


def main() -> int:
    install_clock()
    from pi_context.cli.main import main as pictx_main

    return int(pictx_main() or 0)


if __name__ == "__main__":
    sys.exit(main())
