"""The verdicts of tests/reliability/outside_kill.py, from injected job
output: what a trial's ranks print decides whether it passed."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT_DIR = ROOT / "tests" / "reliability"


def script():
    sys.path.insert(0, str(SCRIPT_DIR))
    try:
        import outside_kill
    finally:
        sys.path.pop(0)
    return outside_kill


def args(**kw) -> argparse.Namespace:
    base = dict(np=4, path="direct", signal="KILL", hang=60.0, tolerate_ucx_abort=False, tolerate_ucx_shm_stuck=False)
    base.update(kw)
    return argparse.Namespace(**base)


def result(rank: int, failed: str = "1", learnt: str = "2000000", end: str = "ok",
           said: str = "-", stuck: str | None = "-") -> str:
    line = (f"RESULT rank {rank} failed {failed} learnt {learnt} ops 100 end {end} "
            f"expired 0 said {said}")
    return line if stuck is None else f"{line} stuck {stuck}"


def trial(lines: list[str], victim: int = 1) -> dict:
    return {"victim": victim, "t_kill": 1000000, "hang": False, "out": "\n".join(lines) + "\n",
            "pids": {0: 100, 1: 101, 2: 102, 3: 103}, "seconds": 2.0}


def test_every_survivor_reporting_the_victim_passes() -> None:
    ok, verdict, detect, _ = script().judge(args(), trial([result(0), result(2), result(3)]), False)
    assert ok, verdict
    assert detect == [1.0, 1.0, 1.0]


def test_a_malformed_result_line_fails_the_trial() -> None:
    # a line cut short (here without its stuck field), a label out of
    # place, a value that is not a list of ranks
    for bad in (result(3, stuck=None), result(3).replace(" said ", " sad "),
                result(3, failed="1,x"), result(3, learnt="1,2")):
        res = trial([result(0), result(2), bad])
        ok, verdict, _, _ = script().judge(args(tolerate_ucx_shm_stuck=True), res, False)
        assert not ok
        assert "malformed RESULT line: RESULT rank 3" in verdict
        assert "no RESULT from ranks [3]" in verdict


def test_a_stuck_live_rank_fails_the_trial() -> None:
    res = trial([result(0, stuck="3"), result(2), result(3, stuck="0")])
    ok, verdict, _, _ = script().judge(args(), res, False)
    assert not ok
    assert "rank 0: operations to live ranks [3] never completed" in verdict
    assert "rank 3: operations to live ranks [0] never completed" in verdict


def stuck_line(rank: int, kind: int, to: int) -> str:
    return f"STUCK rank {rank}: an operation kind {kind} to rank {to} outstanding after 15 s"


def test_a_stuck_live_rank_is_counted_when_tolerated() -> None:
    res = trial([stuck_line(0, 9, 3), stuck_line(3, 8, 0),
                 result(0, stuck="3"), result(2), result(3, stuck="0")])
    ok, verdict, _, _ = script().judge(args(tolerate_ucx_shm_stuck=True), res, False)
    assert ok, verdict
    assert res["stuck"] == [0, 3]
    assert "stuck behind a blocked UCX shared-memory queue, tolerated" in verdict


def test_a_rank_cut_off_by_a_blocked_queue_may_be_reported_failed() -> None:
    # rank 0's queue is blocked: 2 and 3 gave up on it, it gave up on 2,
    # and UCX ended its silent connections to 2 and 3
    res = trial([result(0, failed="1,2,3", learnt="2000000,3000000,4000000", stuck="2"),
                 result(2, stuck="0"), result(3, stuck="0")])
    ok, verdict, detect, _ = script().judge(args(tolerate_ucx_shm_stuck=True), res, False)
    assert ok, verdict
    assert detect == []   # each looked at failures again only after giving up
    ok, verdict, _, _ = script().judge(args(), res, False)
    assert not ok and "rank 0 reports failed [1, 2, 3]" in verdict


def test_a_direct_path_operation_that_never_completes_is_not_tolerated() -> None:
    # only active messages go through UCX's queues on the direct path
    lines = [stuck_line(0, 9, 3), stuck_line(3, 5, 0),
             result(0, stuck="3"), result(2), result(3, stuck="0")]
    ok, verdict, _, _ = script().judge(args(tolerate_ucx_shm_stuck=True), trial(lines), False)
    assert not ok
    assert "rank 3: a direct-path operation (kind 5) to live rank 0 never completed" in verdict
    # over UCX shared memory every kind goes through UCX
    ok, verdict, _, _ = script().judge(args(path="ucxshm", tolerate_ucx_shm_stuck=True),
                                       trial(lines), False)
    assert ok, verdict


def test_stuck_ranks_with_no_rank_in_common_are_not_tolerated() -> None:
    # one kill blocks at most one queue: 0, 2 and 3 each giving up on
    # another is more than that
    res = trial([result(0, stuck="2"), result(2, stuck="3"), result(3, stuck="0")])
    ok, verdict, _, _ = script().judge(args(tolerate_ucx_shm_stuck=True), res, False)
    assert not ok
    assert "no rank in common [(0, 2), (2, 3), (3, 0)]" in verdict


def test_a_stuck_rank_is_not_tolerated_when_ranks_were_only_stopped() -> None:
    res = trial([result(0, failed="-", learnt="-", stuck="3"), result(1, failed="-", learnt="-"),
                 result(2, failed="-", learnt="-"), result(3, failed="-", learnt="-")])
    ok, verdict, _, _ = script().judge(args(signal="STOP", tolerate_ucx_shm_stuck=True), res,
                                       False)
    assert not ok
    assert "rank 0: operations to live ranks [3] never completed" in verdict


def test_tolerating_stuck_ranks_still_checks_the_rest() -> None:
    # a survivor that reports failed a live rank it was not cut off from,
    # or one that is missing, fails the trial whatever is tolerated
    res = trial([result(0, failed="1,2", learnt="2000000,3000000", stuck="3"), result(2)])
    ok, verdict, _, _ = script().judge(args(tolerate_ucx_shm_stuck=True), res, False)
    assert not ok
    assert "rank 0 reports failed [1, 2]" in verdict
    assert "no RESULT from ranks [3]" in verdict


def test_a_hang_fails_the_trial() -> None:
    res = trial([result(0)])
    res["hang"] = True
    ok, verdict, _, _ = script().judge(args(tolerate_ucx_shm_stuck=True), res, False)
    assert not ok
    assert "HANG" in verdict
