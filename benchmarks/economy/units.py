"""Units of the comparison (one contender x simulator x seed) saved as they complete.

A unit's file (``<out>/units/<api>-seed<N>-<contender>.json``) holds its inputs and its run.
A later run of the command skips a unit whose saved inputs equal its current ones and whose
run has no failed prompt: the workload (seed, prompts, window), the simulator, the driver, the
contender's settings and the version of its code (pi's version, or a hash of pictx's sources)
and of the simulator's code (a hash of the modules that generate, answer and bill). ``--fresh``
ignores saved units.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.economy.contenders import Contender

__all__ = ["Unit", "code_hash", "simulator_version"]

ECONOMY = Path(__file__).resolve().parent
SIMULATOR_MODULES = (
    "cache_anthropic.py", "cache_openai.py", "ledger.py", "pricing.py", "project.py",
    "responder.py", "server.py", "tokens.py", "wire.py", "workload.py",
)  # fmt: skip


def code_hash(paths: list[Path]) -> str:
    """A short hash of the contents of ``paths`` (directories: their ``*.py`` files)."""
    digest = hashlib.sha256()
    for root in paths:
        files = sorted(root.rglob("*.py")) if root.is_dir() else [root]
        for path in files:
            digest.update(str(path.relative_to(root.parent)).encode())
            digest.update(b"\0")
            digest.update(path.read_bytes())
            digest.update(b"\0")
    return digest.hexdigest()[:16]


def simulator_version() -> str:
    return code_hash([ECONOMY / name for name in SIMULATOR_MODULES])


def slug(name: str) -> str:
    return name.replace(" ", "-").replace(",", "").replace("+", "plus")


@dataclass(frozen=True, slots=True)
class Unit:
    contender: Contender
    api: str
    seed: int
    prompts: int
    window: int
    driver: str
    retention: bool = False
    """The workload with planted facts and probes (``--retention``)."""
    summary_keep: str = "plausible"
    """What the simulated summaries keep of the planted facts (``--summary-keep``; it
    matters, and names the unit, only with ``retention``)."""

    summary_model: str = ""
    """With ``--summary-url``: the real model the summary requests are also sent to."""
    summary_url: str = ""
    summary_window: int = 8192

    @property
    def name(self) -> str:
        keep = f"-keep-{self.summary_keep}" if self.retention else ""
        real = f"-real-{slug(self.summary_model)}" if self.summary_model else ""
        return f"{self.api}-seed{self.seed}-{slug(self.contender.name)}{keep}{real}"

    def inputs(self) -> dict[str, Any]:
        from benchmarks.economy.drive import DRIVER_VERSION

        extra: dict[str, Any] = {}
        if self.contender.settings:
            extra["settings"] = self.contender.settings
        if self.retention:
            extra["retention"] = True
            extra["summary_keep"] = self.summary_keep
        if self.summary_model:
            extra["summary_model"] = self.summary_model
            extra["summary_window"] = self.summary_window
        return {
            **extra,
            "contender": self.contender.name,
            "contender_version": self.contender.version,
            "compaction": self.contender.compaction,
            "api": self.api,
            "seed": self.seed,
            "prompts": self.prompts,
            "window": self.window,
            "driver": self.driver,
            "driver_version": DRIVER_VERSION,
            "simulator_version": simulator_version(),
        }

    def path(self, out: Path) -> Path:
        return out / "units" / f"{self.name}.json"

    def load(self, out: Path) -> dict[str, Any] | None:
        """The saved run when it is complete (no failed prompt) and its inputs are current."""
        path = self.path(out)
        try:
            saved = json.loads(path.read_text())
        except (OSError, ValueError):
            return None
        if not isinstance(saved, dict) or saved.get("inputs") != self.inputs():
            return None
        run = saved.get("run")
        if not isinstance(run, dict) or run.get("failures"):
            return None
        return run

    def save(self, out: Path, run: dict[str, Any]) -> None:
        """Write the unit atomically (a crash leaves the old file or the new one)."""
        path = self.path(out)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"inputs": self.inputs(), "run": run}))
        os.replace(tmp, path)
