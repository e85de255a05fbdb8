"""The CPU-coverage benchmark's arithmetic (the benchmark itself only prints)."""

import math

from chainlab.bench import cpu


def test_coverage_splits_the_process_cpu_into_connections_and_the_rest():
    lines = [
        {"side": "server", "conn_cpu_ns": 600},
        {"side": "server", "conn_cpu_ns": 300},
        {"side": "server", "conn_cpu_ns": None},
        {"side": "server_thread", "cpu_ns": 950, "conn_cpu_ns": 900, "wait_cpu_ns": 30},
    ]
    c = cpu.coverage(lines, serving_ns=1000, startup_ns=50, perf_ns=1100)
    assert (c.connections, c.null_cpu, c.conn_ns) == (3, 1, 900)
    assert math.isclose(c.of_serving, 0.9) and math.isclose(c.of_perf, 900 / 1100)
    assert c.rest() == {
        "waiting (accept's poll, epoll; Go: all)": 30,
        "serving threads' remainder": 20,
        "other threads (writer, main, runtime)": 50,
    }
    # The connections and the rest make up the process's CPU while serving.
    assert c.conn_ns + sum(c.rest().values()) == c.serving_ns


def test_perf_task_clock_is_read_from_perf_stats_csv_output():
    text = "# started on Fri\n\n1491.20,msec,task-clock,1491203806,100.00,0.599,CPUs utilized\n"
    assert cpu.perf_task_clock_ns(text) == 1_491_200_000
    assert cpu.perf_task_clock_ns("<not counted>,msec,task-clock,0,0.00,,\n") is None
    assert cpu.perf_task_clock_ns("") is None


def test_a_server_without_accounts_leaves_the_rest_whole():
    c = cpu.coverage([{"side": "server", "conn_cpu_ns": 90}], 100, 5, None)
    assert c.of_perf is None
    assert c.rest() == {"not itemized (no server_thread account)": 10}
