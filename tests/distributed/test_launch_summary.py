"""``ember run``'s failure summary without launching: ranks killed by a signal, read from
Open MPI's message however it wraps, next to ranks that reported a Python error."""

import json
import os

from ember.distributed.launch import killed_ranks, summary

SAID = """--------------------------------------------------------------------------
prterun noticed that process rank 1 with PID 4242 on node vm exited on
signal 9 (Killed).
--------------------------------------------------------------------------
"""


def lines(text, t0=100.0):
    return [(t0 + i, line) for i, line in enumerate(text.splitlines(keepends=True))]


def test_killed_rank_is_read_from_mpiexec_message_however_it_wraps():
    got = killed_ranks(lines(SAID))
    assert [(k["rank"], k["pid"], k["signal"]) for k in got] == [(1, 4242, 9)]
    assert got[0]["error"] == "rank 1 (pid 4242) was killed by signal 9 (SIGKILL)"
    assert got[0]["time"] == 101.0  # when the message began
    wrapped = "process rank 3 with PID 77 on\nnode n2 exited on signal 11\n(Segmentation fault)."
    assert killed_ranks(lines(wrapped))[0]["error"] == (
        "rank 3 (pid 77) was killed by signal 11 (SIGSEGV)"
    )
    assert killed_ranks(lines("prterun has exited due to process rank 0 calling abort")) == []


def test_summary_puts_the_first_failure_first(tmp_path):
    later = {"rank": "0", "error": "DistributedError: peer gone", "where": "", "time": 105.0}
    with open(os.path.join(tmp_path, "rank-0.json"), "w") as f:
        json.dump(later, f)
    text = summary(str(tmp_path), 137, killed_ranks(lines(SAID)))
    assert text.splitlines() == [
        "ember run: the job failed (exit status 137)",
        "  rank 1 (pid 4242) was killed by signal 9 (SIGKILL) (first failure)",
        "  rank 0: DistributedError: peer gone",
    ]


def test_summary_without_reports_names_the_signal_from_the_exit_status(tmp_path):
    text = summary(str(tmp_path), 128 + 9)
    assert "no rank raised a Python exception: a rank was killed by signal 9 (SIGKILL)" in text
    assert "a rank was killed or exited on its own" in summary(str(tmp_path), 1)
