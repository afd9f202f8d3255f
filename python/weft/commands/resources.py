"""`weft resources`: what a set of per-thread endpoints costs on a NIC.

    weft resources --model mlx5 --threads 16 --policy all
    weft resources --model mlx5 --threads 16 --policy static --assignment
    weft resources --model mlx5 --threads 16 --sharing ctx-2xqps
    weft resources --model mlx5 --threads 64 --policy all --plot mlx5.png

The figures come from a model (weft.models.mlx5), not from a device: weft has no
mlx5 NIC here. Every table says so.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from matplotlib.ticker import MaxNLocator
from rich.console import Group, RenderableType
from rich.table import Column, Table

from weft import WeftError
from weft.core import report, results
from weft.models import mlx5

MODELS = ("mlx5",)
CAPTION = (
    "MODELLED, not measured: the mlx5 provider's allocation on a ConnectX-4 as described by Zambre et al., "
    "\"Scalable Communication Endpoints\" (docs/endpoints-mlx5-model.md). "
    "hw = UAR pages (equivalently data-path uUARs); memory per Table I."
)


def fmt_mib(nbytes: int) -> str:
    return f"{nbytes / mlx5.MIB:.2f} MiB"


def fmt_percent(fraction: float | None) -> str:
    return report.MISSING if fraction is None else f"{100 * fraction:.2f}"


def fmt_levels(levels: dict[str, int]) -> str:
    """Sharing levels of Fig. 4(b) in use, as "L1×16 L3×2"."""
    return " ".join(f"L{level}×{count}" for level, count in levels.items() if count) or report.MISSING


def category_rows(threads: int, cq_sharing: int = 1) -> list[dict[str, Any]]:
    """for_policy of the policy standing for each of the six categories."""
    return [mlx5.for_policy(mlx5.CATEGORY_POLICY[category], threads, cq_sharing=cq_sharing)
            for category in mlx5.CATEGORIES]


def compact(table: Table) -> Table:
    """Less padding, so that the wide tables fit 80 columns or nearly."""
    table.collapse_padding, table.pad_edge = True, False
    return table


def resource_columns() -> list[Column]:
    """Fresh columns for resource_cells (a rich Column keeps the cells of its table)."""
    return [Column(name, justify="right") for name in ("CTX", "TD", "QP", "CQ", "UAR", "uUAR", "idle", "MiB")]


def resource_cells(row: dict[str, Any]) -> list[str]:
    return [str(row[key]) for key in ("ctxs", "tds", "qps", "cqs", "uars", "uuars", "wasted_uuars")] + [
        f"{row['bytes'] / mlx5.MIB:.2f}"
    ]


def categories_table(rows: list[dict[str, Any]], threads: int) -> RenderableType:
    """The six categories side by side, relative to MPI everywhere."""
    base_bytes = rows[0]["bytes"]
    return compact(report.table(
        f"mlx5 model — endpoints for {threads} thread{'s' if threads > 1 else ''} by category (§VI)",
        [Column("category", no_wrap=True), Column("policy", no_wrap=True), *resource_columns(),
         Column("hw %", justify="right"), Column("mem %", justify="right")],
        [[row["category"], row["policy"], *resource_cells(row), fmt_percent(row["hw_share_of_process"]),
          f"{100 * row['bytes'] / base_bytes:.1f}"] for row in rows],
        caption=CAPTION + " %: of MPI everywhere. idle: uUARs no thread's QP uses.",
    ))


def policy_table(row: dict[str, Any]) -> RenderableType:
    return report.table(
        f"mlx5 model — policy {row['policy']} ({row['category']}), threads: {row['threads']}",
        ["quantity", Column("value", justify="right")],
        [
            ["device contexts (CTX)", str(row["ctxs"])],
            ["protection domains, memory regions", f"{row['pds']}, {row['mrs']}"],
            ["thread domains (TD)", str(row["tds"])],
            ["QPs (unused)", f"{row['qps']} ({row['wasted_qps']})"],
            ["CQs", str(row["cqs"])],
            ["UAR pages: static + dynamic", f"{row['uars']} = {row['static_uars']} + {row['dynamic_uars']}"],
            ["UAR pages idle", str(row["wasted_uars"])],
            ["data-path uUARs (idle)", f"{row['uuars']} ({row['wasted_uuars']})"],
            ["memory (Table I)", f"{fmt_mib(row['bytes'])} ({row['bytes']} B)"],
            ["hw vs MPI everywhere", f"{fmt_percent(row['hw_share_of_process'])}%"
                                     if row["hw_share_of_process"] is not None else report.MISSING],
            ["QP sharing levels (Fig. 4b)", fmt_levels(row["levels"])],
        ],
        caption=CAPTION + (f" {row['baseline_note']}." if row.get("baseline_note") else ""),
    )


def assignment_table(endpoints: mlx5.EndpointSet) -> RenderableType:
    """Which uUAR each QP got."""
    shared = endpoints.shared_uuars()
    return report.table(
        "uUAR of every QP (QP numbers from 1 in creation order)",
        [Column("QP", justify="right"), Column("CTX", justify="right"), Column("TD", justify="right"),
         Column("CQ", justify="right"), Column("UAR", justify="right"), Column("uUAR", justify="right"),
         "class", "threads", Column("level", justify="right")],
        [
            [str(qp.index + 1), str(qp.ctx), report.MISSING if qp.td is None else str(qp.td), str(qp.cq), str(qp.uar),
             str(qp.uuar), qp.kind, ",".join(map(str, qp.threads)) or "unused",
             report.MISSING if qp.level is None else str(qp.level)]
            for qp in endpoints.qps
        ],
        caption="QPs sharing a uUAR: " + ("; ".join(" and ".join(map(str, g)) for g in shared) if shared else "none"),
    )


def sharing_rows(kind: str, threads: int) -> list[dict[str, Any]]:
    """x-way sharing for every x dividing threads."""
    rows = []
    for ways in (x for x in range(1, threads + 1) if threads % x == 0):
        res = mlx5.model(mlx5.sharing_scenario(kind, ways, threads))
        rows.append({"ways": ways, **res.as_dict()})
    return rows


def sharing_table(kind: str, rows: list[dict[str, Any]], threads: int) -> RenderableType:
    base = rows[0]
    return compact(report.table(
        f"mlx5 model — {mlx5.SHARING_SWEEPS[kind]}, {threads} threads",
        [Column("x-way", justify="right"), *resource_columns(), Column("hw %", justify="right"),
         Column("mem %", justify="right")],
        [[str(row["ways"]), *resource_cells(row), fmt_percent(row["uars"] / base["uars"]),
          fmt_percent(row["bytes"] / base["bytes"])] for row in rows],
        caption=CAPTION + " %: of 1-way. idle: uUARs no thread's QP uses.",
    ))


def plot(path: Path, threads: int, policies: list[str], cq_sharing: int = 1) -> Path:
    """UAR pages and memory against thread count, one line per policy."""
    figure = report.new_figure(10, 4.2)
    hw_axes, mem_axes = figure.subplots(1, 2)
    counts = list(range(1, threads + 1))
    for policy in policies:
        rows = [mlx5.for_policy(policy, t, cq_sharing=cq_sharing) for t in counts]
        label = f"{rows[0]['category']} ({policy})" if policy in mlx5.CATEGORY_POLICY.values() else policy
        hw_axes.plot(counts, [row["uars"] for row in rows], marker="o", markersize=3, label=label)
        mem_axes.plot(counts, [row["bytes"] / mlx5.MIB for row in rows], marker="o", markersize=3, label=label)
    hw_axes.set_ylabel("UAR pages")
    mem_axes.set_ylabel("memory (MiB, Table I)")
    for axes in (hw_axes, mem_axes):
        axes.set_xlabel("threads")
        axes.xaxis.set_major_locator(MaxNLocator(integer=True))
        axes.grid(alpha=0.3)
    hw_axes.set_title("hardware resources")
    mem_axes.set_title("memory")
    figure.suptitle("mlx5 endpoint resources vs threads — MODELLED, not measured")
    figure.legend(*hw_axes.get_legend_handles_labels(), loc="outside right center", fontsize="small")
    try:
        figure.savefig(path, dpi=120)
    except OSError as exc:
        raise WeftError(f"cannot write the plot to {path}: {exc.strerror or exc}") from None
    return path


def command(args: argparse.Namespace) -> None:
    if args.model not in MODELS:
        raise WeftError(f"unknown model {args.model!r}; available: {', '.join(MODELS)}")
    if args.threads < 1:
        raise WeftError(f"--threads must be >= 1, got {args.threads}")
    if args.plot is not None:
        results.check_output_file(args.plot, "--plot")
    policies: list[str] = []  # the lines of --plot
    if args.sharing is not None:
        if args.cq_sharing != 1:
            raise WeftError("--sharing builds its own CQs; it does not combine with --cq-sharing")
        if args.assignment or args.plot is not None:
            raise WeftError("--assignment and --plot show policies; they do not combine with --sharing")
        rows = sharing_rows(args.sharing, args.threads)
        document: Any = {"model": args.model, "threads": args.threads, "sharing": args.sharing, "rows": rows}
        renderable = sharing_table(args.sharing, rows, args.threads)
    elif args.policy == "all":
        if args.assignment:
            raise WeftError("--assignment shows one policy; give --policy P")
        rows = category_rows(args.threads, args.cq_sharing)
        document = {"model": args.model, "threads": args.threads, "cq_sharing": args.cq_sharing, "rows": rows}
        renderable = categories_table(rows, args.threads)
        policies = [row["policy"] for row in rows]
    else:
        row = mlx5.for_policy(args.policy, args.threads, cq_sharing=args.cq_sharing)
        document = row
        parts: list[RenderableType] = [policy_table(row)]
        if args.assignment:
            scenario = replace(mlx5.policy_scenario(args.policy, args.threads), endpoints_per_cq=args.cq_sharing)
            parts += ["", assignment_table(mlx5.build(scenario))]
        renderable = Group(*parts)
        policies = [args.policy]
    if args.plot is not None:
        plot(args.plot, args.threads, policies, args.cq_sharing)
    if args.json:
        report.print_json(document)
        return
    report.console.print(renderable)
    if args.plot is not None:
        report.console.print(f"plot: {args.plot}")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "resources",
        help="model the NIC resources of per-thread endpoints (mlx5)",
        description=(
            "Model what a weft endpoint-pool policy would allocate on an mlx5 (ConnectX-4) NIC: "
            "CTXs, TDs, QPs, CQs, UAR pages, uUARs, memory and waste. Modelled, not measured."
        ),
    )
    parser.add_argument("--model", default="mlx5", help="NIC model (default: mlx5; the only one)")
    parser.add_argument("--threads", "-t", type=int, default=16, metavar="T", help="threads (default: 16)")
    parser.add_argument(
        "--policy", "-p", default="all", metavar="P",
        help=f"'all' for the six categories of the paper (default), or one of: {mlx5.POLICY_HELP}",
    )
    parser.add_argument(
        "--sharing", choices=tuple(mlx5.SHARING_SWEEPS), metavar="KIND",
        help="x-way sharing of one Verbs object for every x dividing T: " + "; ".join(
            f"{name} = {what}" for name, what in mlx5.SHARING_SWEEPS.items()),
    )
    parser.add_argument(
        "--cq-sharing", type=int, default=1, metavar="N",
        help="endpoints per completion queue (default: 1, every endpoint's completions private)",
    )
    parser.add_argument("--assignment", action="store_true", help="also list the uUAR of every QP")
    parser.add_argument("--plot", type=Path, metavar="FILE", help="draw UAR pages and memory vs 1..T threads as PNG")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON instead of tables")
    parser.set_defaults(func=command)
