"""``python -m benchmarks.economy``: the whole comparison in one command.

Installs pi 1.6.0 (or says why it cannot), then drives every contender through the workload
for every seed and simulator: ``--jobs`` units (contender x simulator x seed) at a time, each
with its own simulator on its own port. Each unit is saved as it completes
(``units/<api>-seed<N>-<contender>.json``); a re-run skips units whose inputs are unchanged
(see :mod:`.units`; ``--fresh`` re-runs them). Writes ``benchmarks/out/economy/``:
``results-<api>-seed<N>.json`` (every request billed), ``report.md`` (the tables) and
``cost-<api>-seed<N>.png`` (the plots). Ctrl-C stops the agents and exits; completed units stay.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sys
import time
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

from benchmarks.economy.contenders import (
    Contender,
    parse_contender,
    pi_contender,
    pictx_contenders,
)
from benchmarks.economy.drive import DRIVERS
from benchmarks.economy.pi_install import PiUnavailable, install_pi
from benchmarks.economy.responder import DEFAULT_SUMMARY_KEEP, SUMMARY_KEEP
from benchmarks.economy.units import Unit
from benchmarks.economy.workload import DEFAULT_PROMPTS

OUT = Path(__file__).resolve().parents[1] / "out" / "economy"
DEFAULT_SEEDS = (1, 2, 3)
DEFAULT_WINDOW = 48_000


def _job(unit: Unit, out: Path) -> dict[str, Any]:
    from benchmarks.economy.drive import drive
    from benchmarks.economy.server import Simulator, SimulatorServer
    from benchmarks.economy.tokens import load_tokenizer
    from benchmarks.economy.workload import generate_workload

    workload = generate_workload(unit.seed, unit.prompts, retention=unit.retention)
    keep = unit.summary_keep if unit.retention else "none"
    simulator: Simulator
    if unit.summary_model:
        from benchmarks.economy.real_summary import ObservedSimulator, RealSummarizer, carry_over

        real_log = out / "logs" / f"{unit.name}.real.jsonl"
        real_log.parent.mkdir(parents=True, exist_ok=True)
        real = RealSummarizer(
            unit.summary_url,
            unit.summary_model,
            window=unit.summary_window,
            log=real_log,
            measured=carry_over(real_log),
        )
        simulator = ObservedSimulator(
            unit.api,  # type: ignore[arg-type]
            workload,
            load_tokenizer(),
            unit.window,
            keep,
            real=real,
        )
    else:
        simulator = Simulator(
            unit.api,  # type: ignore[arg-type]
            workload,
            load_tokenizer(),
            unit.window,
            keep,
        )
    log_path = out / "logs" / f"{unit.name}.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("w") as log_file, SimulatorServer(simulator) as server:

        def log(line: str) -> None:
            print(line, file=log_file, flush=True)

        result = drive(
            unit.contender,
            workload,
            server,
            out / "runs" / f"{unit.api}-seed{unit.seed}" / unit.name.split("-", 2)[2],
            window=unit.window,
            driver=unit.driver,  # type: ignore[arg-type]
            log=log,
        )
    run = result.to_json()
    if unit.summary_model:
        run["real_summaries"] = real.records
    unit.save(out, run)
    return run


def _interrupt(_signum: int, _frame: object) -> None:
    raise KeyboardInterrupt


def _stop_on_sigterm() -> None:
    """SIGTERM stops like Ctrl-C: the agents are stopped, completed units stay saved."""
    signal.signal(signal.SIGTERM, _interrupt)


def _cpu_line(run: dict[str, Any]) -> str:
    prompts = max(1, len(run["prompt_starts"]))
    cpu = run.get("cpu_agent_seconds", 0.0) + run.get("cpu_driver_seconds", 0.0)
    return (
        f"{run['wall_seconds']:.0f}s wall, {cpu:.0f}s CPU ({cpu / prompts:.2f}s/prompt, "
        f"{run.get('processes', 0)} processes), ${sum(r['cost'] for r in run['records']):.2f}, "
        f"{len(run['failures'])} failed prompts"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.economy", description=__doc__)
    parser.add_argument("--seeds", type=int, nargs="+", default=list(DEFAULT_SEEDS))
    parser.add_argument("--apis", nargs="+", choices=["anthropic", "openai"],
                        default=["anthropic", "openai"])  # fmt: skip
    parser.add_argument("--prompts", type=int, default=DEFAULT_PROMPTS)
    parser.add_argument("--window", type=int, default=DEFAULT_WINDOW)
    parser.add_argument("--jobs", type=int, default=2, help="units run in parallel")
    parser.add_argument(
        "--driver",
        choices=DRIVERS,
        default="rpc",
        help="rpc: one long-running --mode rpc process per session stretch (default); "
        "print: one -p process per prompt",
    )
    parser.add_argument("--fresh", action="store_true", help="re-run units already saved")
    parser.add_argument(
        "--retention",
        action="store_true",
        help="plant twelve facts early and probe them late; report probes answered and their cost",
    )
    parser.add_argument(
        "--summary-keep",
        choices=list(SUMMARY_KEEP),
        default=DEFAULT_SUMMARY_KEEP,
        help="with --retention: how likely the simulated summaries keep each planted fact, by "
        "kind (none: never, as before; see benchmarks/README.md for the rates)",
    )
    parser.add_argument(
        "--summary-url",
        default="",
        help="also send each summary request holding a planted fact to this OpenAI-compatible "
        "server (base URL, e.g. http://127.0.0.1:8080/v1) and count the facts its summaries keep",
    )
    parser.add_argument("--summary-model", default="", help="the model id for --summary-url")
    parser.add_argument(
        "--summary-window",
        type=int,
        default=8192,
        help="the --summary-url model's window: longer prompts are cut in the middle to fit",
    )
    parser.add_argument(
        "--saved-only",
        action="store_true",
        help="run nothing: the report from the saved units whose inputs are current",
    )
    parser.add_argument("--only", nargs="*", default=None, help="contender names to run")
    parser.add_argument("--no-pi", action="store_true", help="skip pi 1.6.0")
    parser.add_argument(
        "--contender",
        action="append",
        default=[],
        metavar="NAME=JSON",
        help="an extra pictx contender: its name and the keys of its compaction settings, "
        """e.g. 'keep 8k={"keepRecentTokens": 8000}' (repeatable)""",
    )
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument(
        "--report-only",
        action="store_true",
        help="rebuild report.md and the plots from the runs already in --out (partial runs too)",
    )
    parser.add_argument(
        "--upto",
        type=int,
        default=None,
        help="with --report-only: compare the first N prompts of every run",
    )
    args = parser.parse_args(argv)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    if args.report_only:
        write_report(collect_progress(out, args.upto), out, args, "", 0.0)
        return 0
    contenders: list[Contender] = []
    pi_note = ""
    if not args.no_pi and (not args.only or "pi 1.6.0" in args.only):
        try:
            install = install_pi(out / "cache")
            contenders.append(pi_contender(install))
            print(f"pi {install.version} on {install.node}")
        except PiUnavailable as exc:
            pi_note = f"pi 1.6.0 is unavailable, ran without it: {exc}"
            print(pi_note, file=sys.stderr)
    try:
        extra = [parse_contender(spec) for spec in args.contender]
    except ValueError as exc:
        parser.error(str(exc))
    contenders += pictx_contenders(extra)
    if args.only:
        contenders = [c for c in contenders if c.name in args.only]
    units = [
        Unit(
            c,
            api,
            seed,
            args.prompts,
            args.window,
            args.driver,
            args.retention,
            args.summary_keep,
            args.summary_model if args.summary_url else "",
            args.summary_url,
            args.summary_window,
        )
        for seed in args.seeds
        for api in args.apis
        for c in contenders
    ]
    started = time.monotonic()
    results: dict[tuple[str, int], list[dict[str, Any]]] = {}
    todo: list[Unit] = []
    for unit in units:
        saved = None if args.fresh else unit.load(out)
        if saved is None:
            if not args.saved_only:
                todo.append(unit)
        else:
            results.setdefault((unit.api, unit.seed), []).append(saved)
            print(f"saved: {unit.name} (inputs unchanged; --fresh re-runs it)", flush=True)
    interrupted = False
    _stop_on_sigterm()
    pool = ProcessPoolExecutor(max_workers=max(1, args.jobs), initializer=_stop_on_sigterm)
    try:
        futures: dict[Future[dict[str, Any]], Unit] = {
            pool.submit(_job, unit, out): unit for unit in todo
        }
        for future in as_completed(futures):
            unit = futures[future]
            try:
                run = future.result()
            except Exception as exc:  # one unit's crash is reported; the others go on
                print(f"FAILED: {unit.name}: {type(exc).__name__}: {exc}", flush=True)
                continue
            results.setdefault((unit.api, unit.seed), []).append(run)
            print(f"done: {unit.name}: {_cpu_line(run)}", flush=True)
    except KeyboardInterrupt:
        interrupted = True
        print("interrupted: stopping the agents; completed units are saved", file=sys.stderr)
        # the workers stop their agents on SIGTERM (a Ctrl-C reached them already)
        for pid in list(pool._processes or {}):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    for runs in results.values():
        runs.sort(key=lambda run: (not run["contender"].startswith("pi "), run["contender"]))
    if results:
        write_report(results, out, args, pi_note, time.monotonic() - started if todo else 0.0)
    return 130 if interrupted else 0


def collect_progress(
    out: Path, upto: int | None = None
) -> dict[tuple[str, int], list[dict[str, Any]]]:
    """The runs under ``out/runs`` as far as they got (``progress.json`` after every prompt),
    cut to their first ``upto`` prompts when given (runs that did not get that far are left
    out)."""
    from benchmarks.economy.drive import session_facts
    from benchmarks.economy.report import first_prompts

    results: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for progress in sorted((out / "runs").glob("*/*/progress.json")):
        run = json.loads(progress.read_text())
        if upto is not None:
            if len(run["prompt_starts"]) < upto or any(
                f"prompt {i}:" in failure for failure in run["failures"] for i in range(upto)
            ):
                continue
            run = first_prompts(run, upto)
        facts = session_facts(progress.parent / "home" / ".pi" / "agent", upto)
        run["sessions"] = {
            "compactions": facts.compactions,
            "compactions_with_files": facts.compactions_with_files,
            "branch_summaries": facts.branch_summaries,
        }
        results.setdefault((run["api"], run["seed"]), []).append(run)
    for runs in results.values():
        runs.sort(key=lambda run: (not run["contender"].startswith("pi "), run["contender"]))
    return results


def saved_units(
    out: Path, *, api: str, seed: int, prompts: int, window: int
) -> list[dict[str, Any]]:
    """The saved retention units of ``api`` and ``seed`` at ``prompts`` and ``window`` (any
    setting of ``--summary-keep``, any contender), as saved: ``{"inputs", "run"}``."""
    found: list[dict[str, Any]] = []
    for path in sorted((out / "units").glob(f"{api}-seed{seed}-*.json")):
        try:
            saved = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        inputs = saved.get("inputs") if isinstance(saved, dict) else None
        if (
            isinstance(inputs, dict)
            and inputs.get("retention")
            and (inputs.get("api"), inputs.get("seed")) == (api, seed)
            and (inputs.get("prompts"), inputs.get("window")) == (prompts, window)
        ):
            found.append(saved)
    return found


def write_report(
    results: dict[tuple[str, int], list[dict[str, Any]]],
    out: Path,
    args: argparse.Namespace,
    pi_note: str,
    seconds: float,
) -> None:
    from benchmarks.economy.attribution import attribute
    from benchmarks.economy.pricing import ANTHROPIC_PRICES, OPENAI_PRICES
    from benchmarks.economy.report import (
        attribution_table,
        goals,
        markdown_table,
        mean_table,
        plot_cumulative,
        retention_table,
        run_cost_table,
        sensitivity_table,
    )
    from benchmarks.economy.workload import generate_workload

    upto = getattr(args, "upto", None)
    scope = f"the first {upto} of {args.prompts}" if upto else f"{args.prompts}"
    parts = [
        "# Context economy results\n",
        f"{scope} prompts per seed, context window {args.window:,}"
        + (f", {seconds / 60:.0f} min wall" if seconds else "")
        + ".\n",
    ]
    if pi_note:
        parts.append(f"\n**{pi_note}**\n")
    parts.append(f"\n## Mean over seeds\n\n{mean_table(results)}\n")
    parts.append("".join(f"- {line}\n" for line in goals(results)))
    parts.append(f"\n## What the run cost\n\n{run_cost_table(results)}")
    for (api, seed), runs in sorted(results.items()):
        (out / f"results-{api}-seed{seed}.json").write_text(json.dumps(runs))
        prices = ANTHROPIC_PRICES if api == "anthropic" else OPENAI_PRICES
        title = f"{api} simulator ({prices.model} prices), seed {seed}"
        png = plot_cumulative(runs, title, out / f"cost-{api}-seed{seed}.png")
        parts.append(f"\n## {title}\n\n{markdown_table(runs)}\n![cumulative cost]({png.name})\n")
        workload = generate_workload(
            seed, args.prompts, retention=getattr(args, "retention", False)
        )
        if getattr(args, "retention", False):
            keep = getattr(args, "summary_keep", DEFAULT_SUMMARY_KEEP)
            parts.append(
                f"\nRetention (summaries keep: {keep}; probes answered, how, and what "
                f"answering cost):\n\n{retention_table(runs, workload)}"
            )
            saved = saved_units(out, api=api, seed=seed, prompts=args.prompts, window=args.window)
            parts.append(
                "\nProbes answered under each setting of what summaries keep (the saved units "
                f"of this simulator and seed; - : not run):\n\n{sensitivity_table(saved, workload)}"
            )
        real = [run for run in runs if run.get("real_summaries") is not None]
        if real:
            from benchmarks.economy.real_summary import real_summary_line

            parts.append(
                "\nReal summaries (`--summary-url`, the facts the real model kept of those in "
                "the text it was sent):\n\n"
                + "".join(f"- {real_summary_line(run)}\n" for run in real)
            )
        causes = {run["contender"]: attribute(run, workload, prices) for run in runs}
        parts.append(f"\nCost above the all-cached floor, by cause:\n\n{attribution_table(causes)}")
        for run in runs:
            for failure in run["failures"][:5]:
                line = " ".join(failure.split())
                if len(line) > 300:
                    line = f"{line[:40]} ... {line[-240:]}"
                parts.append(f"- {run['contender']}: {line}\n")
    (out / "report.md").write_text("".join(parts))
    print(f"report: {out / 'report.md'}")


if __name__ == "__main__":
    sys.exit(main())
