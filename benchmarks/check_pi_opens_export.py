"""Does pi 1.6.0 open what the session stores export, as it is? (issue 32)

    nice -n 10 .venv/bin/python benchmarks/check_pi_opens_export.py [--pi-cache DIR]
        [--stores memory,file,postgresql] [--only NAME ...] [--keep DIR]

For every conformance session (``tests/data/conformance/sessions``) that the stores import,
and for each kind of store (memory, file, PostgreSQL on a temporary local server, the tests'
own), the session is imported, exported to a file, and pi 1.6.0 continues the exported file
with one more prompt (``-p --session FILE``) against a fake OpenAI-compatible model on
127.0.0.1. pi also runs once on a copy of the original file, the reference. A row passes when:

* ``opened``: pi exited 0 and wrote to stderr what it wrote for the original (nothing);
* ``same request``: the requests pi sent to the model are those it sent for the original
  (the whole request bodies, compared as JSON: system prompt, messages, tools, options);
* ``appended``: pi wrote to the exported file what it wrote to the original (the same lines
  once the entry ids pi draws at random and the timestamps are masked; a v3 file keeps its
  bytes as a prefix), and the file pi left behind imports into the same store again, its last
  line the leaf.

A session lists the directory it was recorded in (``cwd``, here ``/home/dev/project``); pi
refuses to continue a session whose directory is missing. When it is missing, pi runs in a
private mount namespace (``unshare --mount``) with an empty tmpfs over the nearest existing
ancestor, in which the directory is created: nothing outside that process changes. pi is
installed by ``benchmarks/economy/pi_install.py`` into ``--pi-cache``/cache. This is a check,
not a test: CI has no pi. Exit status 1 when a row fails.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.economy.pi_install import PiInstall, PiUnavailable, install_pi  # noqa: E402
from tests.store.pg_server import running_server  # noqa: E402

from pi_context.errors import SessionFormatError  # noqa: E402
from pi_context.store import SessionStore, open_store  # noqa: E402

SESSIONS = ROOT / "tests" / "data" / "conformance" / "sessions"
PROMPT = "One more question: which step comes next?"
STORES = ("memory", "file", "postgresql")
MASKED = re.compile(r'"(timestamp|durationMs)":("[^"]*"|[0-9.]+)')
"""Fields pi fills with the time of the run."""


class FakeModel:
    """OpenAI chat completions (streamed) on 127.0.0.1: records each request body, answers "ok"."""

    def __init__(self) -> None:
        self.bodies: list[Any] = []
        model = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["content-length"]))
                model.bodies.append({"path": self.path, "body": json.loads(body)})
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.end_headers()
                base = {
                    "id": "r1",
                    "object": "chat.completion.chunk",
                    "model": "tiny",
                    "created": 0,
                }
                usage = {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11}
                for choice, extra in (
                    ({"delta": {"role": "assistant", "content": "ok"}, "finish_reason": None}, {}),
                    ({"delta": {}, "finish_reason": "stop"}, {"usage": usage}),
                ):
                    chunk = {**base, "choices": [{"index": 0, **choice}], **extra}
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                self.wfile.write(b"data: [DONE]\n\n")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@dataclass(frozen=True, slots=True)
class PiRun:
    """One pi process on one session file: what it exited with, said, sent and left behind."""

    code: int | None
    stderr: str
    requests: list[Any]
    before: bytes
    after: bytes


class Pi:
    """pi 1.6.0 in a throwaway HOME whose models.json names the fake model."""

    def __init__(self, install: PiInstall, model: FakeModel, root: Path) -> None:
        self.install = install
        self.model = model
        self.root = root
        agent = root / "home" / ".pi" / "agent"
        agent.mkdir(parents=True)
        models = {
            "providers": {
                "fake": {
                    "baseUrl": f"http://127.0.0.1:{model.port}/v1",
                    "api": "openai-completions",
                    "apiKey": "unused",
                    "models": [{"id": "tiny", "contextWindow": 1_000_000, "maxTokens": 1000}],
                }
            }
        }
        (agent / "models.json").write_text(json.dumps(models), encoding="utf-8")
        self.env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(root / "home"),
            "PI_CODING_AGENT_DIR": str(agent),
            "PI_OFFLINE": "1",
            "PI_SKIP_VERSION_CHECK": "1",
            "LANG": "C.UTF-8",
            "TZ": "UTC",
            "NO_COLOR": "1",
        }

    def run(self, session_file: Path, cwd: str) -> PiRun:
        """Continue ``session_file`` with :data:`PROMPT` (``-p --session``) in ``cwd``."""
        before = session_file.read_bytes()
        self.model.bodies = []
        argv = [*self.install.command(), "-p", "--model", "fake/tiny"]
        argv += ["--session", str(session_file), PROMPT]
        try:
            done = subprocess.run(
                [*in_dir(cwd, [self.root, self.install.node, self.install.cli]), *argv],
                env=self.env,
                cwd=self.root,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=180,
                check=False,
            )
            code, stderr = done.returncode, done.stderr
        except subprocess.TimeoutExpired:
            code, stderr = None, "timed out after 180 s"
        return PiRun(code, stderr, list(self.model.bodies), before, session_file.read_bytes())


def in_dir(cwd: str, keep: Sequence[Path]) -> list[str]:
    """The command prefix that runs a program in ``cwd``: nothing when it exists, else a private
    mount namespace with an empty tmpfs over the nearest existing ancestor, in which ``cwd`` is
    made. That ancestor must hold none of ``keep`` (the tmpfs hides what it holds)."""
    target = Path(cwd)
    if target.is_dir():
        return []
    mount = next(p for p in target.parents if p.is_dir())
    for path in keep:
        if mount == Path("/") or path.resolve().is_relative_to(mount):
            raise SystemExit(f"cannot run pi in {cwd}: a tmpfs over {mount} would hide {path}")
    unshare = shutil.which("unshare")
    if unshare is None:
        raise SystemExit(f"the session's directory {cwd} is missing and there is no unshare")
    user = [] if os.geteuid() == 0 else ["--map-root-user"]
    script = 'mount -t tmpfs tmpfs "$1" && mkdir -p "$2" && cd "$2" && shift 2 && exec "$@"'
    return [unshare, "--mount", "--propagation", "private", *user, "--", "sh", "-c", script,
            "sh", str(mount), cwd]  # fmt: skip


def _lines(data: bytes) -> list[str]:
    return [line for line in data.decode("utf-8", "replace").split("\n") if line.strip()]


def normalized(data: bytes) -> list[str]:
    """The file's lines with each entry id pi may draw at random replaced by its order of first
    appearance and the timestamps of the run masked: two runs of pi on equal files compare equal."""
    lines = _lines(data)
    ids: dict[str, str] = {}
    for line in lines:
        with contextlib.suppress(ValueError):
            entry = json.loads(line)
            if isinstance(entry, dict) and isinstance(entry.get("id"), str):
                ids.setdefault(entry["id"], f"#{len(ids)}")
    pattern = re.compile("|".join(re.escape(i) for i in sorted(ids, key=len, reverse=True)))
    out = []
    for line in lines:
        line = pattern.sub(lambda m: ids[m.group(0)], line) if ids else line
        out.append(MASKED.sub(r'"\1":"*"', line))
    return out


@dataclass(slots=True)
class Row:
    session: str
    store: str
    importable: bool = True
    same_bytes: bool = False
    opened: bool = False
    same_request: bool = False
    appended: bool = False
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.same_bytes and self.opened and self.same_request and self.appended


def judge(row: Row, reference: PiRun, run: PiRun, *, legacy: bool) -> None:
    """Fill ``row``'s verdicts on ``run`` (the exported file) against ``reference`` (the original)."""
    row.opened = run.code == 0 and run.stderr == reference.stderr == ""
    if not row.opened:
        row.notes.append(f"exit {run.code}: {run.stderr.strip()[-300:]}")
    row.same_request = bool(run.requests) and run.requests == reference.requests
    if not row.same_request:
        row.notes.append(f"{len(run.requests)} requests, the original's {len(reference.requests)}")
    grew = len(_lines(run.after)) - len(_lines(run.before))
    # a v3 file is appended to (a missing final newline first); pi rewrites a v1/v2 file migrated
    kept = run.after.startswith(run.before)
    row.appended = (
        grew >= 2 and (kept or legacy) and normalized(run.after) == normalized(reference.after)
    )
    if not row.appended:
        row.notes.append(f"file grew by {grew} lines, prefix kept: {kept}")


async def reimport(store: SessionStore, tenant: str, data: bytes) -> str | None:
    """Why the file pi left behind does not import into ``store`` with its last line the leaf,
    or None."""
    try:
        ref = await store.import_bytes(data, tenant=f"{tenant}.after")
        stored = await store.load(ref)
    except Exception as exc:
        return f"re-import failed: {exc}"
    last = json.loads(_lines(data)[-1]).get("id")
    return (
        None if stored.leaf_id == last else f"re-imported leaf {stored.leaf_id}, last line {last}"
    )


@contextlib.asynccontextmanager
async def opened_store(kind: str, root: Path, pg_url: str | None) -> AsyncIterator[SessionStore]:
    target = "memory:" if kind == "memory" else str(root / "files") if kind == "file" else pg_url
    assert target is not None
    store = await open_store(target)
    try:
        await store.migrate()
        yield store
    finally:
        await store.aclose()


async def check_session(
    path: Path, stores: list[str], pi: Pi, root: Path, pg_url: str | None
) -> list[Row]:
    name = path.relative_to(SESSIONS).as_posix()
    tenant = re.sub(r"[^A-Za-z0-9._-]", "-", name)  # the tiny sessions share one session id
    work = root / name.replace("/", "_")
    work.mkdir()
    original = work / "original.jsonl"
    shutil.copyfile(path, original)
    rows: list[Row] = []
    reference: PiRun | None = None
    for kind in stores:
        row = Row(name, kind)
        rows.append(row)
        async with opened_store(kind, work / kind, pg_url) as store:
            try:
                ref = await store.import_jsonl(path, tenant=tenant)
            except SessionFormatError as exc:
                row.importable = False
                row.notes.append(f"not importable: {exc}")
                return rows
            exported = work / f"{kind}.jsonl"
            await store.export_jsonl(ref, exported)
            row.same_bytes = exported.read_bytes() == path.read_bytes()
            if not row.same_bytes:
                row.notes.append("the export's bytes are not the file's")
            header = (await store.load(ref)).header
            cwd = str(header.get("cwd") or "/")
            if reference is None:
                reference = pi.run(original, cwd)
            legacy = header.get("version") not in (3,)
            judge(row, reference, pi.run(exported, cwd), legacy=legacy)
            if row.appended and (why := await reimport(store, tenant, exported.read_bytes())):
                row.appended = False
                row.notes.append(why)
    return rows


def table(rows: list[Row]) -> str:
    def mark(ok: bool) -> str:
        return "yes" if ok else "**no**"

    out = ["| session | store | opened | same request | appended |", "|---|---|---|---|---|"]
    for r in rows:
        if not r.importable:
            continue
        out.append(
            f"| `{r.session}` | {r.store} | {mark(r.opened)} | "
            f"{mark(r.same_request)} | {mark(r.appended)} |"
        )
    return "\n".join(out)


@contextlib.contextmanager
def postgres(wanted: bool) -> Iterator[str | None]:
    if not wanted:
        yield None
        return
    with running_server() as server:
        if isinstance(server, str):
            raise SystemExit(f"no PostgreSQL: {server} (leave it out with --stores memory,file)")
        yield server.url(server.new_database())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--pi-cache", type=Path, default=Path(tempfile.gettempdir()) / "mcp-pi")
    parser.add_argument("--stores", default=",".join(STORES))
    parser.add_argument("--only", nargs="*", default=[], help="session file names to check")
    parser.add_argument("--keep", type=Path, help="leave the files in this new directory")
    args = parser.parse_args(argv)
    stores = [s for s in args.stores.split(",") if s]
    if unknown := set(stores) - set(STORES):
        parser.error(f"unknown stores {sorted(unknown)}; known: {', '.join(STORES)}")
    try:
        install = install_pi(args.pi_cache.resolve() / "cache")
    except PiUnavailable as exc:
        print(f"pi 1.6.0 is not available: {exc}", file=sys.stderr)
        return 2
    paths = sorted(SESSIONS.glob("*/*.jsonl"))
    if args.only:
        paths = [p for p in paths if p.name in args.only or p.stem in args.only]
    model = FakeModel()
    rows: list[Row] = []
    try:
        with (
            tempfile.TemporaryDirectory(prefix="pi-opens-") as tmp,
            postgres("postgresql" in stores) as pg_url,
        ):
            root = args.keep.resolve() if args.keep else Path(tmp)
            root.mkdir(parents=True, exist_ok=True)
            pi = Pi(install, model, root / "pi")
            for path in paths:
                found = asyncio.run(check_session(path, stores, pi, root, pg_url))
                for row in found:
                    verdict = "ok" if row.ok else "FAIL" if row.importable else "skip"
                    print(f"{row.session:40} {row.store:10} {verdict} "
                          f"{'; '.join(row.notes)}", file=sys.stderr)  # fmt: skip
                rows += found
    finally:
        model.close()
    print(table(rows))
    skipped = [r.session for r in rows if not r.importable]
    checked = [r for r in rows if r.importable]
    print(f"\n{sum(r.ok for r in checked)}/{len(checked)} rows pass; not importable: {skipped}")
    return 0 if all(r.ok for r in checked) else 1


if __name__ == "__main__":
    sys.exit(main())
