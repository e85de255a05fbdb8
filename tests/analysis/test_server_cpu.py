"""The server's CPU accounted (chainlab.analysis.server_cpu): shares of the process's CPU
from the stored columns, known answers and a kept store."""

import math
import shutil
from pathlib import Path

import pandas as pd

from chainlab.analysis.analyze import analyze
from chainlab.analysis.server_cpu import accounted
from chainlab.report import build_report

STORE = Path(__file__).parents[1] / "data" / "stores" / "v12-tiny.duckdb"


def test_shares_of_the_process_with_and_without_thread_accounts():
    scen = pd.DataFrame(
        {
            "scenario_id": ["a", "b", "c", "old"],
            "server_process_cpu_ns": [1_000, 2_000, 100, None],
            "server_conn_cpu_ns": [985, 1_900, 90, None],
            "server_threads_cpu_ns": [995, 1_990, None, None],
            "server_wait_cpu_ns": [5, 40, None, None],
        }
    )
    got = accounted(scen).set_index("scenario_id")
    assert list(got.index) == ["a", "b", "c"]  # a store without readings: no row
    a = got.loc["a"]
    assert math.isclose(a["conn_share"], 0.985) and a["accounted"]
    assert math.isclose(a["wait_share"], 0.005)
    assert math.isclose(a["threads_rest_share"], 0.005)
    assert math.isclose(a["other_share"], 0.005)
    b = got.loc["b"]
    assert math.isclose(b["conn_share"], 0.95) and not b["accounted"]
    assert math.isclose(b["wait_share"] + b["threads_rest_share"] + b["other_share"], 0.05)
    c = got.loc["c"]
    assert math.isclose(c["conn_share"], 0.9) and math.isnan(c["other_share"])
    assert accounted(pd.DataFrame({"scenario_id": ["x"]})).empty


def test_a_kept_store_accounts_for_its_servers_cpu_and_the_report_says_so(tmp_path):
    store = tmp_path / STORE.name
    shutil.copy(STORE, store)
    a = analyze(store)
    c = a.server_cpu
    assert len(c) == 3
    # Measured: the connections' CPU is part of the process's, and most of it.
    assert (c["conn_share"] <= 1).all() and (c["conn_share"] > 0.9).all(), c
    parts = c["conn_share"] + c["wait_share"] + c["threads_rest_share"] + c["other_share"]
    assert (parts >= 0.999).all(), c
    out = build_report(store, tmp_path / "report", analysis=a)
    md = (out / "report.md").read_text()
    assert "## Server CPU accounted" in md
    assert "Do the connections' records account for the server's CPU?" in md
