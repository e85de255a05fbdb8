"""The engine benchmark's parsing and arithmetic (the benchmark itself only prints)."""

import json
import math

import pytest

from chainlab.bench import engine
from chainlab.bench import engine_results as results
from chainlab.errors import ChainlabError

S_TIME_OUTPUT = """Collecting connection statistics for 3 seconds
****************************************************************

1686 connections in 0.92s; 1832.61 connections/user sec, bytes read 0
1686 connections in 4 real seconds, 0 bytes read per connection
"""


def test_parse_s_time_reads_the_real_seconds_line():
    assert results.parse_s_time(S_TIME_OUTPUT) == 1686


def test_parse_s_time_without_the_line_names_what_s_time_said():
    with pytest.raises(ChainlabError, match="no 'connections in' line: ERROR"):
        results.parse_s_time("", "ERROR\nconnect:errno=111")


def record(seq, outcome="ok", warmup=False, total_ns=2_000_000):
    return json.dumps({"seq": seq, "warmup": warmup, "outcome": outcome, "total_ns": total_ns})


def test_summarize_records_counts_measured_ok_handshakes_only():
    lines = [
        record(0, warmup=True, total_ns=9_000_000),
        record(1, total_ns=1_000_000),
        record(2, outcome="failed", total_ns=5),
        record(3, total_ns=3_000_000),
        "",
    ]
    run = results.summarize_records(lines, wall_s=0.5)
    assert (run.handshakes, run.failed) == (2, 1)
    assert run.latencies_ns == [1_000_000, 3_000_000]
    assert run.rate == 4.0
    assert results.mean_ms(run.latencies_ns) == 2.0


def test_pooled_rate_weights_rounds_by_their_wall_time():
    runs = [results.Run(100, 0, 1.0, []), results.Run(300, 0, 3.0, [])]
    assert results.pooled_rate(runs) == 100.0
    assert results.pooled_rate([]) == 0.0


@pytest.mark.parametrize("argv", [["--rounds", "0"], ["--seconds", "0"]])
@pytest.mark.bad_input
def test_parse_args_rejects_empty_runs(argv, capsys):
    with pytest.raises(SystemExit) as exit_info:
        engine.parse_args(argv)
    assert exit_info.value.code == 2
    assert argv[0] in capsys.readouterr().err


def test_latency_ratio_pools_all_handshakes_and_tolerates_empty_runs():
    slow = [results.Run(2, 0, 1.0, [3_000_000, 3_000_000])]
    fast = [results.Run(1, 0, 1.0, [2_000_000]), results.Run(1, 0, 1.0, [2_000_000])]
    assert results.latency_ratio(slow, fast) == 1.5
    assert math.isnan(results.latency_ratio([results.Run(0, 1, 1.0, [])], fast))


def test_cpu_per_handshake_divides_by_completed_handshakes():
    runs = [results.Run(200, 0, 1.0, [], client_cpu_s=0.1, server_cpu_s=0.3)]
    assert results.cpu_per_handshake_ms(runs) == (0.5, 1.5)
