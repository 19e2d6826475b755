"""The contenders: pi 1.6.0 and seven pictx configurations, each a command line and settings."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.economy.pi_install import PiInstall

__all__ = ["Contender", "parse_contender", "pi_contender", "pictx_contenders"]

REPO = Path(__file__).resolve().parents[2]


@dataclass(frozen=True, slots=True)
class Contender:
    name: str
    command: list[str]
    """The program; the driver appends ``-p``, ``--model``, session flags and the prompt."""
    compaction: dict[str, Any] = field(default_factory=dict)
    """Extra keys of the ``compaction`` settings object."""
    env: dict[str, str] = field(default_factory=dict)
    is_pi: bool = False
    settings: dict[str, Any] = field(default_factory=dict)
    """Other top-level settings (``recall``)."""
    version: str = ""
    """What the contender's code is (pi's version, a hash of pictx's sources): a saved unit is
    reused only while it is unchanged."""


LEAN: dict[str, Any] = {
    "summarizer": "offline",
    "maxContextTokens": 20_000,
    "keepRecentTokens": 4_000,
}
"""The lean configuration: the offline summarizer, compaction once the context passes 20,000
tokens whatever the window, a 4,000-token tail."""


RECALL_OFF: dict[str, Any] = {"recall": "off"}
"""pictx without the ``recall`` tool (the default offers it after the first compaction): with
``--retention``, what the tool adds to the probes answered and to the cost."""


def pi_contender(install: PiInstall) -> Contender:
    return Contender(
        "pi 1.6.0",
        install.command(),
        env={"PATH": f"{install.node.parent}:/usr/local/bin:/usr/bin:/bin"},
        is_pi=True,
        version=f"pi {install.version}",
    )


def parse_contender(spec: str) -> tuple[str, dict[str, Any]]:
    """``NAME=JSON`` (``--contender``): a name and the keys of its ``compaction`` settings."""
    name, sep, raw = spec.partition("=")
    name = name.strip()
    if not sep or not name:
        raise ValueError(f"--contender {spec!r}: expected NAME=JSON")
    try:
        settings = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ValueError(f"--contender {name!r}: the settings are not JSON: {exc}") from None
    if not isinstance(settings, dict):
        raise ValueError(f"--contender {name!r}: the settings must be a JSON object")
    return f"pictx {name}", settings


def pictx_contenders(extra: Sequence[tuple[str, dict[str, Any]]] = ()) -> list[Contender]:
    """pictx from this checkout (``src/`` first on the path, whatever is installed), and the
    ``extra`` configurations (``--contender``) after the built-in five."""
    from benchmarks.economy.units import code_hash

    env = {"PYTHONPATH": f"{REPO / 'src'}:{REPO}"}
    pictx = [sys.executable, "-m", "benchmarks.economy.clock_launcher"]
    here = Path(__file__).parent
    version = (
        f"pictx src {code_hash([REPO / 'src' / 'pi_context'])}"
        f" clock {code_hash([here / 'clock.py', here / 'clock_launcher.py'])}"
    )
    launcher = Path(__file__).with_name("collapse_launcher.py")
    return [
        Contender("pictx default", pictx, env=env, version=version),
        Contender("pictx + masking", pictx, {"maskObservations": True}, env=env, version=version),
        Contender(
            "pictx + offline summarizer", pictx, {"summarizer": "offline"}, env=env, version=version
        ),
        Contender("pictx lean", pictx, LEAN, env=env, version=version),
        Contender("pictx, recall off", pictx, env=env, version=version, settings=RECALL_OFF),
        Contender(
            "pictx lean, recall off", pictx, LEAN, env=env, version=version, settings=RECALL_OFF
        ),
        Contender(
            "pictx, collapse delivery",
            [sys.executable, "-m", "benchmarks.economy.collapse_launcher"],
            env=env,
            version=f"{version} launcher {code_hash([launcher])}",
        ),
        *(
            Contender(name, pictx, dict(settings), env=env, version=version)
            for name, settings in extra
        ),
    ]
