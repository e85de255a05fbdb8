"""The path benchmark's reading of perf and its ratios (the benchmark itself only prints)."""

import math

import pytest

from chainlab.bench import path

PERF = (
    "# started on Fri Nov 27\n\n"
    "612.50,msec,task-clock,612500000,100.00,0.204,CPUs utilized\n"
    "1830,,context-switches,612500000,100.00,2.988,K/sec\n"
    "9150,,raw_syscalls:sys_enter,612500000,100.00,,\n"
)


def test_perf_stat_csv_is_read_by_event(tmp_path):
    f = tmp_path / "perf.csv"
    f.write_text(PERF)
    assert path._read_perf(f) == {
        "task-clock": 612.5,
        "context-switches": 1830.0,
        "raw_syscalls:sys_enter": 9150.0,
    }
    f.write_text(PERF.replace("1830,,context-switches", "<not counted>,,context-switches"))
    assert math.isnan(path._read_perf(f)["context-switches"])
    f.write_text(PERF.splitlines()[2] + "\n")
    with pytest.raises(RuntimeError, match="context-switches, raw_syscalls:sys_enter"):
        path._read_perf(f)


def test_the_report_gives_each_path_against_loopback(capsys):
    row = {"handshakes": 300, "attempts": 300, "cpu_ms": 1.0, "switches": 4.0,
           "syscalls": 30.0, "conn_cpu_ms": 0.97, "conn_share": 0.97, "client_cpu_ms": 0.8,
           "client_switches": 3.0, "client_syscalls": 40.0}  # fmt: skip
    slow = {**row, "cpu_ms": 1.2, "switches": 6.0, "client_cpu_ms": 1.4, "client_switches": 13}
    loaded = {**row, "client_cpu_ms": NAN, "client_switches": NAN, "client_syscalls": NAN}
    path.report(
        {
            ("loopback", "one at a time"): row,
            ("rtt50-10M", "one at a time"): slow,
            ("loopback", "load 300/s"): loaded,
            ("rtt50", "load 300/s"): {**loaded, "cpu_ms": 1.1},
        }
    )
    out = capsys.readouterr().out
    assert (
        "one at a time, rtt50-10M - loopback: server CPU +0.200 ms (1.200x), context switches "
        "+2.00, system calls +0.0; client CPU +0.600 ms, context switches +10.00, system "
        "calls +0.0" in out
    )
    # Under load the client is not counted (the generator's CPU is no handshake's alone).
    assert (
        "load 300/s, rtt50 - loopback: server CPU +0.100 ms (1.100x), context switches +0.00, "
        "system calls +0.0\n" in out
    )


NAN = float("nan")
