"""`weft project coll`: the SimGrid SMPI projection of the hierarchical
collectives to the paper's machines (the same as `weft bench coll --smpi`)."""

from __future__ import annotations

import argparse

from weft import bench_coll


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("project", help="project a benchmark to other machines with SimGrid SMPI")
    targets = parser.add_subparsers(dest="target", metavar="BENCHMARK", required=True)
    coll = targets.add_parser("coll", help="hierarchical vs native bcast/reduce on the paper's machines",
                              description="Same as `weft bench coll --smpi`.")
    bench_coll.add_arguments(coll, smpi_default=True)
