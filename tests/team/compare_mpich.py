#!/usr/bin/env python3
"""Side by side on this machine: weft's split (weft_topo_dump, launched with
the MPI weft is built with)
and MPICH 4's MPI_COMM_TYPE_HW_UNGUIDED (mpich_hw_unguided, mpiexec.mpich),
with the same bindings.  Prints a Markdown table of what each gives at every
step and checks the differences recorded in docs/topology.md, so that a
change on either side is noticed.

usage: compare_mpich.py WEFT_TOPO_DUMP MPICH_HW_UNGUIDED FLAVOR MPIEXEC
(FLAVOR: the MPI weft is built with, openmpi or mpich; MPIEXEC: its launcher)
"""

import json
import os
import re
import subprocess
import sys

# (name, MPICH -bind-to, weft WEFT_TOPO_BIND, expected finding)
CASES = [
    ("one rank per core", "user:0,1", "core:0,core:1", "same"),
    ("unbound", "none", "unbound", "same"),
    ("two ranks on core 0", "user:0,0,1", "core:0,core:0,core:1", "same"),
    ("unbound and bound", "user:0+1,1", "unbound,core:1", "differ"),
    ("two unbound, two bound", "user:0+1,0+1,0,1", "unbound,unbound,core:0,core:1", "differ"),
]


def run(cmd, env=None):
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})})
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{proc.stderr}")
    return proc.stdout


def weft_launch(flavor, mpiexec, nranks, env):
    """The command line that starts nranks ranks with env exported."""
    if flavor == "openmpi":
        cmd = [mpiexec, "-np", str(nranks), "--oversubscribe", "--bind-to", "none"]
        for key, value in env.items():
            cmd += ["-x", f"{key}={value}"]
    else:
        cmd = [mpiexec, "-n", str(nranks)]
        for key, value in env.items():
            cmd += ["-genv", key, value]
    return cmd


def weft_steps(dump, nranks, bind, flavor, mpiexec):
    """{step: {rank: (type, members) or None}} from weft_topo_dump."""
    env = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
    out = run(weft_launch(flavor, mpiexec, nranks, {"WEFT_TOPO_BIND": bind}) + [dump], env)
    steps = {}
    for s in json.loads(out)["steps"]:
        got = {r: None for r in s["null"]}
        for c in s["comms"]:
            for r in c["members"]:
                got[r] = (c["type"], tuple(c["members"]))
        steps[s["step"]] = got
    return steps


def mpich_steps(prog, nranks, bind):
    out = run(["mpiexec.mpich", "-n", str(nranks), "-bind-to", bind, prog])
    steps = {}
    for line in out.splitlines():
        m = re.match(r"step (\d+) rank (\d+): (\S+(?: type\))?)(?: \[([\d,]+)\])?", line)
        step, rank, typ, members = int(m[1]), int(m[2]), m[3], m[4]
        steps.setdefault(step, {})[rank] = (
            None if typ == "null" else (typ, tuple(int(x) for x in members.split(","))))
    return steps


def show(entry):
    if entry is None:
        return "NULL"
    typ, members = entry
    return f"{typ} {{{','.join(map(str, members))}}}"


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    dump, prog, flavor, mpiexec = sys.argv[1:5]
    failures = 0
    print("| case | step | rank | weft | MPICH HW_UNGUIDED | same members |")
    print("|---|---|---|---|---|---|")
    for name, mpich_bind, weft_bind, expected in CASES:
        nranks = len(weft_bind.split(","))
        if weft_bind == "unbound":
            nranks = 2
        w = weft_steps(dump, nranks, weft_bind, flavor, mpiexec)
        m = mpich_steps(prog, nranks, mpich_bind)
        differs = False
        for step in sorted(set(w) | set(m)):
            for rank in range(nranks):
                a, b = w.get(step, {}).get(rank), m.get(step, {}).get(rank)
                same = (a is None) == (b is None) and (a is None or a[1] == b[1])
                differs |= not same
                print(f"| {name} | {step} | {rank} | {show(a)} | {show(b)} | "
                      f"{'yes' if same else 'NO'} |")
        finding = "differ" if differs else "same"
        if finding != expected:
            print(f"unexpected: '{name}' now gives {finding} results, expected {expected}",
                  file=sys.stderr)
            failures += 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
