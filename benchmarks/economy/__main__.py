"""``python -m benchmarks.economy``: the whole comparison in one command.

Installs pi 1.6.0 (or says why it cannot), then for every seed and simulator drives every
contender through the workload (contenders run in parallel, each with its own simulator on its
own port), and writes ``benchmarks/out/economy/`` : ``results-<api>-seed<N>.json`` (every
request billed), ``report.md`` (the tables) and ``cost-<api>-seed<N>.png`` (the plots).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from benchmarks.economy.contenders import Contender, pi_contender, pictx_contenders
from benchmarks.economy.pi_install import PiUnavailable, install_pi
from benchmarks.economy.workload import DEFAULT_PROMPTS

OUT = Path(__file__).resolve().parents[1] / "out" / "economy"
DEFAULT_SEEDS = (1, 2, 3)
DEFAULT_WINDOW = 64_000


def _job(
    contender: Contender, api: str, seed: int, prompts: int, window: int, out: Path
) -> dict[str, Any]:
    from benchmarks.economy.drive import drive
    from benchmarks.economy.server import Simulator, SimulatorServer
    from benchmarks.economy.tokens import load_tokenizer
    from benchmarks.economy.workload import generate_workload

    workload = generate_workload(seed, prompts)
    simulator = Simulator(api, workload, load_tokenizer(), window)  # type: ignore[arg-type]
    slug = contender.name.replace(" ", "-").replace(",", "").replace("+", "plus")
    log_path = out / "logs" / f"{api}-seed{seed}-{slug}.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("w") as log_file, SimulatorServer(simulator) as server:

        def log(line: str) -> None:
            print(line, file=log_file, flush=True)

        result = drive(
            contender,
            workload,
            server,
            out / "runs" / f"{api}-seed{seed}" / slug,
            window=window,
            log=log,
        )
    return result.to_json()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.economy", description=__doc__)
    parser.add_argument("--seeds", type=int, nargs="+", default=list(DEFAULT_SEEDS))
    parser.add_argument("--apis", nargs="+", choices=["anthropic", "openai"],
                        default=["anthropic", "openai"])  # fmt: skip
    parser.add_argument("--prompts", type=int, default=DEFAULT_PROMPTS)
    parser.add_argument("--window", type=int, default=DEFAULT_WINDOW)
    parser.add_argument("--jobs", type=int, default=5, help="contender runs in parallel")
    parser.add_argument("--only", nargs="*", default=None, help="contender names to run")
    parser.add_argument("--no-pi", action="store_true", help="skip pi 1.6.0")
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
    if not args.no_pi:
        try:
            install = install_pi(out / "cache")
            contenders.append(pi_contender(install))
            print(f"pi {install.version} on {install.node}")
        except PiUnavailable as exc:
            pi_note = f"pi 1.6.0 is unavailable, ran without it: {exc}"
            print(pi_note, file=sys.stderr)
    contenders += pictx_contenders()
    if args.only:
        contenders = [c for c in contenders if c.name in args.only]
    jobs = [(c, api, seed) for seed in args.seeds for api in args.apis for c in contenders]
    started = time.monotonic()
    results: dict[tuple[str, int], list[dict[str, Any]]] = {}
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        futures = {
            pool.submit(_job, c, api, seed, args.prompts, args.window, out): (c.name, api, seed)
            for c, api, seed in jobs
        }
        for future, (name, api, seed) in futures.items():
            run = future.result()
            results.setdefault((api, seed), []).append(run)
            print(f"done: {name} [{api}, seed {seed}] in {run['wall_seconds']:.0f}s", flush=True)
    write_report(results, out, args, pi_note, time.monotonic() - started)
    return 0


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


def write_report(
    results: dict[tuple[str, int], list[dict[str, Any]]],
    out: Path,
    args: argparse.Namespace,
    pi_note: str,
    seconds: float,
) -> None:
    from benchmarks.economy.attribution import attribute
    from benchmarks.economy.pricing import ANTHROPIC_PRICES, OPENAI_PRICES
    from benchmarks.economy.report import attribution_table, markdown_table, plot_cumulative
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
    for (api, seed), runs in sorted(results.items()):
        (out / f"results-{api}-seed{seed}.json").write_text(json.dumps(runs))
        prices = ANTHROPIC_PRICES if api == "anthropic" else OPENAI_PRICES
        title = f"{api} simulator ({prices.model} prices), seed {seed}"
        png = plot_cumulative(runs, title, out / f"cost-{api}-seed{seed}.png")
        parts.append(f"\n## {title}\n\n{markdown_table(runs)}\n![cumulative cost]({png.name})\n")
        workload = generate_workload(seed, args.prompts)
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
