"""Opening an adapter's session file with ``pictx``, as a user would."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pi_context


def pictx(*args: str) -> str:
    """``pictx ARGS`` in a child process (this checkout's package); its standard output."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(Path(pi_context.__file__).parents[1])
    env["NO_COLOR"] = "1"
    done = subprocess.run(
        [sys.executable, "-m", "pi_context", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout
