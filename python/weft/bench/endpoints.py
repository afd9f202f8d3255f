"""`weft bench endpoints`: message rate against resources for each endpoint
sharing policy (the scalable-endpoints paper's §IV and Figs. 2(b)/12).

For each thread count T, bench/weft_bench_endpoints runs on T+1 ranks (the
last one the target, which blocks) and writes

    {"threads": T, "batch": 32, "every": 64, "secs": 0.3, "rounds": 5,
     "transport": "<UCX lanes>",
     "results": [{"policy": "dedicated", "variant": "default", "rate_median": 1.9e7,
                  "rates": [...], "resources": {"ucx_contexts": 1, "workers": 3, ...}}, ...]}

"procs" is T single-threaded processes ("MPI everywhere"), measured in the
same run as the pools, so the ratio of each policy to it is a side-by-side
ratio.  Resources are what this machine's UCX created (measured); the mlx5
columns come from the mlx5 resource model (weft.models.mlx5), a model of hardware
this machine does not have, and are labelled so.
"""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Group
from rich.table import Column
from rich.text import Text

from weft import WeftError
from weft.core import report, results, runner
from weft.models import mlx5

BENCH = "weft_bench_endpoints"
BENCHMARK = "endpoints"
DEFAULT_POLICIES = "procs,process,dedicated-2x,dedicated,paired,paired+caller,single"
VARIANTS = ("default", "nobatch", "nounsig", "sharedbuf")
VARIANT_NOTES = {
    "default": "batch p, one tracked event every q puts",
    "nobatch": "w/o batching: progress after every put (p = 1)",
    "nounsig": "w/o untracked puts: an event for every put (q = 1)",
    "sharedbuf": "threads' source words in one cache line (procs: private anyway)",
}
BASELINE = "procs"
GOAL_POLICY = "dedicated"
GOAL_RATIO = 0.95
# The pool benchmarks measure the UCX path: weft's intra-node direct path,
# where it exists, is switched off.
ENV = {"WEFT_SHM": "0"}
MLX5_KEYS = ("uars", "uuars", "qps", "cqs", "bytes")


def model_policy(policy: str) -> str:
    """The policy name the mlx5 model knows: procs is MPI everywhere, i.e.
    "process"; the +caller suffix only changes who takes the lock."""
    base = policy.split("+", 1)[0]
    return "process" if base == BASELINE else base


def mlx5_resources(policy: str, threads: int) -> dict[str, Any] | None:
    """The mlx5 model's resources for a policy, or None when the model does
    not know the policy."""
    try:
        model = mlx5.for_policy(model_policy(policy), threads)
    except (ValueError, KeyError, WeftError):
        return None
    return dict(model)


@dataclass(frozen=True)
class Row:
    threads: int
    policy: str
    variant: str
    rate: float                 # puts per second, median of the rounds
    ratio: float | None         # rate / procs' rate at the same T and variant
    resources: dict[str, Any]
    mlx5: dict[str, Any] | None


def rows_of(run: dict[str, Any]) -> list[Row]:
    """One run (one T) as rows, with the ratio to the baseline measured in it."""
    try:
        threads = int(run["threads"])
        entries = list(run["results"])
        rates = {(str(e["policy"]), str(e["variant"])): float(e["rate_median"]) for e in entries}
    except (KeyError, TypeError, ValueError):
        raise WeftError("weft_bench_endpoints output is malformed (threads/results/rate_median)") from None
    rows = []
    for entry in entries:
        policy, variant = str(entry["policy"]), str(entry["variant"])
        base = rates.get((BASELINE, variant))
        rate = rates[(policy, variant)]
        rows.append(Row(threads, policy, variant, rate, rate / base if base else None,
                        dict(entry.get("resources", {})), entry.get("mlx5")))
    return rows


def goal(rows: list[Row]) -> dict[int, bool | None]:
    """Per T: does dedicated reach GOAL_RATIO of procs with one UCX context?"""
    verdict: dict[int, bool | None] = {}
    for row in rows:
        if row.policy == GOAL_POLICY and row.variant == "default":
            verdict[row.threads] = None if row.ratio is None else (
                row.ratio >= GOAL_RATIO and row.resources.get("ucx_contexts") == 1)
    return verdict


def run_pool_bench(program: Path, name: str, ranks: int, threads: int, options: list[str],
                   timeout: float, rows_of: Callable[[dict[str, Any]], list[Any]]) -> dict[str, Any]:
    """One run of a pool benchmark program (bench/weft_bench_<name>: endpoints,
    ga_dgemm, stencil) on `ranks` ranks of `threads` threads, given its options
    but --threads and --json; its JSON object, with the mlx5 model added,
    once rows_of(it) has found it well-formed (before it is saved)."""
    with tempfile.TemporaryDirectory(prefix=f"weft-{name}-") as tmp:
        output = Path(tmp) / f"{name}.json"
        argv = [str(program), "--threads", str(threads), *options, "--json", str(output)]
        runner.run_mpi(ranks, argv, env=ENV, timeout=timeout)
        run = results.read_json(output)
    if not isinstance(run, dict):
        raise WeftError(f"{Path(program).name} output is not a JSON object")
    for entry in run.get("results", []):
        entry["mlx5"] = mlx5_resources(str(entry.get("policy")), threads)
    rows_of(run)
    return run


def measure(program: Path, threads: int, args: argparse.Namespace) -> dict[str, Any]:
    """One weft_bench_endpoints run at T threads, with the mlx5 model added."""
    return run_pool_bench(program, BENCHMARK, threads + 1, threads,
                          ["--policies", args.policies, "--variants", args.variants, "--batch", str(args.batch),
                           "--every", str(args.every), "--secs", str(args.secs), "--rounds", str(args.rounds)],
                          args.timeout, rows_of)


def fmt_mib(nbytes: Any) -> str:
    return report.MISSING if nbytes is None else f"{float(nbytes) / 2**20:.1f}"


def fmt_int(value: Any) -> str:
    return report.MISSING if value is None else f"{int(value)}"


def fmt_model(model: dict[str, Any] | None, key: str) -> str:
    if model is None or model.get(key) is None:
        return report.MISSING
    return fmt_mib(model[key]) if key == "bytes" else fmt_int(model[key])


def fmt_objects(resources: dict[str, Any]) -> str:
    """The UCX contexts, workers and endpoints measured, as ctx·wrk·ep."""
    return "·".join(fmt_int(resources.get(k)) for k in ("ucx_contexts", "workers", "endpoints"))


def fmt_mlx5(model: dict[str, Any] | None) -> str:
    """The mlx5 model's UAR·uUAR·QP·CQ."""
    return report.MISSING if model is None else "·".join(fmt_model(model, k) for k in MLX5_KEYS[:4])


def run_report(document: dict[str, Any]) -> Group:
    """The rate-vs-resources table of every T, and the goal."""
    all_rows = [row for run in document["runs"] for row in rows_of(run)]
    tables = []
    for variant in [v for v in VARIANTS if any(r.variant == v for r in all_rows)]:
        rows = [r for r in all_rows if r.variant == variant]
        table = report.table(
            f"{variant}: {VARIANT_NOTES[variant]}",
            [Column("T", justify="right"), Column("policy"), Column("M puts/s", justify="right"),
             Column("÷ procs", justify="right"), Column("ctx·wrk·ep", justify="right"),
             Column("locks/put", justify="right"), Column("locks taken", justify="right"),
             Column("RSS MiB", justify="right"), Column("mlx5 UAR·uUAR·QP·CQ", justify="right"),
             Column("mlx5 MiB", justify="right")],
            [],
            caption="measured: rate (median of interleaved rounds); UCX contexts, workers (with the home "
                    "worker) and connections; locks: counted for +caller, else derived (UCX's lock on "
                    "every call, *); RSS growth of the initiators. mlx5: the resource model of the "
                    "paper's NIC, not measured (— for a policy the model does not know)",
        )
        for r in rows:
            res = r.resources
            taken = fmt_int(res.get("locks_taken"))
            if res.get("locks_taken") and not res.get("locks_counted"):
                taken += "*"
            table.add_row(str(r.threads), r.policy, report.fmt_number(r.rate / 1e6),
                          report.fmt_ratio(r.ratio, GOAL_RATIO) if r.policy != BASELINE else Text("1.00×"),
                          fmt_objects(res), f"{res.get('locks_per_put', 0):g}", taken,
                          fmt_mib(res.get("rss_bytes")), fmt_mlx5(r.mlx5), fmt_model(r.mlx5, "bytes"))
        tables.append(table)
    verdicts = goal(all_rows)
    parts = [f"T={t}: " + ("yes" if v else report.MISSING if v is None else "NO") for t, v in sorted(verdicts.items())]
    summary = Text(f"goal: {GOAL_POLICY} ≥ {GOAL_RATIO:.2f}× procs with 1 UCX context — " + ", ".join(parts))
    meta = document["metadata"]
    heading = Text.assemble(("endpoint sharing policies: message rate vs resources", "bold"),
                            f" — 8-byte puts, {meta['hostname']}, {meta['cores']} cores, "
                            f"UCX path (WEFT_SHM=0), transport {document['runs'][0].get('transport', '?')}")
    return Group(heading, *tables, summary, "")


def chart(document: dict[str, Any], path: Path) -> Path:
    """Rate vs resources, one point per (policy, T), as in the paper's
    Figs. 2(b)/12: left, against UCX workers created (measured); right,
    against the mlx5 model's uUARs (or RSS when the model is absent)."""
    rows = [r for run in document["runs"] for r in rows_of(run) if r.variant == "default"]
    have_model = any(r.mlx5 and r.mlx5.get("uuars") is not None for r in rows)
    figure = report.new_figure(11, 4.8)
    left, right = figure.subplots(1, 2)
    policies = list(dict.fromkeys(r.policy for r in rows))
    markers = "osD^v<>p*hX"
    for i, policy in enumerate(policies):
        mine = [r for r in rows if r.policy == policy]
        for axes, xs in ((left, [r.resources.get("workers", 0) for r in mine]),
                         (right, [r.mlx5["uuars"] if have_model and r.mlx5 else
                                  r.resources.get("rss_bytes", 0) / 2**20 for r in mine])):
            axes.plot(xs, [r.rate / 1e6 for r in mine], marker=markers[i % len(markers)], linestyle="-",
                      label=policy)
            for x, r in zip(xs, mine):
                axes.annotate(f"T={r.threads}", (x, r.rate / 1e6), fontsize=7, textcoords="offset points",
                              xytext=(3, 3))
    left.set_xlabel("UCX workers created (measured, incl. the home worker)")
    right.set_xlabel("uUARs, mlx5 model (not measured)" if have_model else "RSS of the initiators, MiB (measured)")
    for axes in (left, right):
        axes.set_ylabel("M puts/s (8 B)")
        axes.grid(alpha=0.3)
    left.legend(fontsize="small")
    figure.suptitle(f"Message rate vs resources per sharing policy — {document['metadata']['hostname']}")
    figure.savefig(path, dpi=120)
    return path


def parse_threads(text: str) -> list[int]:
    try:
        values = [int(part) for part in text.split(",") if part]
    except ValueError:
        raise WeftError(f"--threads {text!r}: expected a comma-separated list of integers") from None
    if not values or any(v < 1 or v > 256 for v in values):
        raise WeftError(f"--threads {text!r}: every count must be in 1..256")
    return values


def pool_command(args: argparse.Namespace, benchmark: str,
                 measure_all: Callable[[], tuple[dict[str, Any], int]],
                 run_report: Callable[[dict[str, Any]], Group],
                 chart: results.Chart,
                 rows_of: Callable[[dict[str, Any]], list[dict[str, Any]]] | None = None,
                 mismatch: str = "") -> None:
    """A pool benchmark command (results.measure_or_load): measure_all()'s
    (document, ranks) saved over UCX, or with --last the saved document.
    With rows_of, a row of a run not verified is the WeftError `mismatch`
    (not checked with --json-only)."""
    def save() -> Path:
        measured, ranks = measure_all()
        return results.save(benchmark, measured, transport="ucx", ranks=ranks)

    document = results.measure_or_load(benchmark, None if args.last else save, run_report, {".png": chart},
                                       json_only=args.json_only)
    if rows_of is not None and not args.json_only and \
            not all(r.get("verified") for run in document["runs"] for r in rows_of(run)):
        raise WeftError(mismatch)


def with_ratios(entries: list[dict[str, Any]], metric: str, reference: str, **fields: Any) -> list[dict[str, Any]]:
    """Copies of a pool run's result entries with `fields` added, and each
    one's metric over the reference policy's as "ratio" (None without the
    reference); a malformed entry raises KeyError, TypeError or ValueError."""
    rows = [{**entry, **fields} for entry in entries]
    base = next((float(r[metric]) for r in rows if r["policy"] == reference), None)
    for row in rows:
        row["ratio"] = float(row[metric]) / base if base else None
    return rows


# What `weft bench endpoints` shows, and `weft report` of its files.
RENDERERS = {BENCHMARK: results.Renderer(run_report, {".png": chart})}


def command(args: argparse.Namespace) -> None:
    def measure_all() -> tuple[dict[str, Any], int]:
        threads = parse_threads(args.threads)
        bad = [v for v in args.variants.split(",") if v not in VARIANTS]
        if bad:
            raise WeftError(f"--variants: unknown {', '.join(bad)} (use {', '.join(VARIANTS)})")
        program = runner.executable(BENCH)
        runs = [measure(program, t, args) for t in runner.steps(threads, lambda t: f"weft_bench_endpoints T={t}")]
        return {"runs": runs, "goal_ratio": GOAL_RATIO}, max(threads) + 1

    pool_command(args, BENCHMARK, measure_all, run_report, chart)


def add_run_options(parser: argparse.ArgumentParser, rounds: int) -> None:
    """The options every pool benchmark command ends with."""
    parser.add_argument("--rounds", type=int, default=rounds, help=f"interleaved rounds (default: {rounds})")
    parser.add_argument("--timeout", type=float, default=600, metavar="S", help="seconds allowed per run")
    parser.add_argument("--json", "--json-only", dest="json_only", action="store_true", help="save the results and print them as JSON only")
    parser.add_argument("--last", action="store_true", help="show the last saved results instead of measuring")


def register(bench_subparsers: argparse._SubParsersAction) -> None:
    parser = bench_subparsers.add_parser(
        "endpoints",
        help="message rate vs resources per endpoint sharing policy (threads, workers, locks)",
        description="Run bench/weft_bench_endpoints for each thread count: T threads put 8 bytes to a "
        "blocked target through a pool endpoint of each policy, beside T single-threaded processes "
        "(procs); prints rate, ratio to procs, UCX objects, locks and memory, with the mlx5 model's "
        "resources, and saves JSON and a PNG in the results directory.",
    )
    parser.add_argument("--threads", default="1,2", help="comma-separated thread counts (default: 1,2)")
    parser.add_argument("--policies", default=DEFAULT_POLICIES,
                        help=f"comma-separated: procs and pool policies, +caller for caller locking "
                             f"(default: {DEFAULT_POLICIES})")
    parser.add_argument("--variants", default="default",
                        help=f"comma-separated of {', '.join(VARIANTS)} (default: default)")
    parser.add_argument("--batch", type=int, default=32, help="puts between progress calls, p (default: 32)")
    parser.add_argument("--every", type=int, default=64, help="one tracked event every q puts (default: 64)")
    parser.add_argument("--secs", type=float, default=0.3, help="seconds per measurement (default: 0.3)")
    add_run_options(parser, rounds=5)
    parser.set_defaults(func=command)
