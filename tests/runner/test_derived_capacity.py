"""The capacity step's first offer (chainlab.runner.load._derived_capacity): server cores over
the mean whole-connection CPU of the single-connection phase's measured connections, from
the server's records once they are written (the server writes them a turn after each close),
never from its warm-ups, and the fallback only when no measured connection succeeded."""

import json
import threading
import time
from types import SimpleNamespace

import pytest

from chainlab.engine import RECORD_SCHEMA
from chainlab.runner import load

pytestmark = pytest.mark.usefixtures("serial")  # measures: runs alone


def server_line(conn_id, cpu_ns, outcome="ok"):
    rec = {"schema": RECORD_SCHEMA, "side": "server", "conn_id": conn_id, "outcome": outcome}
    rec["conn_cpu_ns"] = cpu_ns
    return json.dumps(rec) + "\n"


def visit(tmp_path, client):
    path = tmp_path / "server.jsonl"
    return SimpleNamespace(
        plan=SimpleNamespace(load=SimpleNamespace(server_cores=2)),
        results=SimpleNamespace(client=client),
        server_records_path=path,
    )


CLIENT = [
    {"conn_id": "w0", "warmup": True, "outcome": "ok"},
    {"conn_id": "a", "outcome": "ok"},
    {"conn_id": "b", "outcome": "ok"},
    {"conn_id": "c", "outcome": "failed"},
]


def test_late_records_are_waited_for_and_warm_ups_left_out(tmp_path):
    ex = visit(tmp_path, CLIENT)
    # On file when the phase ends: the warm-up (38 ms: lazy initialisation) and one record.
    ex.server_records_path.write_text(server_line("w0", 38_000_000) + server_line("a", 400_000))

    def late():
        time.sleep(0.3)
        with ex.server_records_path.open("a") as f:
            f.write(server_line("c", 100_000, "failed") + server_line("b", 600_000))

    writer = threading.Thread(target=late)
    writer.start()
    got = load._derived_capacity(ex)
    writer.join()
    # 2 cores / mean(0.4 ms, 0.6 ms) = 4000/s: neither the warm-up nor the failure counts.
    assert abs(got - 4000.0) < 1e-6


def test_no_measured_success_falls_back(tmp_path):
    ex = visit(tmp_path, [{"conn_id": "c", "outcome": "failed"}])
    ex.server_records_path.write_text(server_line("c", 100_000, "failed"))
    assert load._derived_capacity(ex) == load.FALLBACK_CAPACITY
