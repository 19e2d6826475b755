"""Loading extensions from the agent dir, trusted projects, entry points and explicit paths."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from pi_context.errors import ExtensionError
from pi_context.events import AgentStart
from pi_context.extensions import discover_extension_paths, load_extensions

RECORDER = """
SEEN = []

def register(pi):
    pi.on("agent_start", lambda event, ctx: SEEN.append({name!r}))
"""


def write_ext(directory: Path, name: str, body: str | None = None) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.py"
    path.write_text(textwrap.dedent(body if body is not None else RECORDER.format(name=name)))
    return path


def names(runner: object) -> list[str]:
    return [e.name for e in runner.extensions]  # type: ignore[attr-defined]


def test_discovery_rules(tmp_path: Path) -> None:
    d = tmp_path / "extensions"
    write_ext(d, "b_ext")
    write_ext(d, "a_ext")
    write_ext(d, "_private")
    (d / "pkg").mkdir()
    (d / "pkg" / "__init__.py").write_text("def register(pi): pass\n")
    (d / "not_a_package").mkdir()
    (d / "notes.txt").write_text("x")
    assert [p.name for p in discover_extension_paths(d)] == ["a_ext.py", "b_ext.py", "pkg"]
    assert discover_extension_paths(tmp_path / "missing") == []


def test_agent_dir_always_project_only_when_trusted(tmp_path: Path) -> None:
    agent, project = tmp_path / "agent", tmp_path / "proj"
    write_ext(agent / "extensions", "mine")
    write_ext(project / ".pi" / "extensions", "theirs")
    untrusted = load_extensions(cwd=project, agent_dir=agent, trusted=False, entry_points=False)
    assert names(untrusted) == ["mine"]
    trusted = load_extensions(cwd=project, agent_dir=agent, trusted=True, entry_points=False)
    assert names(trusted) == ["mine", "theirs"]
    assert [e.source for e in trusted.extensions] == ["agent", "project"]


async def test_handlers_follow_load_order(tmp_path: Path) -> None:
    agent, project = tmp_path / "agent", tmp_path / "proj"
    # Each handler raises its own name, so the failure log records the call order.
    body = """
    def register(pi):
        def handler(event, ctx):
            raise RuntimeError({name!r})
        pi.on("agent_start", handler)
    """
    write_ext(agent / "extensions", "first", body.format(name="first"))
    write_ext(project / ".pi" / "extensions", "second", body.format(name="second"))
    runner = load_extensions(cwd=project, agent_dir=agent, trusted=True, entry_points=False)
    await runner.emit(AgentStart())
    assert [f.error for f in runner.failures] == ["RuntimeError: first", "RuntimeError: second"]


def test_package_extension_with_relative_import(tmp_path: Path) -> None:
    pkg = tmp_path / "agent" / "extensions" / "fancy"
    pkg.mkdir(parents=True)
    (pkg / "helper.py").write_text("SECTION = 'from helper'\n")
    (pkg / "__init__.py").write_text(
        "from .helper import SECTION\n\ndef register(pi):\n    pi.on('before_agent_start', lambda e, c: e.set_section('x', SECTION))\n"
    )
    runner = load_extensions(cwd=tmp_path, agent_dir=tmp_path / "agent", entry_points=False)
    assert runner.load_errors == []
    assert names(runner) == ["fancy"]
    assert runner.has_handlers("before_agent_start")


def test_broken_extensions_are_reported_with_their_path_and_others_load(tmp_path: Path) -> None:
    d = tmp_path / "agent" / "extensions"
    syntax = write_ext(d, "a_syntax", "def register(pi)\n")
    noreg = write_ext(d, "b_noreg", "X = 1\n")
    raising = write_ext(
        d, "c_raises", "def register(pi):\n    raise RuntimeError('setup failed')\n"
    )
    write_ext(d, "d_good")
    runner = load_extensions(cwd=tmp_path, agent_dir=tmp_path / "agent", entry_points=False)
    assert names(runner) == ["d_good"]
    errors = [str(e) for e in runner.load_errors]
    assert all(isinstance(e, ExtensionError) for e in runner.load_errors)
    assert errors[0].startswith(f"{syntax}: import failed: SyntaxError")
    assert errors[1] == f"{noreg}: {noreg} defines no register(pi) function"
    assert (
        errors[2] == f"{raising}: extension c_raises: register failed: RuntimeError: setup failed"
    )


def test_explicit_paths_and_no_discovery(tmp_path: Path) -> None:
    write_ext(tmp_path / "agent" / "extensions", "discovered")
    explicit = write_ext(tmp_path / "elsewhere", "explicit")
    runner = load_extensions(
        cwd=tmp_path,
        agent_dir=tmp_path / "agent",
        include_discovered=False,
        paths=[explicit, "missing.py"],
    )
    assert names(runner) == ["explicit"]
    assert [str(e) for e in runner.load_errors] == [
        f"{tmp_path / 'missing.py'}: extension not found"
    ]


def test_same_file_is_loaded_once(tmp_path: Path) -> None:
    path = write_ext(tmp_path / "agent" / "extensions", "once")
    runner = load_extensions(
        cwd=tmp_path, agent_dir=tmp_path / "agent", paths=[path], entry_points=False
    )
    assert names(runner) == ["once"]


def test_entry_point_group(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    (site / "demo_pi_ext").mkdir(parents=True)
    (site / "demo_pi_ext" / "__init__.py").write_text(
        "def register(pi):\n    pi.on('agent_end', lambda e, c: None)\n\n"
        "def make(pi):\n    pi.on('agent_start', lambda e, c: None)\n"
    )
    dist = site / "demo_pi_ext-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: demo-pi-ext\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        "[pi_context.extensions]\n"
        "as_module = demo_pi_ext\n"
        "as_callable = demo_pi_ext:make\n"
        "broken = demo_pi_ext_missing\n"
    )
    monkeypatch.syspath_prepend(str(site))
    runner = load_extensions(cwd=tmp_path)
    ours = [e for e in runner.extensions if e.source == "entry_point" and e.name.startswith("as_")]
    assert [e.name for e in ours] == ["as_callable", "as_module"]
    assert ours[0].handlers.keys() == {"agent_start"}
    assert ours[1].handlers.keys() == {"agent_end"}
    assert any("demo_pi_ext_missing" in str(e) for e in runner.load_errors)
    monkeypatch.delitem(__import__("sys").modules, "demo_pi_ext", raising=False)
