"""Other processes' load as a run starts (chainlab.runner.host.foreign_load) and the latency
spread it makes (chainlab.model.host_speed.contention_cv), which the run-time estimate takes
as the least a handshake's spread is (issue #57: the estimate on a busy host)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import pytest

from chainlab.campaign import load
from chainlab.model import estimate, host_speed, run_estimate
from chainlab.model.cost import CostModel
from chainlab.runner import host

from .conftest import REPO


def stat_text(busy_idle: dict[int, tuple[int, int]]) -> str:
    """A /proc/stat with, per CPU, `busy` ticks of user time and `idle` of idle."""
    lines = ["cpu  0 0 0 0 0 0 0 0 0 0"]
    for cpu, (busy, idle) in busy_idle.items():
        lines.append(f"cpu{cpu} {busy} 0 0 {idle} 0 0 0 0 0 0")
    return "\n".join(lines) + "\n"


def test_the_busiest_cpus_share_of_the_window_is_the_load(tmp_path, monkeypatch):
    stat = tmp_path / "stat"
    stat.write_text(stat_text({0: (120, 80), 1: (10, 90)}))
    # Busy: everything but idle and iowait (user here); total: every field.
    assert host._cpu_times(stat) == {"cpu0": (120, 200), "cpu1": (10, 100)}
    assert host._cpu_times(tmp_path / "missing") == {}
    cpus = sorted(os.sched_getaffinity(0))
    first = {c: (100, 100) for c in cpus}
    # Over the window the last CPU ran other processes 50 of 100 ticks, the others none; a
    # tick is the counters' resolution, not counted.
    second = {c: (150 if c == cpus[-1] else 100, 200) for c in cpus}
    readings = iter([first, second])
    monkeypatch.setattr(
        host, "_cpu_times", lambda _stat: {f"cpu{c}": v for c, v in next(readings).items()}
    )
    assert host.foreign_load(0.0, stat) == pytest.approx(49 / 100)
    # One tick of 30 (0.3 s at 100 Hz) is no load.
    one_tick = {c: (101 if c == cpus[-1] else 100, 130) for c in cpus}
    readings = iter([first, one_tick])
    assert host.foreign_load(0.0, stat) == 0.0
    # No kernel counters: no reading.
    monkeypatch.setattr(host, "_cpu_times", lambda _stat: {})
    assert host.foreign_load(0.0, stat) is None


@contextlib.contextmanager
def spinning(cpu: int) -> Iterator[None]:
    """Another process busy on `cpu` (at most 3 s) while the block runs."""
    spin = (
        f"import os, time\nos.sched_setaffinity(0, {{{cpu}}})\nend = time.monotonic() + 3\n"
        "print('spinning', flush=True)\nwhile time.monotonic() < end:\n    pass\n"
    )
    p = subprocess.Popen([sys.executable, "-c", spin], stdout=subprocess.PIPE, text=True)
    try:
        # Read once it spins on its CPU: a busy host's Python start can outlast a fixed sleep.
        assert p.stdout is not None and p.stdout.readline() == "spinning\n"
        yield
    finally:
        p.kill()
        p.wait()


def test_a_process_busy_on_a_cpu_shows_as_that_cpus_share():
    with spinning(sorted(os.sched_getaffinity(0))[-1]):
        assert host.foreign_load(0.3) > 0.8


def test_a_watch_takes_its_own_time_off_the_cpu_it_works_on(tmp_path, monkeypatch):
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        pytest.skip("one CPU: nothing to pin to")
    first = {c: (100, 100) for c in cpus}
    # Over 30 ticks this process ran 12 on the CPU it works on, which was busy 20: 8 ticks
    # of other load less PINNED_TICKS; the last CPU ran other processes 5 (less one tick).
    second = {c: (120 if c == cpus[0] else 105 if c == cpus[-1] else 100, 130) for c in cpus}
    readings = iter([first, second])
    monkeypatch.setattr(
        host, "_cpu_times", lambda _stat: {f"cpu{c}": v for c, v in next(readings).items()}
    )
    own = iter([0, 12 * 1_000_000_000 // os.sysconf("SC_CLK_TCK")])
    monkeypatch.setattr(host, "_own_ns", lambda: next(own))
    watch = host.LoadWatch.begin(tmp_path / "stat")
    try:
        assert watch.pinned == cpus[0]
    finally:
        busy = watch.end(0.0)
    assert busy == pytest.approx((8 - host.PINNED_TICKS) / 30)
    # Its own time alone is no load.
    second[cpus[0]], second[cpus[-1]] = (112, 130), (100, 130)
    readings, own = iter([first, second]), iter([0, 12 * 1_000_000_000 // 100])
    monkeypatch.setattr(os, "sysconf", lambda _name: 100)
    assert host.LoadWatch.begin(tmp_path / "stat").end(0.0) == 0.0

    # Pinning refused: its own time is taken off every CPU, never read as another's load.
    def refused(*_args):
        raise PermissionError("not allowed")

    monkeypatch.setattr(os, "sched_setaffinity", refused)
    second[cpus[0]], second[cpus[-1]] = (100, 130), (112, 130)
    readings, own = iter([first, second]), iter([0, 12 * 1_000_000_000 // 100])
    watch = host.LoadWatch.begin(tmp_path / "stat")
    assert watch.pinned is None and watch.end(0.0) == 0.0


def test_a_watch_pins_every_thread_until_released():
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        pytest.skip("one CPU: nothing to pin to")
    stop = threading.Event()
    before = threading.Thread(target=stop.wait)
    before.start()
    try:
        watch = host.LoadWatch.begin()
        during = threading.Thread(target=stop.wait)
        during.start()
        try:
            tids = [threading.get_native_id(), before.native_id, during.native_id]
            assert [os.sched_getaffinity(t) for t in tids] == [{cpus[0]}] * 3
        finally:
            watch.end(0.0)
        # Each thread has its CPUs again; one started meanwhile, the process's.
        assert [os.sched_getaffinity(t) for t in tids] == [set(cpus)] * 3
        watch.release()  # again: nothing to do
    finally:
        stop.set()
        before.join()
        during.join()


def test_a_neighbour_shows_while_this_process_works():
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        pytest.skip("one CPU: nothing to pin to")
    with spinning(cpus[-1]):
        watch = host.LoadWatch.begin()
        end = time.monotonic() + 0.2
        while time.monotonic() < end:  # the run's own work meanwhile
            pass
        assert watch.end(0.3) > 0.8


def test_this_process_working_through_the_window_is_no_load(serial):
    watch = host.LoadWatch.begin()
    end = time.monotonic() + 0.25
    while time.monotonic() < end:
        pass
    assert watch.end(0.3) < 0.1


def test_the_spread_is_none_idle_or_always_busy_and_largest_half_busy():
    assert host_speed.contention_cv(0.0) == 0.0 == host_speed.contention_cv(1.0)
    assert host_speed.contention_cv(0.5) == pytest.approx(0.2)
    assert host_speed.contention_cv(0.1) < host_speed.contention_cv(0.3) < 0.2
    model = CostModel({}, {}, "test")
    assert host_speed.with_contention(model, None) is model
    assert host_speed.with_contention(None, 0.5) is None
    assert host_speed.with_contention(model, 0.5).noise_cv == pytest.approx(0.2)


def test_a_busy_host_raises_the_adaptive_counts_and_the_estimate_keeps_what_it_took():
    scenarios = list(load(REPO / "campaigns" / "quick.toml").scenarios.values())
    quiet = host_speed.with_contention(CostModel({}, {}, "test"), 0.0)
    busy = host_speed.with_contention(CostModel({}, {}, "test"), 0.5)
    raised = 0
    for s in (s for s in scenarios if s.sampling.mode == "adaptive"):
        base = estimate.network_cost(s, quiet).loopback_ms
        sd = {m.noise_cv: estimate.latency_sd_ms(estimate.view(s), base, m) for m in (quiet, busy)}
        # Without references: in proportion within a spell, with the square root beyond.
        spell = host_speed.CONTENTION_SPELL_MS
        load_sd = busy.noise_cv * min(base, spell) * max(base / spell, 1.0) ** 0.5
        assert sd[busy.noise_cv] >= max(sd[0.0], load_sd)
        raised += sd[busy.noise_cv] > sd[0.0]
    assert raised > 0
    before = run_estimate.run(scenarios, quiet, load_read=True)
    after = run_estimate.run(scenarios, busy, load_read=True)
    assert after.expected_s > before.expected_s
    assert after.to_json()["noise_cv"] == pytest.approx(0.2) and before.to_json()["noise_cv"] == 0
    # Reading the load is part of the run's start: what its window lasts beyond the rest.
    unread = run_estimate.run(scenarios, quiet)
    assert before.phases["start"] - unread.phases["start"] == pytest.approx(
        run_estimate.LOAD_WINDOW_LEFT_S
    )
    assert 0 < run_estimate.LOAD_WINDOW_LEFT_S < host_speed.LOAD_WINDOW_S


def test_the_run_and_validate_price_with_the_load_read_now(monkeypatch):
    from chainlab.runner import primitives_cache

    cached = CostModel({}, {}, "test", host_ns=40e6)
    monkeypatch.setattr(primitives_cache, "cached_model", lambda: cached)
    monkeypatch.setattr(host, "foreign_load", lambda: 0.5)
    model, read, at = primitives_cache.estimate_model()
    assert read and model.noise_cv == pytest.approx(0.2) and at is None
    assert model.host_ns == 40e6  # no reading: the cache's own speed
    monkeypatch.setattr(host, "foreign_load", lambda: None)
    # At the host's speed now: a reading twice as fast as the cache's primitives.
    model, read, at = primitives_cache.estimate_model(lambda: {"cpu_ns": 20_000_000})
    assert not read and model.noise_cv == 0.0
    assert at == 20e6 and model.host_ns == pytest.approx(20e6)

    def broken():
        raise host.ReferenceError("the reference workload took over 60 s")

    model, _, at = primitives_cache.estimate_model(broken)
    assert at is None and model.host_ns == 40e6
