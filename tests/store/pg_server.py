"""A throwaway PostgreSQL server for the store's tests: a temporary cluster, Unix socket only.

``initdb`` and ``pg_ctl`` refuse to run as root, so under root they run as ``nobody`` (through
``runuser``) in a directory that user owns. The cluster listens on no TCP port
(``listen_addresses=''``); its socket is in the cluster's own directory. Local connections are
trusted, except for the role :data:`PASSWORD_ROLE`, which must give its password (the tests of
credentials in errors use it).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Final

BIN_DIRS: Final = tuple(
    Path(f"/usr/lib/postgresql/{v}/bin") for v in ("17", "16", "15", "14", "13")
)
PASSWORD_ROLE: Final = "pw_user"
PASSWORD: Final = "s3cret-Pa55word"


def find_bin_dir() -> Path | None:
    """Where ``initdb`` and ``pg_ctl`` are, or ``None``."""
    for candidate in BIN_DIRS:
        if (candidate / "initdb").is_file() and (candidate / "pg_ctl").is_file():
            return candidate
    found = shutil.which("pg_ctl")
    if found and shutil.which("initdb"):
        return Path(found).parent
    return None


class PgServer:
    """One temporary cluster: :meth:`start`, :meth:`stop`, :meth:`url` of a database."""

    def __init__(self, bin_dir: Path) -> None:
        self.bin_dir = bin_dir
        self.root = Path(tempfile.mkdtemp(prefix="pictx-pg-"))
        self.data = self.root / "data"
        self.socket_dir = self.root
        self._as_user: list[str] = []
        if os.geteuid() == 0:
            self._as_user = ["runuser", "-u", "nobody", "--"]
            shutil.chown(self.root, user="nobody")
        self.superuser = "nobody" if self._as_user else _login_name()
        self.running = False
        self._databases = 0

    def _run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*self._as_user, *args],
            check=check,
            capture_output=True,
            text=True,
            timeout=120,
            cwd=self.root,
        )

    def init(self) -> None:
        self._run(
            str(self.bin_dir / "initdb"),
            "-D",
            str(self.data),
            "--auth-local=trust",
            "--auth-host=reject",
            "-U",
            self.superuser,
            "--no-sync",
            "-E",
            "UTF8",
            "--locale=C",
        )
        with (self.data / "postgresql.conf").open("a") as conf:
            conf.write(
                "\nlisten_addresses = ''\n"
                f"unix_socket_directories = '{self.socket_dir}'\n"
                "max_connections = 200\n"
                "shared_buffers = 32MB\n"
                "fsync = on\n"
                "synchronous_commit = on\n"
            )
        (self.data / "pg_hba.conf").write_text(
            f"local all {PASSWORD_ROLE} scram-sha-256\nlocal all all trust\n"
        )

    def start(self) -> None:
        self._run(
            str(self.bin_dir / "pg_ctl"),
            "-D",
            str(self.data),
            "-l",
            str(self.root / "server.log"),
            "-w",
            "-t",
            "600",  # after an immediate stop, crash recovery replays the WAL first
            "start",
        )
        self.running = True

    def stop(self, mode: str = "fast") -> None:
        if not self.running:
            return
        self._run(str(self.bin_dir / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "stop")
        self.running = False

    def url(self, database: str = "postgres", *, user: str | None = None) -> str:
        who = user or self.superuser
        return f"postgresql://{who}@/{database}?host={self.socket_dir}"

    def password_url(self, password: str, database: str = "postgres") -> str:
        return f"postgresql://{PASSWORD_ROLE}:{password}@/{database}?host={self.socket_dir}"

    def psql(self, sql: str, database: str = "postgres") -> str:
        done = subprocess.run(
            [
                str(self.bin_dir / "psql"),
                "-X",
                "-q",
                "-A",
                "-t",
                "-v",
                "ON_ERROR_STOP=1",
                "-h",
                str(self.socket_dir),
                "-U",
                self.superuser,
                "-d",
                database,
                "-c",
                sql,
            ],
            check=True,
            capture_output=True,
            text=True,
            timeout=120,
        )
        return done.stdout.strip()

    def new_database(self) -> str:
        """A fresh, empty database; its name."""
        self._databases += 1
        name = f"t{os.getpid()}_{self._databases}"
        self.psql(f"CREATE DATABASE {name}")
        return name

    def checkpoint(self) -> None:
        """Write everything to the data files: a crash recovery after this replays little."""
        self.psql("CHECKPOINT")

    def cleanup(self) -> None:
        """Stop the server whatever state it is in (never leave one running), then remove
        the cluster."""
        pg_ctl = str(self.bin_dir / "pg_ctl")
        for mode in ("fast", "immediate"):
            if not (self.data / "postmaster.pid").exists():
                break
            with contextlib.suppress(Exception):
                self._run(pg_ctl, "-D", str(self.data), "-m", mode, "-w", "stop", check=False)
        self.running = False
        shutil.rmtree(self.root, ignore_errors=True)


def _login_name() -> str:
    import getpass

    return getpass.getuser()


@contextlib.contextmanager
def running_server() -> Iterator[PgServer | str]:
    """A started server, or the reason there is none (a string)."""
    bin_dir = find_bin_dir()
    if bin_dir is None:
        yield "no PostgreSQL server binaries (initdb, pg_ctl) on this machine"
        return
    if os.geteuid() == 0 and shutil.which("runuser") is None:
        yield "running as root without runuser: initdb refuses root"
        return
    server = PgServer(bin_dir)
    try:
        server.init()
        server.start()
        server.psql(f"CREATE ROLE {PASSWORD_ROLE} LOGIN PASSWORD '{PASSWORD}'")
    except (OSError, subprocess.SubprocessError) as exc:
        detail = getattr(exc, "stderr", "") or str(exc)
        server.cleanup()
        yield f"could not start a PostgreSQL server: {detail.strip()}"
        return
    try:
        yield server
    finally:
        server.cleanup()
