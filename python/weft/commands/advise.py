"""`weft advise endpoints`: which endpoint sharing policy to use.

    weft advise endpoints --threads 16 --preset paper16
    weft advise endpoints --threads 2 [--within 10] [--model mlx5] [--last]

For every policy it takes a message rate -- measured on this machine by the
endpoint benchmark (bench/weft_bench_endpoints, as `weft bench endpoints`
runs it; --last reads the last saved run), or the scalable-endpoints
paper's 16-thread figures (--preset paper16) -- and what the policy costs:
the UCX objects the pool created here (contexts, then workers), or the mlx5
model's UAR pages (--model mlx5, and always with the preset, whose rates
are the paper's ConnectX-4 ones).  The advice is the policy with the fewest
resources whose rate is within P % of the best rate; the table beside it is
the evidence.

The advice of a measured run is saved (docs/settings.md, WEFT_EP_ADVICE):
one line "<threads> <policy>" per thread count advised, which the pool
policy "auto" (weft_ep_pool_create) applies for the line whose thread count
is closest to the pool's.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from rich.console import Group
from rich.table import Column
from rich.text import Text

from weft import WeftError
from weft.bench import endpoints as bench_endpoints
from weft.core import report, results, runner
from weft.models import mlx5

# The paper's Fig. 12 (16 threads, RDMA writes, §VII): each category's rate
# as a fraction of MPI everywhere's; resources come from the mlx5 model,
# which reproduces the figure's 40/24/16/8/8 UAR pages against 128.
PAPER16_THREADS = 16
PAPER16: dict[str, tuple[str, float]] = {
    "process": ("MPI everywhere", 1.00),
    "dedicated-2x": ("2xDynamic", 1.08),
    "dedicated": ("Dynamic", 0.94),
    "paired": ("Shared Dynamic", 0.65),
    "static": ("Static", 0.64),
    "single": ("MPI+threads", 0.03),
}
DEFAULT_WITHIN = 10.0
ADVICE_ENV = "WEFT_EP_ADVICE"
ADVICE_NAME = "endpoints-advice"
# What is not a pool policy (T processes) or not expressible by "auto"
# (who locks) stays in the table as a reference, never advised.
NOT_ADVISED_NOTE = "reference (not a pool policy)"


def advice_path() -> Path:
    """Where the advice lives: $WEFT_EP_ADVICE, else weft/endpoints-advice
    under $XDG_CONFIG_HOME (default ~/.config) -- the same lookup as the
    pool policy "auto" in src/ep/pool.c."""
    explicit = os.environ.get(ADVICE_ENV)
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "weft" / ADVICE_NAME


def advisable(policy: str) -> bool:
    return policy != bench_endpoints.BASELINE and "+" not in policy


def choose(rows: list[dict[str, Any]], within: float) -> dict[str, Any]:
    """The row to advise: among the advisable rows whose rate is at least
    (1 - within/100) of the best advisable rate, the one with the smallest
    "cost" (a tuple, compared in order), the higher rate on a tie (pure)."""
    if not 0 <= within < 100:
        raise WeftError(f"--within {within}: a percentage in [0, 100)")
    candidates = [r for r in rows if advisable(r["policy"])]
    if not candidates:
        raise WeftError("no pool policy was measured: nothing to advise")
    best = max(r["rate"] for r in candidates)
    if best <= 0:
        raise WeftError("every policy's rate is zero: nothing to advise")
    floor = best * (1 - within / 100)
    near = [r for r in candidates if r["rate"] >= floor]
    return min(near, key=lambda r: (tuple(r["cost"]), -r["rate"]))


def paper16_rows() -> list[dict[str, Any]]:
    """The preset's rows: the paper's rates, the mlx5 model's resources."""
    rows = []
    for policy, (category, rate) in PAPER16.items():
        model = mlx5.for_policy(policy, PAPER16_THREADS)
        rows.append({"policy": policy, "label": category, "rate": rate, "rate_unit": "× MPI everywhere",
                     "cost": [model["uars"]], "cost_names": ["UAR pages (mlx5 model)"],
                     "mlx5": model, "measured": None})
    return rows


def measured_rows(run: dict[str, Any], model: bool) -> list[dict[str, Any]]:
    """Rows of one weft_bench_endpoints run (the default variant): the
    median rate, and as cost the UCX contexts and workers the pool created
    here, or the mlx5 model's UAR pages when model is set."""
    rows = []
    for row in bench_endpoints.rows_of(run):
        if row.variant != "default":
            continue
        res = row.resources
        m = row.mlx5 if row.mlx5 is not None else bench_endpoints.mlx5_resources(row.policy, row.threads)
        if model:
            if m is None:
                continue
            cost, names = [m["uars"]], ["UAR pages (mlx5 model)"]
        else:
            cost = [int(res.get("ucx_contexts", 0)), int(res.get("workers", 0))]
            names = ["UCX contexts", "UCX workers"]
        rows.append({"policy": row.policy, "label": row.policy, "rate": row.rate, "rate_unit": "puts/s",
                     "ratio": row.ratio, "cost": cost, "cost_names": names, "mlx5": m, "measured": res})
    return rows


def advice(rows: list[dict[str, Any]], threads: int, within: float, source: str) -> dict[str, Any]:
    choice = choose(rows, within)
    best = max(r["rate"] for r in rows if advisable(r["policy"]))
    return {"threads": threads, "within": within, "source": source, "policy": choice["policy"],
            "label": choice["label"], "rate_of_best": choice["rate"] / best, "rows": rows}


def save(threads: int, policy: str, path: Path | None = None) -> Path:
    """Record policy for threads in the advice file, replacing that thread
    count's line and keeping the others."""
    path = path or advice_path()
    lines: dict[int, str] = {}
    if path.exists():
        for line in path.read_text().splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[0].isdigit():
                lines[int(parts[0])] = parts[1]
    lines[threads] = policy
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{t} {p}\n" for t, p in sorted(lines.items())))
    return path


def render(doc: dict[str, Any]) -> Group:
    rows = doc["rows"]
    names = rows[0]["cost_names"]
    best = max(r["rate"] for r in rows if advisable(r["policy"]))
    table = report.table(
        f"evidence: {doc['threads']} threads, {doc['source']}",
        [Column("policy", no_wrap=True), Column("what"), Column(f"rate ({rows[0]['rate_unit']})", justify="right"),
         Column("of best", justify="right"), *(Column(n, justify="right") for n in names),
         Column("mlx5 UARs (model)", justify="right"), Column("", no_wrap=True)], [])
    floor = best * (1 - doc["within"] / 100)
    for r in sorted(rows, key=lambda r: -r["rate"]):
        mark = ("← advised" if r["policy"] == doc["policy"] else
                NOT_ADVISED_NOTE if not advisable(r["policy"]) else
                "within" if r["rate"] >= floor else "too slow")
        rate = f"{r['rate']:.2f}" if r["rate_unit"].startswith("×") else f"{r['rate'] / 1e6:.2f} M"
        table.add_row(r["policy"], r["label"], rate, f"{100 * r['rate'] / best:.0f} %",
                      *(str(c) for c in r["cost"]),
                      str(r["mlx5"]["uars"]) if r.get("mlx5") else report.MISSING,
                      Text(mark, style="bold green" if mark == "← advised" else "dim"))
    head = Text.assemble(("advice: ", "bold"), (doc["policy"], "bold green"),
                         f" ({doc['label']}): {100 * doc['rate_of_best']:.0f} % of the best rate, the fewest "
                         f"{' then '.join(names)} among the policies within {doc['within']:g} % of the best")
    return Group(head, table)


def load_run(threads: int, last: bool, args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    """The endpoint benchmark's run at threads: the last saved one, or a new
    measurement (saved as `weft bench endpoints` saves it)."""
    if last:
        path = results.latest_path(bench_endpoints.BENCHMARK)
        if not path.exists():
            raise WeftError("no saved endpoint benchmark: run `weft bench endpoints` or drop --last")
        document = results.load(path)
        for run in document.get("runs", []):
            if int(run.get("threads", -1)) == threads:
                return run, f"measured, {path.name}"
        raise WeftError(f"{path.name} has no run at {threads} threads: run `weft bench endpoints "
                        f"--threads {threads}` or drop --last")
    program = runner.executable(bench_endpoints.BENCH)
    options = argparse.Namespace(policies=args.policies, variants="default", batch=32, every=64,
                                 secs=args.secs, rounds=args.rounds, timeout=args.timeout)
    run = bench_endpoints.measure(program, threads, options)
    path = results.save(bench_endpoints.BENCHMARK, {"runs": [run], "goal_ratio": bench_endpoints.GOAL_RATIO},
                        transport="ucx", ranks=threads + 1)
    return run, f"measured, {path.name}"


def command(args: argparse.Namespace) -> None:
    if args.threads < 1:
        raise WeftError(f"--threads {args.threads}: at least 1")
    if args.preset:
        if args.threads != PAPER16_THREADS:
            raise WeftError(f"--preset paper16 has the paper's figures for {PAPER16_THREADS} threads, "
                            f"not {args.threads}")
        doc = advice(paper16_rows(), args.threads, args.within,
                     "the scalable-endpoints paper's Fig. 12 rates (ConnectX-4) and the mlx5 model")
    else:
        run, source = load_run(args.threads, args.last, args)
        doc = advice(measured_rows(run, args.model == "mlx5"), args.threads, args.within, source)
    saved = None
    if (args.save or not args.preset) and not args.no_save:
        saved = save(args.threads, doc["policy"])
    if args.json_only:
        report.print_json({**doc, "saved": str(saved) if saved else None})
        return
    report.console.print(render(doc))
    if saved:
        report.console.print(f"saved to {saved}: the pool policy \"auto\" applies it")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "advise",
        help="advice drawn from weft's measurements (endpoints: which sharing policy)",
        description="Advice drawn from weft's measurements and models.",
    )
    targets = parser.add_subparsers(dest="target", metavar="TARGET", required=True)
    ep = targets.add_parser(
        "endpoints",
        help="the endpoint sharing policy with the fewest resources within P %% of the best rate",
        description="Measure (or read, --last) the endpoint benchmark at T threads for each policy, or take "
        "the paper's 16-thread figures (--preset paper16), and print the policy with the fewest resources "
        "whose rate is within P %% of the best, with the evidence table. A measured advice is saved for the "
        "pool policy \"auto\" (docs/settings.md: WEFT_EP_ADVICE).",
    )
    ep.add_argument("--threads", type=int, required=True, help="threads that share the pool")
    ep.add_argument("--within", type=float, default=DEFAULT_WITHIN, metavar="P",
                    help=f"percent of the best rate a policy may lose (default {DEFAULT_WITHIN:g})")
    ep.add_argument("--preset", choices=["paper16"], help="the scalable-endpoints paper's 16-thread figures")
    ep.add_argument("--model", choices=["mlx5"], help="count resources with the mlx5 model instead of the "
                    "UCX objects measured here")
    ep.add_argument("--last", action="store_true", help="read the last saved `weft bench endpoints` run")
    ep.add_argument("--policies", default=bench_endpoints.DEFAULT_POLICIES,
                    help="policies to measure (default: those of `weft bench endpoints`)")
    ep.add_argument("--secs", type=float, default=0.3, help="seconds per measurement (default 0.3)")
    ep.add_argument("--rounds", type=int, default=5, help="interleaved rounds (default 5)")
    ep.add_argument("--timeout", type=float, default=600, metavar="S", help="seconds allowed per run")
    ep.add_argument("--save", action="store_true", help="save the advice of a preset too")
    ep.add_argument("--no-save", action="store_true", help="do not save the advice")
    ep.add_argument("--json", "--json-only", dest="json_only", action="store_true", help="print JSON only")
    ep.set_defaults(func=command)
