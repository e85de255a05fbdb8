"""The host-speed reference workload, through the real engine."""

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


@pytest.mark.bad_input
def test_a_bad_core_is_a_clear_error(engine_bin):
    with pytest.raises(host.ReferenceError, match="--cpus"):
        host.reference(engine_bin, "4096")
