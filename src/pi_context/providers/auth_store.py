"""``<agentDir>/auth.json``: credentials stored per provider, in pi's format.

::

    {"openai": {"type": "api_key", "key": "sk-..."},
     "anthropic": {"type": "oauth", "access": "...", "refresh": "...", "expires": 1767225600000}}

Precedence: ``--api-key`` > this file > models.json ``apiKey`` > the
provider's environment variables; :class:`~pi_context.providers.registry.ModelRegistry` asks
:meth:`AuthStore.credential`. An ``api_key`` record's ``key`` is used as written. An ``oauth``
record's ``access`` token is used while ``expires`` (milliseconds since the epoch) lies in the
future; pictx runs no OAuth flow and cannot refresh a token, so an expired one is pi's
``Authentication failed ... Run '/login <p>'`` error (``/login`` then stores an API key).

A file that cannot be read, is not JSON or is not an object is ignored as a whole with one
warning naming it (never a crash); :meth:`AuthStore.set_api_key` and :meth:`AuthStore.remove`
refuse to rewrite such a file rather than lose what it holds. Writes replace the file
atomically (temporary file, fsync, rename) with mode 0600; keys are never echoed or logged.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from msgspec import Struct

from pi_context.errors import ResourceError

__all__ = ["AUTH_FILE_NAME", "AuthStore", "StoredCredential", "expired_oauth_error"]

AUTH_FILE_NAME = "auth.json"


def expired_oauth_error(provider: str) -> str:
    """pi's error for an OAuth credential that cannot be used."""
    return (
        f'Authentication failed for "{provider}". Credentials may have expired or network is '
        f"unavailable. Run '/login {provider}' to re-authenticate."
    )


class StoredCredential(Struct, frozen=True):
    """What auth.json gives for one provider: a key, or why there is none usable."""

    key: str | None
    oauth: bool = False
    """The key is an OAuth access token (Anthropic sends it as a bearer token)."""
    error: str | None = None


class AuthStore:
    """One ``auth.json``; ``clock`` (seconds, like :func:`time.time`) decides expiry."""

    def __init__(self, path: Path, *, clock: Callable[[], float] = time.time) -> None:
        self.path = path
        self.clock = clock
        self.warnings: list[str] = []
        """Why the file was ignored (a broken file), or which records were skipped."""
        self._records: dict[str, Any] | None = None
        self._broken = False

    @classmethod
    def in_agent_dir(cls, agent_dir: Path) -> AuthStore:
        return cls(agent_dir / AUTH_FILE_NAME)

    def records(self) -> dict[str, Any]:
        """The file's object (``{}`` when it is missing or broken), read once."""
        if self._records is None:
            self._records = self._read()
        return self._records

    def _read(self) -> dict[str, Any]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        except (OSError, UnicodeDecodeError) as exc:
            return self._ignore(f"cannot be read ({exc})")
        if not text.strip():
            return {}
        try:
            data = json.loads(text)
        except ValueError as exc:
            return self._ignore(f"is not valid JSON ({exc})")
        if not isinstance(data, dict):
            return self._ignore("is not a JSON object")
        return data

    def _ignore(self, why: str) -> dict[str, Any]:
        self._broken = True
        self.warnings.append(f"{self.path}: {why}; its stored credentials are ignored")
        return {}

    def providers(self) -> list[str]:
        """Providers with a stored record, in file order."""
        return list(self.records())

    def credential(self, provider: str) -> StoredCredential | None:
        """The stored credential for ``provider``; ``None`` when the file has none (or an
        unusable record, which is warned about once)."""
        record = self.records().get(provider)
        if record is None:
            return None
        kind = record.get("type") if isinstance(record, dict) else None
        if kind == "api_key" and isinstance(record.get("key"), str) and record["key"]:
            return StoredCredential(record["key"])
        if kind == "oauth" and isinstance(record, dict):
            access, expires = record.get("access"), record.get("expires")
            fresh = isinstance(expires, (int, float)) and expires > self.clock() * 1000
            if isinstance(access, str) and access and fresh:
                return StoredCredential(access, oauth=True)
            return StoredCredential(None, oauth=True, error=expired_oauth_error(provider))
        note = f'{self.path}: the record for "{provider}" is not an api_key or oauth credential'
        if note not in self.warnings:
            self.warnings.append(note + "; ignored")
        return None

    # -- changes ----------------------------------------------------------------------------------

    def set_api_key(self, provider: str, key: str) -> None:
        """Store ``key`` for ``provider`` (replacing its record, keeping every other one)."""
        if not provider or not key:
            raise ResourceError(f"{self.path}: a provider and a non-empty key are needed")
        records = dict(self._writable())
        records[provider] = {"type": "api_key", "key": key}
        self._write(records)

    def remove(self, provider: str) -> bool:
        """Forget ``provider``'s record; ``False`` when there was none."""
        records = dict(self._writable())
        if provider not in records:
            return False
        del records[provider]
        self._write(records)
        return True

    def _writable(self) -> dict[str, Any]:
        self._records = None
        self._broken = False
        records = self.records()
        if self._broken:
            raise ResourceError(
                f"{self.path}: not changed, the file is broken (fix or remove it first): "
                + self.warnings[-1].removeprefix(f"{self.path}: ")
            )
        return records

    def _write(self, records: dict[str, Any]) -> None:
        import tempfile  # only when a credential is saved

        directory = self.path.parent
        directory.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".auth-", suffix=".json", dir=directory)
        try:
            os.fchmod(fd, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump(records, out, indent=2, ensure_ascii=False)
                out.write("\n")
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, self.path)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise ResourceError(f"{self.path}: cannot write: {exc.strerror}") from exc
        self._records = records
