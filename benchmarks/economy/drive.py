"""Drive one contender through the workload as a user would: one process per prompt.

Each contender gets its own throwaway HOME, agent dir (``models.json`` pointing at the
simulator, ``settings.json``) and copy of the project. The first prompt starts a session,
later ones continue it with ``-c``; the workload's events happen between processes: AGENTS.md
rewritten, a skill installed in the agent dir, ``defaultTools`` changed, the thinking level
changed (``--model sim/sim-model:<level>``), a side session started (no ``-c``) and the main
session resumed (``--session <file>``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.economy.contenders import Contender
from benchmarks.economy.ledger import RequestRecord
from benchmarks.economy.server import SimulatorServer
from benchmarks.economy.workload import Workload, ticket

__all__ = ["RunResult", "SessionFacts", "drive", "session_facts"]

PROCESS_TIMEOUT = 300
MAX_TOKENS = 8192


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
        "defaultThinkingLevel": "medium",
        "defaultProjectTrust": "always",
    }
    if contender.compaction:
        settings["compaction"] = dict(contender.compaction)
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


def drive(
    contender: Contender,
    workload: Workload,
    server: SimulatorServer,
    root: Path,
    *,
    window: int,
    prompts: int | None = None,
    log: Any = None,
) -> RunResult:
    """Run every prompt of ``workload`` through ``contender``; the simulator bills them."""
    sim = server.simulator
    sim.reset()
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
    tools: list[str] | None = None
    _write_settings(agent, contender, tools)
    env = {
        "HOME": str(home),
        "PI_CODING_AGENT_DIR": str(agent),
        "PI_OFFLINE": "1",
        "PI_SKIP_VERSION_CHECK": "1",
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LANG": "C.UTF-8",
        "TMPDIR": str(tmp),
        "NO_COLOR": "1",
        **contender.env,
    }
    thinking = ""
    main_session: Path | None = None
    resume: Path | None = None
    new_session = True
    result = RunResult(contender.name, sim.api, workload.seed, sim.records, [])
    started = time.monotonic()
    selected = workload.prompts if prompts is None else workload.prompts[:prompts]
    for prompt in selected:
        for event in prompt.events:
            if event.kind == "agents_md":
                (project / "AGENTS.md").write_text(event.value)
            elif event.kind == "skill":
                skill = agent / "skills" / "release-notes"
                skill.mkdir(parents=True, exist_ok=True)
                (skill / "SKILL.md").write_text(event.value)
            elif event.kind == "tools":
                tools = event.value
                _write_settings(agent, contender, tools)
            elif event.kind == "thinking":
                thinking = f":{event.value}"
            elif event.kind == "side_session":
                new_session = True
            elif event.kind == "resume_main":
                resume = main_session
        args = [*contender.command, "-p", "--model", f"sim/sim-model{thinking}"]
        if resume is not None:
            args += ["--session", str(resume)]
            resume = None
        elif not new_session:
            args.append("-c")
        new_session = False
        args.append(prompt.text)
        result.prompt_starts.append(len(sim.records))
        try:
            done = subprocess.run(
                args,
                cwd=project,
                env=env,
                capture_output=True,
                text=True,
                timeout=PROCESS_TIMEOUT,
                check=False,
                stdin=subprocess.DEVNULL,
            )
            if done.returncode != 0:
                result.failures.append(
                    f"prompt {prompt.index}: exit {done.returncode}: {done.stderr.strip()[-400:]}"
                )
        except subprocess.TimeoutExpired:
            result.failures.append(f"prompt {prompt.index}: timed out after {PROCESS_TIMEOUT}s")
        if main_session is None:
            found = _sessions(agent)
            main_session = found[0] if found else None
        result.records = list(sim.records)
        (root / "progress.json").write_text(json.dumps(result.to_json()))
        if log is not None:
            spent = sum(r.cost for r in sim.records[result.prompt_starts[-1] :])
            log(
                f"  {contender.name} [{sim.api}] prompt {prompt.index + 1}/{len(selected)}: "
                f"{len(sim.records) - result.prompt_starts[-1]} requests, ${spent:.4f}"
            )
    result.records = list(sim.records)
    result.sessions = session_facts(agent)
    result.wall_seconds = time.monotonic() - started
    (root / "progress.json").write_text(json.dumps(result.to_json()))
    return result
