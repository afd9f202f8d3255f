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


def stuck_line(rank: int, kind: int, to: int) -> str:
    target = "any rank" if to < 0 else f"rank {to}"
    return f"STUCK rank {rank}: an operation kind {kind} to {target} outstanding after 10 s"


# Rank 0's queue blocked by the kill of rank 1: 0 gave up on 3, 3 on 0.
BLOCKED_0 = [stuck_line(0, 9, 3), stuck_line(3, 9, 0),
             result(0, stuck="3"), result(2), result(3, stuck="0")]


def test_a_stuck_live_rank_fails_the_trial() -> None:
    ok, verdict, _, _ = script().judge(args(), trial(BLOCKED_0), False)
    assert not ok
    assert "rank 0: operations to live ranks [3] never completed" in verdict
    assert "rank 3: operations to live ranks [0] never completed" in verdict


def test_a_stuck_live_rank_is_counted_when_tolerated() -> None:
    res = trial(BLOCKED_0)
    ok, verdict, _, _ = script().judge(args(tolerate_ucx_shm_stuck=True), res, False)
    assert ok, verdict
    assert res["stuck"] == [0, 3]
    assert "stuck behind a blocked UCX shared-memory queue, tolerated" in verdict


def test_the_blocked_rank_and_its_peers_may_report_each_other_failed() -> None:
    # rank 0's queue is blocked: 2 and 3 gave up on it, it gave up on 2,
    # UCX ended its silent connections to 2 and 3, and 3 declared it
    # failed after a blocking call
    res = trial([stuck_line(0, 9, 2), stuck_line(2, 9, 0), stuck_line(3, 9, 0),
                 result(0, failed="1,2,3", learnt="2000000,3000000,4000000", stuck="2"),
                 result(2, stuck="0"),
                 result(3, failed="0,1", learnt="5000000,2000000", stuck="0")])
    ok, verdict, detect, _ = script().judge(args(tolerate_ucx_shm_stuck=True), res, False)
    assert ok, verdict
    assert detect == []   # each looked at failures again only after giving up
    ok, verdict, _, _ = script().judge(args(), res, False)
    assert not ok and "rank 0 reports failed [1, 2, 3]" in verdict


def test_a_flush_that_gives_up_needs_a_blocked_queue() -> None:
    flush = stuck_line(2, 4, -1)
    ok, verdict, _, _ = script().judge(args(tolerate_ucx_shm_stuck=True),
                                       trial([flush] + BLOCKED_0), False)
    assert ok, verdict
    ok, verdict, _, _ = script().judge(args(tolerate_ucx_shm_stuck=True),
                                       trial([flush, result(0), result(2), result(3)]), False)
    assert not ok
    assert "rank 2: a flush (kind 4) never completed and no blocked queue was identified" in verdict


def test_a_direct_path_operation_that_never_completes_is_not_tolerated() -> None:
    # only non-blocking active messages (and flushes) wait on UCX's queues
    # on the direct path
    lines = [stuck_line(0, 9, 3), stuck_line(3, 5, 0),
             result(0, stuck="3"), result(2), result(3, stuck="0")]
    ok, verdict, _, _ = script().judge(args(tolerate_ucx_shm_stuck=True), trial(lines), False)
    assert not ok
    assert "rank 3: a direct-path operation (kind 5) to live rank 0 never completed" in verdict
    # over UCX shared memory every kind goes through UCX
    ok, verdict, _, _ = script().judge(args(path="ucxshm", tolerate_ucx_shm_stuck=True),
                                       trial(lines), False)
    assert ok, verdict


def test_a_stuck_rank_needs_its_stuck_line() -> None:
    res = trial([stuck_line(0, 9, 3), result(0, stuck="3"), result(2), result(3, stuck="0")])
    ok, verdict, _, _ = script().judge(args(tolerate_ucx_shm_stuck=True), res, False)
    assert not ok
    assert "rank 3 reports rank 0 stuck without a STUCK line" in verdict
    # and the other way round
    res = trial([stuck_line(0, 9, 3), stuck_line(3, 9, 0), result(0, stuck="3"), result(2),
                 result(3)])
    ok, verdict, _, _ = script().judge(args(tolerate_ucx_shm_stuck=True), res, False)
    assert not ok
    assert "rank 3 printed STUCK for rank 0 but its RESULT line does not list it" in verdict


def test_giving_up_on_the_killed_rank_is_not_tolerated() -> None:
    # a survivor that waited for the dead rank instead of learning of its
    # death; the pair's rank in common is the victim, not a live rank
    res = trial([stuck_line(0, 9, 1), result(0, failed="-", learnt="-", stuck="1"),
                 result(2), result(3)])
    ok, verdict, _, _ = script().judge(args(tolerate_ucx_shm_stuck=True), res, False)
    assert not ok
    assert "rank 0 gave up on the killed rank 1 instead of learning of its death" in verdict


def test_stuck_ranks_with_no_rank_in_common_are_not_tolerated() -> None:
    # one kill blocks at most one queue: 0, 2 and 3 each giving up on
    # another is more than that
    res = trial([stuck_line(0, 9, 2), stuck_line(2, 9, 3), stuck_line(3, 9, 0),
                 result(0, stuck="2"), result(2, stuck="3"), result(3, stuck="0")])
    ok, verdict, _, _ = script().judge(args(tolerate_ucx_shm_stuck=True), res, False)
    assert not ok
    assert "no live rank in common [(0, 2), (2, 3), (3, 0)]" in verdict


def test_a_stuck_rank_is_not_tolerated_when_ranks_were_only_stopped() -> None:
    res = trial([stuck_line(0, 9, 3), result(0, failed="-", learnt="-", stuck="3"),
                 result(1, failed="-", learnt="-"), result(2, failed="-", learnt="-"),
                 result(3, failed="-", learnt="-")])
    ok, verdict, _, _ = script().judge(args(signal="STOP", tolerate_ucx_shm_stuck=True), res,
                                       False)
    assert not ok
    assert "rank 0: operations to live ranks [3] never completed" in verdict


def test_tolerating_stuck_ranks_still_checks_the_rest() -> None:
    # a survivor that reports failed a live rank that is not the blocked
    # one, or one that is missing, fails the trial whatever is tolerated
    res = trial([stuck_line(0, 9, 3), result(0, failed="1,2", learnt="2000000,3000000",
                                             stuck="3"), result(2)])
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
