"""The server's CPU per scenario run (chainlab.runner.server_cpu): the process read from a
/proc tree, only when the ready line's pid runs the engine the runner started, and the
visits summed with what the records account for."""

import os

import pytest

from chainlab.runner import server_cpu

pytestmark = pytest.mark.usefixtures("serial")  # measures: runs alone


def fake_proc(tmp_path, pid, exe, run_times):
    task = tmp_path / str(pid) / "task"
    for i, ns in enumerate(run_times):
        (task / str(pid + i)).mkdir(parents=True)
        (task / str(pid + i) / "schedstat").write_text(f"{ns} 0 0\n")
    os.symlink(exe, tmp_path / str(pid) / "exe")
    return tmp_path


def test_the_process_is_read_only_when_it_runs_the_engine_started(tmp_path):
    engine = tmp_path / "chainlab-engine"
    engine.write_text("")
    proc = fake_proc(tmp_path / "proc", 4242, engine, [1_000, 250, 5])
    assert server_cpu.engine_pid({"pid": 4242}, str(engine), proc) == 4242
    assert server_cpu.process_cpu_ns(4242, proc) == 1_255
    other = tmp_path / "someone-else"
    other.write_text("")
    assert server_cpu.engine_pid({"pid": 4242}, str(other), proc) is None
    assert server_cpu.engine_pid({"pid": 7}, str(engine), proc) is None
    assert server_cpu.engine_pid({}, str(engine), proc) is None
    assert server_cpu.process_cpu_ns(None, proc) is None
    assert server_cpu.process_cpu_ns(7, proc) is None


def test_visits_sum_and_an_unknown_visit_makes_the_process_unknown():
    lines = [
        {"side": "server", "conn_cpu_ns": 900},
        {"side": "server", "conn_cpu_ns": None},
        {"side": "server_thread", "cpu_ns": 950, "conn_cpu_ns": 900, "wait_cpu_ns": 30},
    ]
    c = server_cpu.ServerCpu()
    c.add_visit(1_000, lines)
    c.add_visit(500, [{"side": "server", "conn_cpu_ns": 480}])
    assert c.columns() == {
        "server_process_cpu_ns": 1_500,
        "server_conn_cpu_ns": 1_380,
        "server_threads_cpu_ns": 950,
        "server_wait_cpu_ns": 30,
    }
    c.add_visit(None, lines)
    assert c.columns() == dict.fromkeys(server_cpu.COLUMNS)
    # A server without thread accounts: its process and connections only.
    bare = server_cpu.ServerCpu()
    bare.add_visit(100, [{"side": "server", "conn_cpu_ns": 97}])
    assert bare.columns()["server_threads_cpu_ns"] is None
    assert server_cpu.ServerCpu().columns() == dict.fromkeys(server_cpu.COLUMNS)


def test_the_rest_is_itemized_from_the_accounts_or_not_at_all():
    assert server_cpu.rest(1_000, 900, 950, 30) == {
        "waiting": 30,
        "threads_rest": 20,
        "other": 50,
    }
    unknown = server_cpu.rest(1_000, 900, float("nan"), float("nan"))
    assert all(v != v for v in unknown.values())
