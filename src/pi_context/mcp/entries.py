"""One ``mcp.json`` server entry: its validation, pi's checks in pi's order, and ``~`` expanded.

Kept apart from :mod:`.config` (the merged configuration, built on ``msgspec`` and ``orjson``)
so that the command line can check the global file's entries and spawn their servers before
it imports anything heavier than the standard library's ``json``
(:func:`pi_context.mcp.early.spawn_for_command_line`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

TYPE_CHECKING = False  # not typing's: the command line imports this before spawning servers
if TYPE_CHECKING:
    from typing import Any, Final

__all__ = [
    "EXPOSURES",
    "EXPOSURE_ALIASES",
    "NAME",
    "normalized",
    "positive_number",
    "validate_entry",
]

EXPOSURES: Final[tuple[str, ...]] = ("codemode", "deferred", "direct", "hidden")
EXPOSURE_ALIASES: Final = {"codemode-deferred": "codemode"}
NAME: Final = re.compile(r"^[A-Za-z0-9_-]+$")
"""A valid server name."""
_LOOPBACK_HOSTS: Final = frozenset(("localhost", "127.0.0.1", "[::1]", "::1"))
_EXPOSURE_LIST: Final = '"codemode", "deferred", "direct", "hidden"'


def positive_number(value: Any) -> bool:
    return (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and value > 0
        and value != float("inf")
    )


def _string_map(value: Any) -> bool:
    return isinstance(value, Mapping) and all(isinstance(v, str) for v in value.values())


def _expand_home(value: Any) -> Any:
    if isinstance(value, str) and (value == "~" or value.startswith("~/")):
        return os.path.expanduser("~") + value[1:]
    return value


def _is_http_url(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    from urllib.parse import urlparse

    try:
        parsed = urlparse(value)
    except ValueError:
        return False
    return parsed.scheme in ("http", "https") and bool(parsed.netloc)


def _secure_or_loopback(url: str) -> bool:
    from urllib.parse import urlparse

    parsed = urlparse(url)
    if parsed.scheme == "https":
        return True
    host = (parsed.hostname or "").lower()
    return parsed.scheme == "http" and (host in _LOOPBACK_HOSTS or f"[{host}]" in _LOOPBACK_HOSTS)


def _oauth_problem(oauth: Any) -> str | None:
    """The first problem of an ``oauth`` object (pi checks these before connecting)."""
    if not isinstance(oauth, Mapping):
        return "oauth must be an object"
    for key in ("clientId", "clientSecret", "scope"):
        if key in oauth and not isinstance(oauth[key], str):
            return f"oauth.{key} must be a string"
    port = oauth.get("callbackPort")
    if port is not None and not (
        isinstance(port, int) and not isinstance(port, bool) and 1 <= port <= 65535
    ):
        return "oauth.callbackPort must be a port number"
    callback = oauth.get("callbackUrl")
    if callback is not None:
        from urllib.parse import urlparse

        parsed = urlparse(callback) if isinstance(callback, str) else None
        if (
            parsed is None
            or parsed.scheme != "http"
            or (parsed.hostname or "") not in ("localhost", "127.0.0.1", "::1")
            or parsed.query
            or parsed.fragment
        ):
            return "oauth.callbackUrl must be an http loopback URL without query or fragment"
    name = oauth.get("clientName")
    if name is not None and not (isinstance(name, str) and name.strip()):
        return "oauth.clientName must be a non-empty string"
    registration = oauth.get("clientRegistration")
    if registration is not None and registration not in ("auto", "dcr", "cimd"):
        return 'oauth.clientRegistration must be one of "auto", "dcr", "cimd"'
    metadata = oauth.get("authServerMetadataUrl")
    if metadata is not None and not (_is_http_url(metadata) and _secure_or_loopback(str(metadata))):
        return "oauth.authServerMetadataUrl must be an https URL, or http on a loopback host"
    return None


def validate_entry(name: str, entry: Any, *, project: bool) -> str | None:
    """The first problem of one server entry (pi's order of checks), or ``None``."""
    if not NAME.match(name):
        return f'invalid server name "{name}" (use letters, digits, "_" and "-")'
    if not isinstance(entry, Mapping):
        return f'server "{name}" must be an object'
    where = f'server "{name}"'
    if "enabled" in entry and not isinstance(entry["enabled"], bool):
        return f"{where}: enabled must be a boolean"
    if "description" in entry and not isinstance(entry["description"], str):
        return f"{where}: description must be a string"
    if "timeout" in entry and not positive_number(entry["timeout"]):
        return f"{where}: timeout must be a positive number of seconds"
    kind = entry.get("type")
    if kind == "sse":
        return f"{where}: legacy SSE transport is not supported; use the streamable HTTP URL"
    url, command = entry.get("url"), entry.get("command")
    if isinstance(url, str) and kind in (None, "http", "streamable-http"):
        if not _is_http_url(url):
            return f"{where}: url must be an http or https URL"
        if "headers" in entry and not _string_map(entry["headers"]):
            return f"{where}: headers must map names to strings"
        if "oauth" in entry:
            problem = _oauth_problem(entry["oauth"])
            if problem is not None:
                return f"{where}: {problem}"
    elif isinstance(command, str) and kind in (None, "stdio"):
        args = entry.get("args")
        if args is not None and not (
            isinstance(args, list) and all(isinstance(a, str) for a in args)
        ):
            return f"{where}: args must be an array of strings"
        if "env" in entry and not _string_map(entry["env"]):
            return f"{where}: env must map names to strings"
        if "cwd" in entry and not isinstance(entry["cwd"], str):
            return f"{where}: cwd must be a string"
    else:
        return f'{where} needs either "command" (stdio) or "url" (streamable HTTP)'
    exposure = entry.get("exposure")
    if exposure is not None and EXPOSURE_ALIASES.get(exposure, exposure) not in EXPOSURES:
        return f"{where}: exposure must be one of {_EXPOSURE_LIST}"
    if "toolExposure" in entry:
        table = entry["toolExposure"]
        if not _string_map(table):
            return f"{where}: toolExposure must map tool names to exposures"
        for key, value in table.items():
            if EXPOSURE_ALIASES.get(value, value) not in EXPOSURES:
                return f'{where}: toolExposure "{key}" must be one of {_EXPOSURE_LIST}'
    if "auth" in entry:
        if project:
            return f"{where}: auth is only allowed in the global mcp.json"
        auth = entry["auth"]
        provider = auth.get("provider") if isinstance(auth, Mapping) else None
        if not (isinstance(provider, str) and provider.strip()):
            return f"{where}: auth.provider must be a provider name"
        if not (isinstance(url, str) and _secure_or_loopback(url)):
            return f"{where}: auth requires an https URL, or http on localhost, 127.0.0.1, or [::1]"
    return None


def normalized(entry: Mapping[str, Any]) -> dict[str, Any]:
    """``~`` expanded in ``command``, each ``args`` item and ``cwd``."""
    out = dict(entry)
    if "command" in out:
        out["command"] = _expand_home(out["command"])
    if isinstance(out.get("args"), list):
        out["args"] = [_expand_home(a) for a in out["args"]]
    if "cwd" in out:
        out["cwd"] = _expand_home(out["cwd"])
    return out
