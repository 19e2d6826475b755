"""Totals per contender, the Markdown table, and the cumulative-cost plot."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

__all__ = [
    "Totals",
    "attribution_table",
    "first_prompts",
    "goals",
    "markdown_table",
    "mean_table",
    "plot_cumulative",
    "probe_outcomes",
    "retention_table",
    "run_cost_table",
    "sensitivity_table",
    "totals",
]

Results = Mapping[tuple[str, int], Sequence[Mapping[str, Any]]]
"""Runs by ``(api, seed)``."""
BASELINE = "pi 1.6.0"
DEFAULT = "pictx default"
GOAL_DEFAULT = 0.85
GOAL_BEST = 0.60


@dataclass(frozen=True, slots=True)
class Totals:
    contender: str
    requests: int
    input: int
    cache_read: int
    cache_write: int
    uncached: int
    output: int
    summary_calls: int
    summary_tokens: int
    compactions: int
    compactions_with_files: int
    peak_context: int
    over_window: int
    cost: float
    failures: int


def totals(run: Mapping[str, Any]) -> Totals:
    """Sum one contender's run (the JSON of :class:`~.drive.RunResult`)."""
    records = run["records"]
    billed = [r for r in records if r["kind"] != "overflow"]
    summaries = [r for r in billed if r["kind"] == "summary"]
    return Totals(
        contender=run["contender"],
        requests=len(records),
        input=sum(r["input"] for r in billed),
        cache_read=sum(r["cache_read"] for r in billed),
        cache_write=sum(r["cache_write"] for r in billed),
        uncached=sum(r["uncached"] for r in billed),
        output=sum(r["output"] for r in billed),
        summary_calls=len(summaries),
        summary_tokens=sum(r["input"] + r["output"] for r in summaries),
        compactions=run["sessions"]["compactions"],
        compactions_with_files=run["sessions"]["compactions_with_files"],
        peak_context=max((r["input"] for r in billed), default=0),
        over_window=len(records) - len(billed),
        cost=sum(r["cost"] for r in billed),
        failures=len(run["failures"]),
    )


def _k(n: int) -> str:
    return f"{n / 1000:,.1f}k"


def markdown_table(runs: Sequence[Mapping[str, Any]], baseline: str = "pi 1.6.0") -> str:
    rows = [totals(run) for run in runs]
    base = next((t for t in rows if t.contender == baseline), None)
    head = (
        "| contender | requests | input | cache read | cache write | uncached | output "
        "| summary calls (tokens) | compactions (with file lists) | peak context "
        "| over window | cost | vs pi | failed prompts |\n"
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n"
    )
    lines = []
    for t in rows:
        ratio = f"{t.cost / base.cost:.0%}" if base is not None and base.cost else "n/a"
        lines.append(
            f"| {t.contender} | {t.requests} | {_k(t.input)} | {_k(t.cache_read)} "
            f"| {_k(t.cache_write)} | {_k(t.uncached)} | {_k(t.output)} "
            f"| {t.summary_calls} ({_k(t.summary_tokens)}) "
            f"| {t.compactions} ({t.compactions_with_files}) | {_k(t.peak_context)} "
            f"| {t.over_window} | ${t.cost:.2f} | {ratio} | {t.failures} |"
        )
    return head + "\n".join(lines) + "\n"


def attribution_table(by_contender: Mapping[str, Mapping[str, float]]) -> str:
    """Dollars above the all-cached floor per cause (:mod:`.attribution`), one row each."""
    causes = sorted({cause for row in by_contender.values() for cause in row})
    head = "| contender | " + " | ".join(causes) + " |\n"
    head += "|---|" + "---:|" * len(causes) + "\n"
    rows = [
        f"| {name} | " + " | ".join(f"${row.get(c, 0.0):.3f}" for c in causes) + " |"
        for name, row in by_contender.items()
    ]
    return head + "\n".join(rows) + "\n"


def first_prompts(run: Mapping[str, Any], count: int) -> dict[str, Any]:
    """``run`` cut to its first ``count`` prompts (records and prompt starts)."""
    starts = run["prompt_starts"]
    end = starts[count] if count < len(starts) else len(run["records"])
    return {
        **run,
        "records": run["records"][:end],
        "prompt_starts": starts[:count],
        "failures": [f for f in run["failures"] if int(f.split(":")[0].split()[-1]) < count],
    }


def cumulative_cost(run: Mapping[str, Any]) -> list[float]:
    """Dollars spent up to and including each prompt."""
    records = run["records"]
    starts = [*run["prompt_starts"], len(records)]
    out: list[float] = []
    spent = 0.0
    for begin, end in pairwise(starts):
        spent += sum(r["cost"] for r in records[begin:end])
        out.append(spent)
    return out


def plot_cumulative(runs: Sequence[Mapping[str, Any]], title: str, path: Path) -> Path:
    """A PNG of cumulative cost per prompt, one line per contender."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 5), dpi=110)
    for run in runs:
        series = cumulative_cost(run)
        ax.plot(range(1, len(series) + 1), series, label=run["contender"], linewidth=1.6)
    ax.set_xlabel("prompt")
    ax.set_ylabel("cumulative cost (USD)")
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return path


def _costs(results: Results) -> dict[str, dict[str, dict[int, float]]]:
    """``api -> contender -> seed -> cost`` of complete runs: every prompt (as many as the
    longest run) and no failed one."""
    length = max((len(r["prompt_starts"]) for runs in results.values() for r in runs), default=0)
    out: dict[str, dict[str, dict[int, float]]] = {}
    for (api, seed), runs in results.items():
        for run in runs:
            if not run["failures"] and len(run["prompt_starts"]) == length:
                t = totals(run)
                out.setdefault(api, {}).setdefault(t.contender, {})[seed] = t.cost
    return out


def _ratios(results: Results) -> dict[str, dict[str, tuple[float, list[int]]]]:
    """``api -> contender -> (mean cost / pi's mean cost, seeds)`` over the seeds both
    completed."""
    out: dict[str, dict[str, tuple[float, list[int]]]] = {}
    for api, by_contender in _costs(results).items():
        base = by_contender.get(BASELINE)
        if not base:
            continue
        for name, seeds in by_contender.items():
            common = sorted(set(seeds) & set(base))
            if common:
                mine = sum(seeds[s] for s in common) / len(common)
                theirs = sum(base[s] for s in common) / len(common)
                out.setdefault(api, {})[name] = (mine / theirs, common)
    return out


def mean_table(results: Results) -> str:
    """Cost per seed, the mean over seeds and its ratio to pi's, one table per simulator."""
    parts: list[str] = []
    ratios = _ratios(results)
    for api, by_contender in sorted(_costs(results).items()):
        seeds = sorted({s for row in by_contender.values() for s in row})
        head = (
            f"| {api} simulator | "
            + " | ".join(f"seed {s}" for s in seeds)
            + " | mean | vs pi (mean) | vs pi (per seed) |\n"
            + "|---|"
            + "---:|" * (len(seeds) + 3)
            + "\n"
        )
        base = by_contender.get(BASELINE, {})
        lines = []
        order = sorted(by_contender, key=lambda n: (n != BASELINE, n))
        for name in order:
            row = by_contender[name]
            mean = sum(row.values()) / len(row)
            cells = " | ".join(f"${row[s]:.2f}" if s in row else "—" for s in seeds)
            ratio = ratios.get(api, {}).get(name, (None, []))[0]
            per_seed = ", ".join(f"{row[s] / base[s]:.0%}" for s in seeds if s in row and s in base)
            lines.append(
                f"| {name} | {cells} | ${mean:.2f} "
                f"| {'n/a' if ratio is None else f'{ratio:.0%}'} | {per_seed or 'n/a'} |"
            )
        parts.append(head + "\n".join(lines) + "\n")
    return "\n".join(parts)


def goals(results: Results) -> list[str]:
    """Issue 13's goals on the mean ratios: default <= 85% of pi, best <= 60%, both simulators;
    one line each, met or not, with the numbers."""
    ratios = _ratios(results)
    if not ratios:
        return ["goals: not measurable (no complete pi run)"]
    lines = []

    def seeds(names: list[int]) -> str:
        return f"seed{'s' if len(names) > 1 else ''} {', '.join(map(str, names))}"

    for api, row in sorted(ratios.items()):
        pictx = {n: r for n, r in row.items() if n != BASELINE}
        if DEFAULT not in row:
            lines.append(f"{api}: default not measured (no complete run)")
        else:
            ratio, common = row[DEFAULT]
            verdict = "met" if ratio <= GOAL_DEFAULT else "not met"
            lines.append(
                f"{api}: default {ratio:.0%} of pi over {seeds(common)} "
                f"(goal <= {GOAL_DEFAULT:.0%}): {verdict}"
            )
        if pictx:
            best = min(pictx, key=lambda n: pictx[n][0])
            ratio, common = pictx[best]
            verdict = "met" if ratio <= GOAL_BEST else "not met"
            lines.append(
                f"{api}: best ({best}) {ratio:.0%} of pi over {seeds(common)} "
                f"(goal <= {GOAL_BEST:.0%}): {verdict}"
            )
    return lines


def run_cost_table(results: Results) -> str:
    """What the measurement cost: wall, CPU and processes per contender over all its units."""
    rows: dict[str, list[float]] = {}
    for runs in results.values():
        for run in runs:
            row = rows.setdefault(run["contender"], [0.0, 0.0, 0.0, 0.0, 0.0])
            row[0] += len(run["prompt_starts"])
            row[1] += run.get("wall_seconds", 0.0)
            row[2] += run.get("cpu_agent_seconds", 0.0)
            row[3] += run.get("cpu_driver_seconds", 0.0)
            row[4] += run.get("processes", 0)
    head = (
        "| contender | prompts | processes | wall | agent CPU | driver + simulator CPU "
        "| CPU per prompt |\n|---|---:|---:|---:|---:|---:|---:|\n"
    )
    lines = [
        f"| {name} | {p:.0f} | {n:.0f} | {w / 60:.1f} min | {a:.0f} s | {d:.0f} s "
        f"| {(a + d) / max(p, 1):.2f} s |"
        for name, (p, w, a, d, n) in sorted(rows.items())
    ]
    return head + "\n".join(lines) + "\n"


def probe_outcomes(records: Sequence[Mapping[str, Any]], workload: Any) -> dict[int, str]:
    """How each probe prompt of ``workload`` was answered in ``records`` (the last answer)."""
    indices = {p.index for p in workload.prompts if p.probe is not None}
    outcome: dict[int, str] = {}
    for r in records:
        if r["prompt"] in indices and r.get("probe"):
            outcome[r["prompt"]] = r["probe"]
    return outcome


def _answered(outcome: Mapping[int, str]) -> int:
    return sum(1 for how in outcome.values() if how in ("context", "recall", "reread"))


def retention_table(runs: Sequence[Mapping[str, Any]], workload: Any) -> str:
    """Per contender: probes answered / probes, how (in context, by recall, by re-reading the
    file, unknown), what the probe prompts cost, and the run's total cost.

    A probe counts as answered when the simulated assistant's answer names the planted fact,
    which it does only when the fact is in the request it answers (see the responder)."""
    probes = [p for p in workload.prompts if p.probe is not None]
    if not probes:
        return "(no probes)\n"
    indices = {p.index for p in probes}
    lines = [
        "| contender | answered | in context | recall | re-read | unknown | probe cost | total |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for run in runs:
        records = run["records"]
        outcome = probe_outcomes(records, workload)
        counts = {
            k: sum(1 for v in outcome.values() if v == k)
            for k in ("context", "recall", "reread", "unknown")
        }
        probe_cost = sum(r["cost"] for r in records if r["prompt"] in indices)
        total = sum(r["cost"] for r in records)
        lines.append(
            f"| {run['contender']} | {_answered(outcome)} / {len(probes)} | "
            f"{counts['context']} | {counts['recall']} | {counts['reread']} | "
            f"{counts['unknown']} | ${probe_cost:.3f} | ${total:.2f} |"
        )
    kinds = ", ".join(
        f"{p.probe.kind} (planted at prompt {p.probe.planted_at}, asked at {p.index})"
        for p in probes
    )
    return "\n".join(lines) + f"\n\nProbes: {kinds}.\n"


SENSITIVITY_CONTENDERS = ("pi 1.6.0", "pictx default", "pictx lean")
KEEP_SETTINGS = ("none", "pessimistic", "plausible", "optimistic")


def sensitivity_table(units: Sequence[Mapping[str, Any]], workload: Any) -> str:
    """Probes answered by the default contenders under each ``--summary-keep`` setting.

    ``units`` are saved units (``{"inputs", "run"}``) of one simulator and seed; a cell with
    no unit is ``-``. Each cell is ``answered / probes`` and, in brackets, how many of them
    were in context (the summary or the kept messages held the fact)."""
    probes = sum(1 for p in workload.prompts if p.probe is not None)
    cells: dict[tuple[str, str], str] = {}
    for unit in units:
        inputs, run = unit["inputs"], unit["run"]
        keep = inputs.get("summary_keep", "none")
        outcome = probe_outcomes(run["records"], workload)
        in_context = sum(1 for how in outcome.values() if how == "context")
        cells[(inputs["contender"], keep)] = (
            f"{_answered(outcome)} / {probes} ({in_context} in context)"
        )
    lines = [
        "| contender | " + " | ".join(KEEP_SETTINGS) + " |",
        "|---|" + "---:|" * len(KEEP_SETTINGS),
    ]
    for contender in SENSITIVITY_CONTENDERS:
        row = [cells.get((contender, keep), "-") for keep in KEEP_SETTINGS]
        lines.append(f"| {contender} | " + " | ".join(row) + " |")
    return "\n".join(lines) + "\n"
