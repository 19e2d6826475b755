"""Resolving configured values (``env``, ``headers``, ``oauth.clientSecret``) at each connect.

A value starting with ``!`` runs the rest as a shell command (10 s limit) and uses its trimmed
output; anything else is a template where ``${NAME}`` and ``$NAME`` take environment
variables, ``$$`` is a dollar and ``$!`` an exclamation mark. An unset *or empty* variable, a
failing command or empty output is an error naming what was being resolved, so a server with
a missing secret fails on its own instead of connecting with a blank credential. Resolution
happens at every connection attempt, so a secret rotated meanwhile is picked up on reconnect.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Mapping
from typing import Final

from pi_context.errors import PiContextError

__all__ = ["ValueResolutionError", "resolve_value", "resolve_values"]

SHELL_TIMEOUT_SECONDS: Final = 10.0
_TOKEN: Final = re.compile(r"\$\$|\$!|\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")


class ValueResolutionError(PiContextError):
    """A configured value could not be resolved (the message names the value)."""


def resolve_value(value: str, what: str, env: Mapping[str, str] | None = None) -> str:
    """``value`` resolved; ``what`` names it in errors (``MCP server "x" env "KEY"``)."""
    environ = os.environ if env is None else env
    if value.startswith("!"):
        command = value[1:]
        try:
            done = subprocess.run(  # the user's own configured command
                command,
                shell=True,
                capture_output=True,
                timeout=SHELL_TIMEOUT_SECONDS,
                check=False,
                stdin=subprocess.DEVNULL,
            )
        except (OSError, subprocess.TimeoutExpired):
            done = None
        output = done.stdout.decode("utf-8", "replace").strip() if done is not None else ""
        if done is None or done.returncode != 0 or not output:
            raise ValueResolutionError(f"Failed to resolve {what} from shell command: {command}")
        return output
    missing: list[str] = []

    def substitute(match: re.Match[str]) -> str:
        token = match.group(0)
        if token == "$$":
            return "$"
        if token == "$!":
            return "!"
        name = match.group(1) or match.group(2)
        found = environ.get(name, "")
        if not found:
            if name not in missing:
                missing.append(name)
            return ""
        return found

    result = _TOKEN.sub(substitute, value)
    if len(missing) == 1:
        raise ValueResolutionError(
            f"Failed to resolve {what} from environment variable: {missing[0]}"
        )
    if missing:
        raise ValueResolutionError(
            f"Failed to resolve {what} from environment variables: {', '.join(missing)}"
        )
    return result


def resolve_values(
    values: Mapping[str, str], what: str, env: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Each value of a map resolved; ``what`` is completed with the key in quotes."""
    return {key: resolve_value(value, f'{what} "{key}"', env) for key, value in values.items()}
