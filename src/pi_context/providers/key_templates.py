"""Keys: the values of ``models.json`` (``$VAR``, ``${VAR}``, ``$$``, ``$!``, ``!command``) and
the :class:`Credentials` they resolve to.

A value is resolved when a model is created (and a command run once per registry), never when
the file is read, so a file naming an unset variable still loads and the error names the
variable when the model is used.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Mapping

from msgspec import Struct, field

__all__ = ["Credentials", "resolve_key_template"]


class Credentials(Struct, frozen=True):
    """Resolved credentials; ``error`` says why none could be found."""

    api_key: str | None = None
    bearer: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    error: str | None = None
    source: str | None = None
    """Where the key came from (an env var, or models.json), named when it is rejected."""

    @property
    def ok(self) -> bool:
        return self.error is None


_VAR = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*)|(\$)|(!))")


def resolve_key_template(
    value: str, env: Mapping[str, str], *, run_commands: bool = True
) -> tuple[str | None, str | None]:
    """``(resolved, missing)``: a key/header value with ``$VAR``/``${VAR}`` substituted.

    A leading ``!`` runs the rest with the shell (10 s timeout) and uses its trimmed output.
    ``missing`` names the unset variable (or ``!command``) when the value cannot be resolved.
    """
    if value.startswith("!"):
        if not run_commands:
            return None, value
        try:
            done = subprocess.run(
                value[1:], shell=True, capture_output=True, text=True, timeout=10, check=False
            )
        except (OSError, subprocess.TimeoutExpired):
            return None, value
        out = done.stdout.strip()
        return (out, None) if done.returncode == 0 and out else (None, value)
    missing: list[str] = []

    def sub(match: re.Match[str]) -> str:
        if match.group(3):
            return "$"
        if match.group(4):
            return "!"
        name = match.group(1) or match.group(2)
        got = env.get(name, "")
        if not got:
            missing.append(name)
        return got

    result = _VAR.sub(sub, value)
    return (None, missing[0]) if missing else (result, None)
