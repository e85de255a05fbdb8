"""The host-speed reference workload, through the real engine."""

import os

import pytest

from chainlab.runner import host

pytestmark = pytest.mark.usefixtures("serial")  # measures: runs alone


def test_reference_times_a_fixed_workload_on_the_given_cores(engine_bin):
    a = host.reference(engine_bin, "0")
    b = host.reference(engine_bin, None)
    for r in (a, b):
        assert r["wall_ns"] > 0 and r["cpu_ns"] > 0
        assert r["cpu_ns"] <= r["wall_ns"] * 1.05  # one thread: CPU cannot exceed wall time
    assert a["cpus"] == "0" and b["cpus"] is None
    # Unpinned: once on each CPU this process may use, at once; the figures are their mean.
    own = sorted(os.sched_getaffinity(0))
    assert a["per_cpu_ns"] is None
    assert sorted(map(int, b["per_cpu_ns"])) == own
    each = list(b["per_cpu_ns"].values())  # [wall ns, CPU ns] each
    assert b["wall_ns"] == pytest.approx(sum(w for w, _ in each) / len(each), abs=1)
    assert b["cpu_ns"] == pytest.approx(sum(c for _, c in each) / len(each), abs=1)


@pytest.mark.bad_input
def test_a_bad_core_is_a_clear_error(engine_bin):
    with pytest.raises(host.ReferenceError, match="--cpus"):
        host.reference(engine_bin, "4096")
