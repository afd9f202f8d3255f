#!/usr/bin/env python3
"""Kill campaigns from outside the job.

A process beside the job (not a rank) SIGKILLs, or SIGSTOPs for a while
and then SIGCONTs, one random rank of test_outside_kill at a random moment
-- during its operations ("ops") or as it starts the end of its run
("end") -- without telling any rank.  mpirun --enable-recovery (Open MPI)
lets the survivors live on.  Every trial then checks:

  * every survivor finished (printed RESULT) within the hang bound, and
    no rank died of anything but the kill (an abort inside UCX included);
  * SIGKILL: every survivor reports exactly the killed rank failed;
    an operation to a live rank that is still outstanding after --give-up
    seconds of WEFT_TIMEOUT_MS expiries makes that rank "stuck" (a
    survivor gives up on it, says so and ends its operations): a failure,
    unless --tolerate-ucx-shm-stuck (the kill left a UCX shared-memory
    receive queue blocked, docs/limits.md), when it is counted -- if
    every pair of a survivor and the rank it gave up on has one rank in
    common (the one whose queue is blocked) and, on the direct path, only
    active messages were left outstanding;
    SIGSTOP: no rank other than the stopped one is reported failed by any
    rank that was not stopped (a stalled rank must not split the job);
  * leftovers: as root each trial runs in mount and IPC namespaces of its
    own with a private /dev/shm, so every file there and every System V
    segment after the job is the job's; otherwise nothing is counted.

It prints one line per trial and a summary: trials, survivors without
hang, detection times (kill -> the survivor learnt it, CLOCK_MONOTONIC of
the killer and the rank), leftovers.

Examples (from the build directory):

  tests/reliability/outside_kill.py --exe tests/reliability/test_outside_kill \\
      --path tcp --signal KILL --point ops --trials 30
  tests/reliability/outside_kill.py --exe ... --path tcp --signal STOP --stall 3 \\
      --timeout-ms 1000 --trials 20

The exit status is 1 if any trial failed a check, 0 otherwise.
"""
import argparse
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

# kill_one_op's kinds that go through UCX on the direct path and can be
# left outstanding: a non-blocking active message (a blocking one, kind 8,
# declares its rank failed when it times out), and the flushes (4, 7) that
# wait for the worker's UCX operations too
DIRECT_UCX_KINDS = (9,)
FLUSH_KINDS = (4, 7)

# The words before each value of a rank's RESULT line
RESULT_LABELS = ("rank", "failed", "learnt", "ops", "end", "expired", "said", "stuck")

PATHS = {
    "direct": {"WEFT_SHM": "1"},
    "ucxshm": {"WEFT_SHM": "0"},
    "tcp": {"WEFT_SHM": "0", "WEFT_UCX_TLS": "tcp,self"},
}

# Wrapper run as root: a private /dev/shm and IPC namespace for the job,
# listed after it.
PRIVATE = r'''
mount -t tmpfs -o mode=1777,size=1g tmpfs /dev/shm || exit 97
"$@"
rc=$?
sleep 0.5
echo "LEFT-SHM $(ls -A /dev/shm | tr '\n' ' ')"
echo "LEFT-SYSV $(ipcs -m | awk '$1 ~ /^0x/ {print $2}' | tr '\n' ' ')"
exit $rc
'''


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--exe", required=True, help="test_outside_kill")
    p.add_argument("--mpiexec", default="mpiexec")
    p.add_argument("--mpiexec-flags", default="--oversubscribe --bind-to none",
                   help="flags for the launcher (default: %(default)s)")
    p.add_argument("--np", type=int, default=4)
    p.add_argument("--path", choices=sorted(PATHS), default="tcp")
    p.add_argument("--signal", choices=["KILL", "STOP"], default="KILL")
    p.add_argument("--point", choices=["ops", "end"], default="ops",
                   help="ops: a random moment of the operations; end: as the victim starts "
                        "the end of its run (default: %(default)s)")
    p.add_argument("--trials", type=int, default=10)
    p.add_argument("--seconds", type=float, default=2.0, help="each rank's operations")
    p.add_argument("--stall", type=float, default=3.0, help="SIGSTOP: seconds stopped")
    p.add_argument("--timeout-ms", type=int, default=5000, help="WEFT_TIMEOUT_MS")
    p.add_argument("--hang", type=float, default=90.0, help="a trial longer than this hangs")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--log", help="append the whole output of every failed trial to this file")
    p.add_argument("--export", action="append", default=[], metavar="VAR",
                   help="pass this environment variable to the ranks too (e.g. LD_LIBRARY_PATH, "
                        "to run another libweft); repeatable")
    p.add_argument("--tolerate-ucx-abort", action="store_true",
                   help="a survivor that UCX 1.13 aborts over TCP (\"Fatal: unexpected error\" "
                        "while it answers the dead rank: docs/limits.md) is counted, not "
                        "failed; the other survivors are checked as usual")
    p.add_argument("--give-up", type=float, default=0.0,
                   help="seconds a survivor retries a wait or flush that WEFT_TIMEOUT_MS ends "
                        "before it calls the target stuck (default: 2 x --timeout-ms, and "
                        "at least --stall + 5 s)")
    p.add_argument("--tolerate-ucx-shm-stuck", action="store_true",
                   help="a trial whose survivors report live ranks stuck (a SIGKILL that "
                        "lands while the victim writes into a live rank's UCX shared-memory "
                        "receive queue blocks that queue for good: docs/limits.md) is counted, "
                        "not failed; everything else is checked as usual")
    p.add_argument("--no-private", action="store_true",
                   help="do not run trials in a private /dev/shm even as root")
    a = p.parse_args()
    if a.np < 3 or a.trials < 1 or a.seconds <= 0 or a.stall <= 0 or a.timeout_ms < 0:
        p.error("need --np >= 3, --trials >= 1, --seconds > 0, --stall > 0, --timeout-ms >= 0")
    if not os.access(a.exe, os.X_OK):
        p.error(f"--exe {a.exe}: not an executable")
    if a.give_up < 0:
        p.error("need --give-up >= 0")
    if a.give_up == 0:
        a.give_up = max(2 * a.timeout_ms / 1000.0, a.stall + 5.0)
    if a.signal == "STOP" and a.give_up <= a.stall:
        p.error("need --give-up > --stall: a stopped rank is slow, not stuck")
    return a


def private_ok():
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        return False
    return subprocess.run(["unshare", "--mount", "--ipc", "true"],
                          capture_output=True).returncode == 0


def wait_files(d, name, np, proc, deadline):
    """pid of every rank once each has written d/name.R, or None."""
    while time.monotonic() < deadline and proc.poll() is None:
        pids = {}
        for r in range(np):
            try:
                with open(os.path.join(d, f"{name}.{r}")) as f:
                    pids[r] = int(f.read().strip() or 0)
            except (OSError, ValueError):
                break
        if len(pids) == np and all(pids.values()):
            return pids
        time.sleep(0.005)
    return None


def stacks_of(pids, victim):
    """Every thread's stack in each survivor of a hung trial (gdb, if there
    is one), for the log: what the survivors wait for."""
    gdb = shutil.which("gdb")
    if gdb is None:
        return "(no gdb: no stacks)\n"
    text = ""
    for r, pid in sorted(pids.items()):
        if r == victim:
            continue
        try:
            got = subprocess.run([gdb, "-p", str(pid), "-batch", "-nx",
                                  "-ex", "thread apply all bt"],
                                 capture_output=True, text=True, timeout=10)
            text += f"--- rank {r} (pid {pid}) ---\n{got.stdout}{got.stderr}"
        except (subprocess.TimeoutExpired, OSError) as e:
            text += f"--- rank {r} (pid {pid}): no stack ({e}) ---\n"
    return text


def one_trial(a, rng, private):
    d = tempfile.mkdtemp(prefix="weft-outside-kill-")
    env = dict(os.environ, OUTSIDE_KILL_DIR=d, WEFT_TIMEOUT_MS=str(a.timeout_ms),
               **PATHS[a.path])
    env.pop("UCX_TLS", None)
    if a.path != "tcp":
        env.pop("WEFT_UCX_TLS", None)
    xflags = []
    for k in ["OUTSIDE_KILL_DIR", "WEFT_TIMEOUT_MS", "WEFT_SHM", "WEFT_UCX_TLS"] + a.export:
        if k in env:
            xflags += ["-x", k]
    cmd = [a.mpiexec, "-np", str(a.np)] + a.mpiexec_flags.replace(";", " ").split() + \
        ["--enable-recovery"] + \
        xflags + [a.exe, str(a.seconds), str(a.give_up)]
    if private:
        cmd = ["unshare", "--mount", "--ipc", "--", "bash", "-c", PRIVATE, "bash"] + cmd
    start = time.monotonic()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, start_new_session=True)
    res = {"victim": None, "t_kill": None, "hang": False, "out": "", "pids": {}}
    try:
        pids = wait_files(d, "pid", a.np, proc, start + a.hang)
        if pids is not None:
            res["pids"] = pids
            victim = rng.randrange(a.np)
            res["victim"] = victim
            if a.point == "ops":
                time.sleep(rng.uniform(0.05, a.seconds * 0.9))
            else:
                # the victim's end marker, then up to 5 ms into the end
                t_end = time.monotonic() + a.seconds + 10
                path = os.path.join(d, f"end.{victim}")
                while not os.path.exists(path) and time.monotonic() < t_end and \
                        proc.poll() is None:
                    time.sleep(0.001)
                time.sleep(rng.uniform(0, 0.005))
            res["t_kill"] = time.monotonic_ns()
            try:
                if a.signal == "KILL":
                    os.kill(pids[victim], signal.SIGKILL)
                else:
                    os.kill(pids[victim], signal.SIGSTOP)
                    time.sleep(a.stall)
                    os.kill(pids[victim], signal.SIGCONT)
            except ProcessLookupError:
                res["t_kill"] = None   # it had already exited: no kill this trial
        out, _ = proc.communicate(timeout=max(1.0, start + a.hang - time.monotonic()))
    except subprocess.TimeoutExpired:
        res["stacks"] = stacks_of(res["pids"], res["victim"])
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        res["hang"] = True
    res["out"] = out
    res["seconds"] = time.monotonic() - start
    shutil.rmtree(d, ignore_errors=True)
    return res


def judge(a, res, private):
    """(ok, one-line verdict, detection times in ms, leftovers)."""
    out, victim = res["out"], res["victim"]
    results = {}
    malformed = []
    for line in out.splitlines():
        f = line.split()
        if not f or f[0] != "RESULT":
            continue
        try:
            if len(f) != 17 or f[1::2] != list(RESULT_LABELS):
                raise ValueError(line)

            def ranks(x):
                return [] if x == "-" else [int(y) for y in x.split(",")]
            failed, learnt, said, stuck = ranks(f[4]), ranks(f[6]), ranks(f[14]), ranks(f[16])
            if len(learnt) != len(failed) or f[10] not in ("ok", "timeout"):
                raise ValueError(line)
            results[int(f[2])] = {"failed": failed, "learnt": dict(zip(failed, learnt)),
                                  "end": f[10], "said": said, "stuck": stuck}
        except ValueError:
            malformed.append(line.strip()[:120])
    # "STUCK rank R: WHAT kind K to rank T outstanding after S s" (T -1: "to
    # any rank", a flush)
    stuck_kinds = [(int(m.group(1)), int(m.group(2)), int(m.group(4) or -1)) for m in
                   re.finditer(r"^STUCK rank (\d+):.* kind (\d+) to (rank (\d+)|any rank) ", out,
                               re.M)]
    left = []
    for line in out.splitlines():
        if line.startswith("LEFT-SHM") or line.startswith("LEFT-SYSV"):
            left += [f"{line.split()[0][5:].lower()}:{x}" for x in line.split()[1:]]
    problems = [f"malformed RESULT line: {x}" for x in malformed]
    # UCX's own abort of a rank: "[host:PID :0:TID] file:line  Fatal: ..."
    rank_of = {pid: r for r, pid in res["pids"].items()}
    ucx_aborted = sorted({rank_of[int(m.group(1))] for m in
                          re.finditer(r"^\[[^:\]]+:(\d+) *:\d+:\d+\].*Fatal: unexpected error",
                                      out, re.M) if int(m.group(1)) in rank_of})
    tolerated = set(ucx_aborted) if a.tolerate_ucx_abort else set()
    res["ucx_aborted"] = ucx_aborted
    aborts = [ln for ln in out.splitlines()
              if "FAIL: " in ln or ("Fatal:" in ln and not tolerated) or
              ("received signal" in ln and not tolerated) or
              "Caught signal" in ln or "MPI_ABORT" in ln or "Assertion" in ln]
    if victim is None:
        return False, "no trial: the job did not start", [], left
    if res["hang"]:
        problems.append(f"HANG (> {a.hang:.0f} s)")
    if res["t_kill"] is None:
        problems.append("victim had exited before the signal")
    survivors = [r for r in range(a.np)
                 if (a.signal == "STOP" or r != victim) and r not in tolerated]
    if ucx_aborted and not tolerated:
        problems.append(f"UCX aborted ranks {ucx_aborted}")
    missing = [r for r in survivors if r not in results]
    if missing:
        problems.append(f"no RESULT from ranks {missing}")
    detect = []
    victim_done = victim in results
    if a.signal == "KILL" and victim_done:
        res["late"] = True
    # One kill leaves at most one entry half written, so one live rank's
    # queue blocked: every pair of a survivor and a rank it gave up on has
    # that rank in common.  With --tolerate-ucx-shm-stuck (SIGKILL), the
    # others may report it failed and it may report them failed (UCX ends
    # the connections that its blocked queue keeps silent).
    tolerate = a.tolerate_ucx_shm_stuck and a.signal == "KILL"
    pairs = [(r, x) for r, v in sorted(results.items()) for x in v["stuck"]]
    common = set.intersection(*[set(p) for p in pairs]) - {victim} if pairs else set()
    blocked = set()
    if tolerate and len(common) == 1:
        c = min(common)
        blocked = {(r, c) for r in range(a.np) if r != victim} | \
            {(c, r) for r in range(a.np) if r != victim}
    elif tolerate and common:
        # the pairs are all between the same two ranks: either may be the
        # blocked one, so only they are excused
        blocked = {(r, x) for r, x in pairs} | {(x, r) for r, x in pairs}
    for r, v in sorted(results.items()):
        if r in tolerated:
            continue
        if a.signal == "KILL":
            seen = sorted(set(v["failed"]) - tolerated - {x for x in v["failed"]
                                                          if (r, x) in blocked})
            # a victim that had said it was done with this survivor (the
            # "end" kill point) may die unnoticed: it was leaving anyway
            if seen != [victim] and not (victim in v["said"] and seen == []) and r != victim:
                problems.append(f"rank {r} reports failed {v['failed'] or 'none'}")
            elif seen == [victim] and res["t_kill"] is not None and not v["stuck"]:
                # (a survivor that gave up on a rank looked at failures
                # again only after its --give-up wait: no detection time)
                detect.append((v["learnt"][victim] - res["t_kill"]) / 1e6)
        elif r != victim:
            wrong = [x for x in v["failed"] if x != victim and x not in tolerated]
            if wrong:
                problems.append(f"rank {r} (not stopped) reports live ranks {wrong} failed")
            if victim in v["learnt"] and res["t_kill"] is not None:
                detect.append((v["learnt"][victim] - res["t_kill"]) / 1e6)
        if v["end"] != "ok" and (a.signal == "KILL" or r != victim):
            problems.append(f"rank {r}: done exchange timed out")
        if v["stuck"] and not tolerate:
            problems.append(f"rank {r}: operations to live ranks {v['stuck']} never completed")
        if victim in v["stuck"] and r != victim:
            problems.append(f"rank {r} gave up on the killed rank {victim} instead of learning "
                            "of its death")
    stuck = sorted({r for v in results.values() for r in v["stuck"]})
    res["stuck"] = stuck
    if pairs and tolerate and not common:
        problems.append(f"ranks gave up on each other with no live rank in common {pairs}: more "
                        "than one blocked queue")
    # every rank given up on was named on a STUCK line, and every flush
    # that gave up had a blocked queue to wait for
    for r, x in pairs:
        if not any(sr == r and st == x for sr, _, st in stuck_kinds):
            problems.append(f"rank {r} reports rank {x} stuck without a STUCK line")
    for r, k, t in stuck_kinds:
        if t >= 0 and r in results and t not in results[r]["stuck"]:
            problems.append(f"rank {r} printed STUCK for rank {t} but its RESULT line does not "
                            "list it")
        if t < 0 and not (tolerate and common):
            problems.append(f"rank {r}: a flush (kind {k}) never completed"
                            + ("" if not tolerate else " and no blocked queue was identified"))
    # On the direct path only active messages (kinds 8 and 9) go through
    # UCX's queues: any other operation that never completes is weft's
    if tolerate and a.path == "direct":
        for r, k, t in stuck_kinds:
            if k not in DIRECT_UCX_KINDS and not (t < 0 and k in FLUSH_KINDS):
                problems.append(f"rank {r}: a direct-path operation (kind {k}) to live rank {t} "
                                "never completed")
    if aborts:
        problems.append("abnormal output: " + " | ".join(x.strip()[:160] for x in aborts[:3]))
    weft_left = [x for x in left if "weft" in x or "ucx" in x or x.startswith("sysv:")]
    if weft_left:
        problems.append(f"left behind: {' '.join(weft_left)}")
    stopped_view = ""
    if a.signal == "STOP" and victim in results:
        stopped_view = f"; stopped rank {victim} reports {results[victim]['failed'] or 'none'}"
    verdict = "ok" if not problems else "; ".join(problems)
    if res.get("late"):
        verdict += " (the victim had finished its run: killed in weft_finalize or after)"
    if tolerated:
        verdict += f" (UCX aborted ranks {sorted(tolerated)}, tolerated)"
    if stuck and tolerate:
        verdict += f" (ranks {stuck} stuck behind a blocked UCX shared-memory queue, tolerated)"
    dtxt = (" detect_ms " + ",".join(f"{x:.1f}" for x in detect)) if detect else ""
    return not problems, f"victim {victim} {res['seconds']:.1f}s {verdict}{dtxt}{stopped_view}", \
        detect, weft_left


def main():
    a = parse_args()
    rng = random.Random(a.seed)
    private = not a.no_private and private_ok()
    print(f"outside kill: path {a.path}, SIG{a.signal} at '{a.point}', {a.np} ranks, "
          f"{a.trials} trials, WEFT_TIMEOUT_MS={a.timeout_ms}"
          + (f", stall {a.stall} s" if a.signal == "STOP" else "")
          + (", private /dev/shm and IPC namespace" if private
             else ", leftovers not counted (needs root and unshare)"), flush=True)
    nok = nsurv = nsurv_ok = nleft = nucx = nstuck = 0
    detect = []
    for t in range(a.trials):
        res = one_trial(a, rng, private)
        ok, verdict, d, left = judge(a, res, private)
        survivors = a.np if a.signal == "STOP" else a.np - 1
        nsurv += survivors
        got = sum(1 for ln in res["out"].splitlines() if ln.startswith("RESULT") and
                  (a.signal == "STOP" or f"rank {res['victim']} " not in ln))
        nsurv_ok += 0 if res["hang"] else min(got, survivors)
        nok += ok
        nleft += bool(left)
        nucx += bool(res.get("ucx_aborted"))
        nstuck += bool(res.get("stuck"))
        detect += d
        print(f"trial {t + 1}: {verdict}", flush=True)
        if not ok and a.log:
            with open(a.log, "a") as f:
                f.write(f"==== trial {t + 1}: {verdict}\n{res['out']}\n{res.get('stacks', '')}")
        if not ok:
            tail = [ln for ln in res["out"].splitlines() if not ln.startswith("RESULT")][-12:]
            print("    " + "\n    ".join(tail), flush=True)
            if res.get("stacks") and not a.log:
                print(res["stacks"], flush=True)
    line = (f"SUMMARY path={a.path} signal={a.signal} point={a.point} np={a.np}: "
            f"{nok}/{a.trials} trials ok, {nsurv_ok}/{nsurv} survivors finished without hang, "
            f"trials with leftovers {nleft if private else 'not counted'}, "
            f"trials with a survivor aborted by UCX {nucx}, "
            f"trials with a rank stuck behind a blocked UCX queue {nstuck}")
    if detect:
        detect.sort()
        line += (f", detection ms median {statistics.median(detect):.1f} "
                 f"p90 {detect[min(len(detect) - 1, int(len(detect) * 0.9))]:.1f} "
                 f"max {detect[-1]:.1f} (n={len(detect)})")
    print(line, flush=True)
    return 0 if nok == a.trials else 1


if __name__ == "__main__":
    sys.exit(main())
