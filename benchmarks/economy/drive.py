"""Drive one contender through the workload as a user would.

Each contender gets its own throwaway HOME, agent dir (``models.json`` pointing at the
simulator, ``settings.json``) and copy of the project. Two drivers, the same workload events:

- ``rpc`` (default): one long-running ``--mode rpc`` process per stretch of the session. Each
  prompt is a ``prompt`` command; the driver waits for the run to settle. The process is
  restarted only where a user would have to restart it, i.e. where a running agent cannot see
  the change: AGENTS.md edited, a skill installed, ``defaultTools`` changed (the restarted
  process continues the same session with ``--session <file>``). A thinking-level change is
  ``set_thinking_level``; the side session is ``new_session``; returning to the main session
  is ``switch_session``. After every start, new session or switch the driver checks the level
  (``get_state``) and sets it when it differs from the one the user chose.
- ``print``: one process per prompt (``-p``; ``-c`` after the first): the events happen between
  processes, the thinking level is ``--model sim/sim-model:<level>``, the side session is a
  process without ``-c``, the main session is resumed with ``--session <file>``.

A process that hangs (no settled run within :data:`PROCESS_TIMEOUT`) or dies is reported
(prompt index, exit code, the tail of its stderr), stopped with its process group, and the
run goes on (the rpc driver restarts it on the same session for the next prompt).
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from benchmarks.economy.clock import CLOCK_ENV, write_offset
from benchmarks.economy.contenders import Contender
from benchmarks.economy.ledger import RequestRecord
from benchmarks.economy.rpc_agent import AgentDied, AgentTimeout, CommandFailed, RpcAgent
from benchmarks.economy.server import SimulatorServer
from benchmarks.economy.workload import Workload, ticket

__all__ = ["DRIVERS", "DRIVER_VERSION", "Driver", "RunResult", "SessionFacts", "drive",
           "session_facts"]  # fmt: skip

Driver = Literal["rpc", "print"]
DRIVERS: tuple[Driver, ...] = ("rpc", "print")
DRIVER_VERSION = 2
"""Bumped when a change to the drivers can change what a contender is sent or bills (part of
a unit's inputs: completed units are re-run after a bump)."""
PROCESS_TIMEOUT = 600
"""Seconds one prompt may take (start-up, every request, compaction) before it counts as hung."""
COMMAND_TIMEOUT = 120
"""Seconds for any other command (``get_state``, ``new_session``, ...), start-up included."""
MAX_TOKENS = 8192
DEFAULT_LEVEL = "medium"


@dataclass(slots=True)
class SessionFacts:
    compactions: int = 0
    compactions_with_files: int = 0
    branch_summaries: int = 0


@dataclass(slots=True)
class RunResult:
    contender: str
    api: str
    seed: int
    records: list[RequestRecord]
    prompt_starts: list[int]
    """Index of the first record of each prompt (records before the next start belong to it)."""
    failures: list[str] = field(default_factory=list)
    sessions: SessionFacts = field(default_factory=SessionFacts)
    wall_seconds: float = 0.0
    driver: str = "rpc"
    processes: int = 0
    """Agent processes started."""
    cpu_agent_seconds: float = 0.0
    """User + system CPU of the agent processes and everything they ran (tools), reaped."""
    cpu_driver_seconds: float = 0.0
    """User + system CPU of the process that ran the driver and the simulator."""

    def to_json(self) -> dict[str, Any]:
        return {
            "contender": self.contender,
            "api": self.api,
            "seed": self.seed,
            "records": [r.to_json() for r in self.records],
            "prompt_starts": self.prompt_starts,
            "failures": self.failures,
            "sessions": {
                "compactions": self.sessions.compactions,
                "compactions_with_files": self.sessions.compactions_with_files,
                "branch_summaries": self.sessions.branch_summaries,
            },
            "wall_seconds": self.wall_seconds,
            "driver": self.driver,
            "processes": self.processes,
            "cpu_agent_seconds": self.cpu_agent_seconds,
            "cpu_driver_seconds": self.cpu_driver_seconds,
        }


def _models_json(server: SimulatorServer, window: int) -> dict[str, Any]:
    sim = server.simulator
    anthropic = sim.api == "anthropic"
    return {
        "providers": {
            "sim": {
                "baseUrl": server.base_url if anthropic else f"{server.base_url}/v1",
                "api": "anthropic-messages" if anthropic else "openai-completions",
                "apiKey": "sim-key",
                "models": [
                    {
                        "id": "sim-model",
                        "name": f"simulated {sim.prices.model}",
                        "reasoning": True,
                        "input": ["text"],
                        "contextWindow": window,
                        "maxTokens": MAX_TOKENS,
                        "cost": sim.prices.models_json_cost(),
                    }
                ],
            }
        }
    }


def _write_settings(agent: Path, contender: Contender, tools: list[str] | None) -> None:
    settings: dict[str, Any] = {
        "defaultProvider": "sim",
        "defaultModel": "sim-model",
        "defaultThinkingLevel": DEFAULT_LEVEL,
        "defaultProjectTrust": "always",
    }
    if contender.compaction:
        settings["compaction"] = dict(contender.compaction)
    settings.update(contender.settings)
    if tools is not None:
        settings["defaultTools"] = tools
    (agent / "settings.json").write_text(json.dumps(settings, indent=2) + "\n")


def _sessions(agent: Path) -> list[Path]:
    return sorted((agent / "sessions").rglob("*.jsonl"))


def session_facts(agent: Path, upto: int | None = None) -> SessionFacts:
    """Compactions (and how many kept file lists) and branch summaries in the agent's sessions.

    ``upto``: count only what comes before the first user prompt of workload prompt ``upto``
    (to compare runs over their common first prompts).
    """
    facts = SessionFacts()
    stop = None if upto is None else ticket(upto)
    for path in _sessions(agent):
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if not isinstance(entry, dict):
                continue
            message = entry.get("message")
            if (
                stop is not None
                and isinstance(message, dict)
                and message.get("role") == "user"
                and stop in json.dumps(message.get("content"))
            ):
                break
            if entry.get("type") == "compaction":
                facts.compactions += 1
                details = entry.get("details") or {}
                if isinstance(details, dict) and (
                    details.get("readFiles") or details.get("modifiedFiles")
                ):
                    facts.compactions_with_files += 1
            elif entry.get("type") == "branch_summary":
                facts.branch_summaries += 1
    return facts


def _cpu(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


@dataclass(slots=True)
class _Setup:
    """One contender's files and environment, and the workload's state between prompts."""

    contender: Contender
    root: Path
    project: Path
    agent: Path
    env: dict[str, str]
    tools: list[str] | None = None

    def apply(self, kind: str, value: Any) -> bool:
        """Apply a file-changing event; True when it was one (a running agent cannot see it)."""
        if kind == "agents_md":
            (self.project / "AGENTS.md").write_text(value)
        elif kind == "skill":
            skill = self.agent / "skills" / "release-notes"
            skill.mkdir(parents=True, exist_ok=True)
            (skill / "SKILL.md").write_text(value)
        elif kind == "tools":
            self.tools = value
            _write_settings(self.agent, self.contender, self.tools)
        else:
            return False
        return True


def _setup(
    contender: Contender, workload: Workload, server: SimulatorServer, root: Path, window: int
) -> _Setup:
    if root.exists():
        shutil.rmtree(root)
    home, project, tmp = root / "home", root / "project", root / "tmp"
    agent = home / ".pi" / "agent"
    for d in (agent, project, tmp):
        d.mkdir(parents=True)
    for rel, text in workload.project.files.items():
        path = project / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (agent / "models.json").write_text(json.dumps(_models_json(server, window), indent=2))
    _write_settings(agent, contender, None)
    env = {
        "HOME": str(home),
        "PI_CODING_AGENT_DIR": str(agent),
        "PI_OFFLINE": "1",
        "PI_SKIP_VERSION_CHECK": "1",
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LANG": "C.UTF-8",
        "TMPDIR": str(tmp),
        "NO_COLOR": "1",
        CLOCK_ENV: str(root / "clock"),
        **contender.env,
    }
    return _Setup(contender, root, project, agent, env)


def drive(
    contender: Contender,
    workload: Workload,
    server: SimulatorServer,
    root: Path,
    *,
    window: int,
    prompts: int | None = None,
    driver: Driver = "rpc",
    log: Callable[[str], None] | None = None,
) -> RunResult:
    """Run every prompt of ``workload`` through ``contender``; the simulator bills them."""
    sim = server.simulator
    sim.reset()
    setup = _setup(contender, workload, server, root, window)
    result = RunResult(contender.name, sim.api, workload.seed, sim.records, [], driver=driver)
    selected = workload.prompts if prompts is None else workload.prompts[:prompts]
    started = time.monotonic()
    cpu_agents, cpu_self = _cpu(resource.RUSAGE_CHILDREN), _cpu(resource.RUSAGE_SELF)

    def after_prompt(index: int) -> None:
        result.records = list(sim.records)
        result.wall_seconds = time.monotonic() - started
        result.cpu_agent_seconds = _cpu(resource.RUSAGE_CHILDREN) - cpu_agents
        result.cpu_driver_seconds = _cpu(resource.RUSAGE_SELF) - cpu_self
        (root / "progress.json").write_text(json.dumps(result.to_json()))
        if log is not None:
            spent = sum(r.cost for r in sim.records[result.prompt_starts[-1] :])
            log(
                f"  {contender.name} [{sim.api}] prompt {index + 1}/{len(selected)}: "
                f"{len(sim.records) - result.prompt_starts[-1]} requests, ${spent:.4f}"
            )

    if driver == "rpc":
        _drive_rpc(setup, selected, result, sim_records=sim.records, after_prompt=after_prompt)
    else:
        _drive_print(setup, selected, result, sim_records=sim.records, after_prompt=after_prompt)
    result.sessions = session_facts(setup.agent)
    result.records = list(sim.records)
    result.wall_seconds = time.monotonic() - started
    result.cpu_agent_seconds = _cpu(resource.RUSAGE_CHILDREN) - cpu_agents
    result.cpu_driver_seconds = _cpu(resource.RUSAGE_SELF) - cpu_self
    (root / "progress.json").write_text(json.dumps(result.to_json()))
    return result


# -- one process per prompt ------------------------------------------------------------------------


def _run_once(args: list[str], setup: _Setup, timeout: float) -> tuple[int | None, str]:
    """Run one ``-p`` process in its own process group; ``(exit code or None if it timed out,
    stderr)``. The group is killed on a timeout (and on an interrupt), the process reaped."""
    proc = subprocess.Popen(
        args,
        cwd=setup.project,
        env=setup.env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        _out, err = proc.communicate(timeout=timeout)
    except BaseException:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise
    finally:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)  # tool processes left in the group
    return proc.returncode, err


def _drive_print(
    setup: _Setup,
    selected: list[Any],
    result: RunResult,
    *,
    sim_records: list[RequestRecord],
    after_prompt: Callable[[int], None],
) -> None:
    thinking = ""
    main_session: Path | None = None
    resume: Path | None = None
    new_session = True
    paused = 0.0
    for prompt in selected:
        for event in prompt.events:
            if setup.apply(event.kind, event.value):
                continue
            if event.kind == "thinking":
                thinking = f":{event.value}"
            elif event.kind == "side_session":
                new_session = True
            elif event.kind == "resume_main":
                resume = main_session
        args = [*setup.contender.command, "-p", "--model", f"sim/sim-model{thinking}"]
        if resume is not None:
            args += ["--session", str(resume)]
            resume = None
        elif not new_session:
            args.append("-c")
        new_session = False
        args.append(prompt.text)
        result.prompt_starts.append(len(sim_records))
        paused += prompt.gap
        write_offset(setup.root / "clock", paused)
        result.processes += 1
        try:
            code, err = _run_once(args, setup, PROCESS_TIMEOUT)
        except subprocess.TimeoutExpired:
            result.failures.append(f"prompt {prompt.index}: timed out after {PROCESS_TIMEOUT}s")
        else:
            if code != 0:
                result.failures.append(f"prompt {prompt.index}: exit {code}: {err.strip()[-400:]}")
        if main_session is None:
            found = _sessions(setup.agent)
            main_session = found[0] if found else None
        after_prompt(prompt.index)


# -- one long-running process per stretch of the session ---------------------------------------------


class _RpcSession:
    """The rpc driver's agent process and what the user has chosen so far."""

    def __init__(self, setup: _Setup, result: RunResult) -> None:
        self.setup = setup
        self.result = result
        self.agent: RpcAgent | None = None
        self.level = DEFAULT_LEVEL
        self.session_file: Path | None = None
        """The session the agent is on (to continue it after a restart)."""
        self.main_session: Path | None = None

    def start(self, session: Path | None) -> RpcAgent:
        """A new process on ``session`` (a new session when None), at the chosen level."""
        self.stop()
        level = "" if self.level == DEFAULT_LEVEL else f":{self.level}"
        args = [*self.setup.contender.command, "--mode", "rpc", "--model", f"sim/sim-model{level}"]
        if session is not None:
            args += ["--session", str(session)]
        self.agent = RpcAgent(args, cwd=self.setup.project, env=self.setup.env)
        self.result.processes += 1
        self.settle_state()
        return self.agent

    def settle_state(self) -> None:
        """Note the session file; set the chosen thinking level when the agent's differs."""
        assert self.agent is not None
        state = self.agent.call("get_state", COMMAND_TIMEOUT)
        if isinstance(state, dict):
            if state.get("sessionFile"):
                self.session_file = Path(state["sessionFile"])
            if state.get("thinkingLevel") != self.level:
                self.agent.call("set_thinking_level", COMMAND_TIMEOUT, level=self.level)

    def stop(self) -> None:
        if self.agent is not None:
            agent, self.agent = self.agent, None
            code = agent.stop()
            if code not in (0, None):
                self.result.failures.append(f"restart: exit {code}: {agent.stderr_tail()}")

    def kill(self) -> str:
        """Stop a failed process at once; the tail of its stderr."""
        agent, self.agent = self.agent, None
        if agent is None:
            return ""
        agent.stop(grace=0.5)
        return agent.stderr_tail()


def _drive_rpc(
    setup: _Setup,
    selected: list[Any],
    result: RunResult,
    *,
    sim_records: list[RequestRecord],
    after_prompt: Callable[[int], None],
) -> None:
    rpc = _RpcSession(setup, result)
    paused = 0.0
    try:
        for prompt in selected:
            restart = rpc.agent is None
            fresh = False  # the side session: a new session
            switch: Path | None = None
            level_changed = False
            for event in prompt.events:
                if setup.apply(event.kind, event.value):
                    restart = True
                elif event.kind == "thinking":
                    rpc.level, level_changed = event.value, True
                elif event.kind == "side_session":
                    fresh, switch = True, None
                elif event.kind == "resume_main":
                    fresh, switch = False, rpc.main_session
            result.prompt_starts.append(len(sim_records))
            paused += prompt.gap
            write_offset(setup.root / "clock", paused)
            try:
                if restart:
                    rpc.start(None if fresh else (switch or rpc.session_file))
                else:
                    assert rpc.agent is not None
                    if fresh:
                        rpc.agent.call("new_session", COMMAND_TIMEOUT)
                        rpc.settle_state()
                    elif switch is not None:
                        rpc.agent.call("switch_session", COMMAND_TIMEOUT, sessionPath=str(switch))
                        rpc.settle_state()
                    elif level_changed:
                        rpc.settle_state()  # set_thinking_level, as a user changes it
                assert rpc.agent is not None
                rpc.agent.prompt(prompt.text, PROCESS_TIMEOUT)
                rpc.settle_state()
            except AgentTimeout as exc:
                tail = rpc.kill()
                result.failures.append(f"prompt {prompt.index}: hung ({exc}); stderr: {tail}")
            except AgentDied as exc:
                tail = rpc.kill()
                result.failures.append(f"prompt {prompt.index}: agent {exc}; stderr: {tail}")
            except CommandFailed as exc:
                result.failures.append(f"prompt {prompt.index}: refused: {exc}")
            if rpc.main_session is None:
                rpc.main_session = rpc.session_file
            after_prompt(prompt.index)
    finally:
        rpc.stop()
