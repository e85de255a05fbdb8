"""The link benchmark's arithmetic and report, and (with root) one tiny real run."""

import argparse
import json
import re

import pytest

from chainlab.bench import link as bench

pytestmark = pytest.mark.usefixtures("serial")  # measures: runs alone


def route(rtts, rounds_rtt, hs=(), rounds_hs=(), mbit=(100.0,)):
    r = bench.Route(link=None, stack=None)
    r.rtt_ms, r.round_rtt_ms = list(rtts), list(rounds_rtt)
    r.handshake_ms, r.round_handshake_ms = list(hs), list(rounds_hs)
    r.mbit = list(mbit)
    return r


def test_handshake_latencies_keep_measured_successes_only():
    lines = [
        json.dumps({"warmup": True, "outcome": "ok", "total_ns": 9_000_000}),
        json.dumps({"warmup": False, "outcome": "ok", "total_ns": 1_500_000}),
        json.dumps({"warmup": False, "outcome": "failed", "total_ns": None}),
        "",
    ]
    assert bench.handshake_latencies(lines) == [1.5]


def test_added_is_the_median_of_paired_round_differences():
    d = route([1.0, 1.0, 2.0], [1.0, 1.2, 5.0])
    lk = route([1.1, 1.2, 2.1], [1.1, 1.3, 5.3])
    got = bench.added(d, lk, "rtt")
    assert got[0] == 1.0 and got[1] == 1.2
    assert got[2] == pytest.approx(0.1)  # diffs 0.1, 0.1, 0.3
    assert bench.added(route([], []), lk, "rtt") is None


def test_quantile_interpolates():
    assert bench.p10([4.0, 1.0, 3.0, 2.0, 5.0]) == pytest.approx(1.4)
    assert bench.p10([2.0]) == 2.0
    assert bench.p10([1.0, 2.0]) == pytest.approx(1.1)


def test_report_names_targets_and_what_was_not_measured():
    args = argparse.Namespace(rounds=2)
    d = route([0.02], [0.02, 0.02], mbit=[30000.0])
    lk = route([0.05], [0.05, 0.06], mbit=[900.0])
    text = bench.report({"direct": d, "link": lk}, args, "engine missing", "fifo", {})
    assert "TLS handshake" in text and "not measured: engine missing" in text
    assert re.search(r"TCP round trip.*0\.020\s+0\.050\s+\+0\.035", text)
    assert ">= 200 Mbit/s: met" in text
    d.handshake_ms, d.round_handshake_ms = [1.0], [1.0, 1.0]
    lk.handshake_ms, lk.round_handshake_ms = [1.3], [1.3, 1.3]
    lk.mbit = [150.0]
    text = bench.report({"direct": d, "link": lk}, args, None, "fifo", {})
    assert "<= 0.2 ms added: MISSED" in text and ">= 200 Mbit/s: MISSED" in text
    assert "+0.300 +0.300" in text
    assert re.search(r"10th percentile ms\s+1\.000\s+1\.300\s+\+0\.300", text)


@pytest.mark.bad_input
def test_bad_arguments_are_refused():
    with pytest.raises(SystemExit):
        bench.parse_args(["--rounds", "0"])
    with pytest.raises(SystemExit):
        bench.parse_args(["--bulk-seconds", "60"])


@pytest.mark.netns
@pytest.mark.slow
def test_a_tiny_real_run_prints_every_figure(capsys, netns_root, engine_bin):
    argv = ["--rounds", "2", "--pings", "20", "--handshakes", "5", "--bulk-seconds", "0.3"]
    assert bench.main(argv) == 0
    out = capsys.readouterr().out
    rtt = re.search(r"TCP round trip.*?([\d.]+)\s+([\d.]+)\s+([+-][\d.]+)", out)
    assert rtt, out
    assert 0 < float(rtt.group(1)) < 5 and 0 < float(rtt.group(2)) < 5
    hs = re.search(r"TLS handshake, median ms \(n=10\)\s+([\d.]+)\s+([\d.]+)", out)
    assert hs, out
    mbit = re.search(r"TCP throughput, median Mbit/s\s+(\d+)\s+(\d+)", out)
    assert mbit and int(mbit.group(2)) > 0, out
    shaped = re.search(r"shaped to 200 Mbit/s: TCP bulk\s+([\d.]+)", out)
    assert shaped and 150 < float(shaped.group(1)) <= 210, out
