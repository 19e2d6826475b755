"""The scripted workload: a seeded coding session of 150+ prompts over the generated project.

Each prompt carries the tool calls the simulated assistant makes for it, in order, and the
final answer; the responder plays them back one per request, so any agent that executes
tools can be driven. Tool calls are real: files are read, grepped and edited in the
contender's copy of the project, and ``run_tests.py`` really runs. The generator keeps its own
copy of the files and applies every edit to it, so each ``oldText`` matches the file as it
will be when the call arrives (a few are deliberately wrong first, then retried).

Between prompts come the events of real sessions: AGENTS.md edited, a skill installed, the
tool set narrowed and restored (``defaultTools``), the thinking level changed, a side session
started (the branch abandoned) and the main one resumed.

Each prompt names its ticket (``INV-1042``): the responder finds the current prompt from the
highest ticket or tool-call id in the request.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from benchmarks.economy.project import MODULES, Bug, Project, generate_project

__all__ = [
    "PROBE_KINDS",
    "Event",
    "Probe",
    "Prompt",
    "ToolStep",
    "Workload",
    "generate_workload",
    "ticket",
]

TICKET_BASE = 1000
DEFAULT_PROMPTS = 160


def ticket(index: int) -> str:
    return f"INV-{TICKET_BASE + index}"


@dataclass(frozen=True, slots=True)
class ToolStep:
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Event:
    """Something the user does before a prompt's process starts."""

    kind: str
    """``agents_md`` | ``skill`` | ``tools`` | ``thinking`` | ``side_session`` | ``resume_main``."""
    value: Any = None


@dataclass(frozen=True, slots=True)
class Probe:
    """A question about a fact planted earlier in the session (``--retention``)."""

    kind: str
    """``decision`` (the user's words), ``number`` (a tool's output), ``error`` (an error
    message) or ``file`` (a file's content)."""
    fact: str
    """The exact text the answer needs (a code name, a number)."""
    keywords: str
    """What the assistant searches with when it calls ``recall``."""
    planted_at: int
    """The prompt that planted it."""
    path: str | None = None
    """For a file's fact: the file to read again."""


PROBE_KINDS = ("decision", "number", "error", "file")


@dataclass(slots=True)
class Prompt:
    index: int
    text: str
    steps: list[ToolStep]
    answer: str
    gap: float
    """Simulated seconds the user spends before sending it."""
    events: list[Event] = field(default_factory=list)
    probe: Probe | None = None
    """Set on a probe prompt: the assistant answers it from what the request holds."""


@dataclass(slots=True)
class Workload:
    seed: int
    project: Project
    prompts: list[Prompt]
    thinking: str = "medium"

    def prompt(self, index: int) -> Prompt | None:
        return self.prompts[index] if 0 <= index < len(self.prompts) else None


_ANSWER_WORDS = (
    "the function",
    "reads the records",
    "in order",
    "and skips",
    "entries without the field",
    "so the caller",
    "sees a shorter list;",
    "the regression",
    "comes from",
    "the normalisation step",
    "which now runs",
    "before the check.",
    "I changed",
    "the condition",
    "and re-ran",
    "the module's tests,",
    "which pass.",
    "Next,",
    "we could",
    "cover the strict mode",
    "with a test",
    "of its own.",
)


_DECISIONS = (("exports", "layout"), ("archives", "naming scheme"), ("invoices", "template"))
_NUMBERS = (
    ("nightly import", "rows loaded into staging"),
    ("weekly reconciliation", "mismatches written to the audit table"),
    ("price backfill", "records updated in the catalogue"),
)
_ERRORS = (
    ("license", "token", "expired"),
    ("signing", "key", "revoked"),
    ("quota", "account", "suspended"),
)
_FILES = (
    ("config/limits.toml", "batches", "max_batch_size"),
    ("config/retention.toml", "history", "keep_rows"),
    ("config/workers.toml", "pool", "queue_depth"),
)
"""The three subjects of each kind of planted fact (decision, number, error, file)."""


class _Builder:
    def __init__(self, rng: random.Random, project: Project) -> None:
        self.rng = rng
        self.project = project
        self.files = dict(project.files)
        self.prompts: list[Prompt] = []
        self.write_enabled = True
        self.side = False
        self.pending: list[Event] = []
        self.open_bugs = list(project.bugs)
        rng.shuffle(self.open_bugs)
        self.helpers = 0

    # --- text -----------------------------------------------------------------------------
    def answer(self, low: int, high: int) -> str:
        phrases = self.rng.randint(low, high) // 3
        out: list[str] = []
        while len(out) < phrases:
            out.append(self.rng.choice(_ANSWER_WORDS))
        return " ".join(out)

    def add(
        self, text: str, steps: list[ToolStep], answer: str, probe: Probe | None = None
    ) -> None:
        index = len(self.prompts)
        gap = self.rng.uniform(20, 150)
        if self.rng.random() < 0.08:
            gap = self.rng.uniform(360, 900)  # a break: every cache entry expires
        self.prompts.append(
            Prompt(index, f"{text} ({ticket(index)})", steps, answer, gap, self.pending, probe)
        )
        self.pending = []

    # --- retention: facts planted early, asked about late -----------------------------------
    def plant(self, kind: str, variant: int) -> Probe:
        """A prompt that puts one fact in the session; returns the probe that asks for it.

        ``variant`` (0-2) picks one of three subjects per kind, so that three facts of a kind
        never answer each other's question."""
        rng = self.rng
        at = len(self.prompts)
        code = f"{rng.choice(('HERON', 'MAPLE', 'QUARTZ', 'TUNDRA', 'SORREL'))}-{rng.randint(1000, 9999)}"
        number = str(rng.randint(100_000, 999_999))
        if kind == "decision":
            subject, thing = _DECISIONS[variant]
            self.add(
                f"For the record, we settled the {subject} question: {subject} use the {code} "
                f"{thing} from now on, whatever the old docs say.",
                [],
                f"Noted; I will follow that {thing} for {subject}.",
            )
            return Probe(kind, code, f"{subject} {thing} settled", at)
        if kind == "number":
            job, what = _NUMBERS[variant]
            self.add(
                f"Check how the last {job} went.",
                [self.bash(f"echo '{job} finished: {number} {what}'")],
                f"The {job} finished without errors.",
            )
            return Probe(kind, number, f"{job} finished {what}", at)
        if kind == "error":
            check, thing, state = _ERRORS[variant]
            command = f"python3 -c \"import sys; sys.exit('{check} check failed: {thing} {code} {state}')\""
            self.add(
                f"Is our {check} setup still valid? Run the {check} check.",
                [self.bash(command)],
                f"The {check} check failed; the {thing} is {state} and needs attention.",
            )
            return Probe(kind, code, f"{check} check failed {thing} {state}", at)
        path, section, key = _FILES[variant]
        content = f"[{section}]\n{key} = {number}\nretry_limit = 3\n"
        self.files[path] = content
        self.add(
            f"Create {path} with our {section} settings (the ones from the ops meeting).",
            [ToolStep("write", {"path": path, "content": content})],
            f"Created {path} with the {section} settings.",
        )
        return Probe(kind, number, f"{key} {path} {section}", at, path)

    def ask(self, probe: Probe, variant: int) -> None:
        if probe.kind == "decision":
            subject, thing = _DECISIONS[variant]
            question = f"Remind me: which {thing} did we settle on for {subject}?"
        elif probe.kind == "number":
            job, what = _NUMBERS[variant]
            question = f"How many {what.split()[0]} did the last {job} report, exactly?"
        elif probe.kind == "error":
            check, thing, _state = _ERRORS[variant]
            question = f"What was the {thing} named in the {check} check error?"
        else:
            path, _section, key = _FILES[variant]
            question = f"What {key} did we put in {path}?"
        self.add(question, [], "", probe)

    # --- tool steps ---------------------------------------------------------------------------
    def edit(self, path: str, old: str, new: str) -> ToolStep:
        text = self.files[path]
        assert text.count(old) == 1, (path, old)
        self.files[path] = text.replace(old, new, 1)
        return ToolStep("edit", {"path": path, "edits": [{"oldText": old, "newText": new}]})

    @staticmethod
    def read(path: str, offset: int | None = None, limit: int | None = None) -> ToolStep:
        args: dict[str, Any] = {"path": path}
        if offset is not None:
            args["offset"] = offset
        if limit is not None:
            args["limit"] = limit
        return ToolStep("read", args)

    @staticmethod
    def bash(command: str) -> ToolStep:
        return ToolStep("bash", {"command": command})

    def def_line(self, module: str, function: str) -> tuple[int, str]:
        lines = self.files[f"inventory/{module}.py"].split("\n")
        for number, line in enumerate(lines, 1):
            if line.startswith(f"def {function}("):
                return number, line
        raise AssertionError(function)

    # --- tasks ----------------------------------------------------------------------------
    def fix_bug(self) -> None:
        if not self.open_bugs or self.side:
            self.explain()
            return
        bug: Bug = self.open_bugs.pop()
        path = f"inventory/{bug.module}.py"
        line_no, line = self.def_line(bug.module, bug.function)
        self.add(
            self.rng.choice(
                [
                    f"The {bug.module} tests fail since yesterday. Find out why.",
                    f"CI is red on {bug.module}; can you investigate?",
                    f"Something in inventory/{bug.module}.py broke the tests. What is it?",
                ]
            ),
            [
                self.bash(f"python3 run_tests.py {bug.module}"),
                self.bash(f"grep -rn 'def {bug.function}' inventory | sort"),
                self.read(path)
                if self.rng.random() < 0.6
                else self.read(path, max(1, line_no - 40), 120),
            ],
            self.answer(60, 220),
        )
        steps: list[ToolStep] = []
        marker = f"\n    # fixed: {bug.id}"
        if self.rng.random() < 0.35:  # a first attempt with a stale oldText fails
            steps.append(
                ToolStep(
                    "edit",
                    {
                        "path": path,
                        "edits": [{"oldText": line.replace("(", " ("), "newText": line}],
                    },
                )
            )
        steps.append(self.edit(path, line, line + marker))
        steps.append(self.bash(f"python3 run_tests.py {bug.module}"))
        self.add(
            self.rng.choice(["Fix it.", "Go ahead and fix that.", "Please fix it and re-run."]),
            steps,
            self.answer(20, 90),
        )
        if self.rng.random() < 0.4:
            self.add(
                "Run the whole suite to be sure nothing else broke.",
                [self.bash("python3 run_tests.py")],
                self.answer(20, 60),
            )

    def explain(self) -> None:
        module = self.rng.choice(MODULES)
        function = self.rng.choice(self.project.functions[module])
        path = f"inventory/{module}.py"
        line_no, _ = self.def_line(module, function)
        steps = [
            self.bash(f"grep -rn '{function.split('_')[0]}_' inventory/{module}.py | head -40")
        ]
        if self.rng.random() < 0.5:
            steps.append(self.read(path))
        else:
            steps.append(self.read(path, max(1, line_no - 10), 80))
        self.add(
            self.rng.choice(
                [
                    f"How does {function} in {module} work?",
                    f"Explain what inventory/{module}.py does with {function}.",
                    f"Walk me through {function}; I need to change it later.",
                ]
            ),
            steps,
            self.answer(120, 420),
        )

    def search(self) -> None:
        field = self.rng.choice(("sku", "quantity", "unit_price", "status", "region", "owner"))
        self.add(
            self.rng.choice(
                [
                    f"Where do we use the {field} field?",
                    f"List every place that reads {field}.",
                    f"Is {field} validated anywhere?",
                ]
            ),
            [self.bash(f"grep -rn '\"{field}\"' inventory | sort | head -150")],
            self.answer(60, 200),
        )

    def feature(self) -> None:
        if self.side:
            self.search()
            return
        module = self.rng.choice(MODULES)
        function = self.rng.choice(self.project.functions[module])
        path = f"inventory/{module}.py"
        line_no, line = self.def_line(module, function)
        self.helpers += 1
        helper = f"summarise_{module}_{self.helpers}"
        body = (
            f"def {helper}(records):\n"
            f'    """Count the records {function} keeps."""\n'
            f"    return len({function}(records))\n\n\n"
        )
        steps = [self.read(path, max(1, line_no - 5), 60), self.edit(path, line, body + line)]
        test_path = f"tests/test_{helper}.py"
        test_body = (
            f"from inventory.{module} import {helper}\n\n\n"
            f"def test_{helper}_empty():\n    assert {helper}([]) == 0\n"
        )
        if self.write_enabled:
            steps.append(ToolStep("write", {"path": test_path, "content": test_body}))
            self.files[test_path] = test_body
        steps.append(self.bash(f"python3 run_tests.py {module} | tail -3"))
        self.add(
            self.rng.choice(
                [
                    f"Add a small helper next to {function} that counts what it keeps.",
                    f"We need a summary helper for {function} in {module}; add one with a test.",
                ]
            ),
            steps,
            self.answer(40, 140),
        )

    def mistake(self) -> None:
        module = self.rng.choice(MODULES)
        self.add(
            f"Open the {module} helpers file and tell me what is in it.",
            [
                self.read(f"inventory/{module}_helpers.py"),
                self.bash("ls inventory tests 2>&1 | head -40"),
                self.read(f"inventory/{module}.py", 1, 60),
            ],
            self.answer(40, 160),
        )

    def question(self) -> None:
        self.add(
            self.rng.choice(
                [
                    "What should we tackle next?",
                    "Summarise what we changed so far.",
                    "Any risks in what we did today?",
                    "Write a short note for the changelog.",
                ]
            ),
            [],
            self.answer(80, 300),
        )

    def task(self) -> None:
        roll = self.rng.random()
        if roll < 0.38:
            self.fix_bug()
        elif roll < 0.6:
            self.explain()
        elif roll < 0.72:
            self.search()
        elif roll < 0.85:
            self.feature()
        elif roll < 0.92:
            self.mistake()
        else:
            self.question()


def _agents_md(version: int) -> str:
    rules = [
        "- Run `python3 run_tests.py <module>` after every change.",
        "- Keep functions small; document behaviour in the docstring.",
        "- Never change the public signature of a function in inventory/models.py.",
        "- Mention the ticket id in every fix marker (`# fixed: <id>`).",
        "- Prefer grep over reading whole files when looking for a name.",
    ]
    return "# Working on inventory\n\n" + "\n".join(rules[: 2 + version]) + "\n"


SKILL = """---
name: release-notes
description: Write release notes for the inventory service from the fix markers in the code.
---

# Release notes

1. `grep -rn '# fixed:' inventory` lists the fixes.
2. Group them by module; one line per ticket.
3. End with the number of passing checks from `python3 run_tests.py`.
"""


PROBES_PER_KIND = 3
PLANT_AT = tuple(round(0.03 + 0.04 * i, 2) for i in range(4 * PROBES_PER_KIND))
PROBE_AT = tuple(round(0.62 + 0.0325 * i, 4) for i in range(4 * PROBES_PER_KIND))
"""Where retention facts are planted (0.03-0.47: on the main session, before the side session
at 0.52) and probed (0.62-0.98, after it), as fractions of the session; the kinds take turns
(decision, number, error, file, decision, ...), and each fact is asked about about 0.59 of the
session after it was planted, so that compaction has replaced it (pi compacts every ~8 prompts
at a 48k window, every ~80 at 200k)."""


def generate_workload(
    seed: int, prompts: int = DEFAULT_PROMPTS, *, retention: bool = False
) -> Workload:
    """The project and ``prompts`` prompts (at least 150 recommended) for ``seed``.

    With ``retention``, twelve facts are planted in the first half, three of each kind (a
    decision in the user's words, a number in a tool's output, an error message, a file's
    content), and asked about in the second (:class:`Probe`); the prompts around them are the
    same tasks as without."""
    rng = random.Random(seed)
    project = generate_project(rng)
    b = _Builder(rng, project)
    n = prompts
    schedule: dict[int, list[Event]] = {}

    def at(fraction: float, event: Event) -> None:
        schedule.setdefault(int(n * fraction), []).append(event)

    at(0.15, Event("agents_md", _agents_md(1)))
    at(0.25, Event("thinking", "high"))
    at(0.35, Event("skill", SKILL))
    at(0.45, Event("tools", ["read", "bash", "edit"]))
    at(0.52, Event("side_session"))
    at(0.6, Event("resume_main"))
    at(0.64, Event("agents_md", _agents_md(2)))
    at(0.7, Event("tools", None))
    at(0.78, Event("thinking", "low"))
    at(0.88, Event("agents_md", _agents_md(3)))
    kinds = [PROBE_KINDS[i % len(PROBE_KINDS)] for i in range(len(PLANT_AT))]
    plants = [(int(n * f), i) for i, f in enumerate(PLANT_AT)]
    asks = [(int(n * f), i) for i, f in enumerate(PROBE_AT)]
    probes: dict[int, Probe] = {}
    while len(b.prompts) < n:
        index = len(b.prompts)
        # a task may add several prompts: a plant or probe due inside it comes right after
        if retention and plants and index >= plants[0][0]:
            i = plants.pop(0)[1]
            probes[i] = b.plant(kinds[i], i // len(PROBE_KINDS))
            continue
        if retention and asks and index >= asks[0][0]:
            i = asks.pop(0)[1]
            b.ask(probes.pop(i), i // len(PROBE_KINDS))
            continue
        # one batch of due events per task (a task may add several prompts; a batch that fell
        # inside it comes before the next task, never dropped, never merged with the next)
        due = min((k for k in schedule if k <= index), default=None)
        for event in schedule.pop(due, []) if due is not None else []:
            b.pending.append(event)
            if event.kind == "tools":
                b.write_enabled = event.value is None or "write" in event.value
            elif event.kind == "side_session":
                b.side = True
            elif event.kind == "resume_main":
                b.side = False
            elif event.kind == "agents_md":
                b.files["AGENTS.md"] = event.value
        b.task()
    return Workload(seed, project, b.prompts[:n])
