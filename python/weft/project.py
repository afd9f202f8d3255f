"""`weft project coll`: the SimGrid SMPI projection of the hierarchical
collectives to the paper's machines (the same as `weft bench coll --smpi`);
`weft project summa` and `weft project hvec` the same for the paper's
applications (`weft bench summa --smpi`, `weft bench hvec --smpi`)."""

from __future__ import annotations

import argparse

from weft import bench_coll, bench_hvec, bench_summa


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("project", help="project a benchmark to other machines with SimGrid SMPI")
    targets = parser.add_subparsers(dest="target", metavar="BENCHMARK", required=True)
    coll = targets.add_parser("coll", help="hierarchical vs native bcast/reduce on the paper's machines",
                              description="Same as `weft bench coll --smpi`.")
    bench_coll.add_arguments(coll, smpi_default=True)
    summa = targets.add_parser("summa", help="simple vs hierarchical SUMMA on the paper's machines",
                               description="Same as `weft bench summa --smpi`.")
    bench_summa.add_arguments(summa, smpi_default=True)
    hvec = targets.add_parser("hvec", help="Algorithm 5, H_topo vs H_conf(i), on the paper's NTW24E5",
                              description="Same as `weft bench hvec --smpi`.")
    bench_hvec.add_arguments(hvec, smpi_default=True)
