"""Servers kept from one visit to the next (chainlab.runner.servers): the pool's limits, and
a kept engine's sync, which ends each visit with every one of its connections recorded."""

from __future__ import annotations

import subprocess
import sys

import pytest

from chainlab import processes
from chainlab.campaign import load
from chainlab.runner import records, servers

from .conftest import REPO

IDLE = [sys.executable, "-c", "import time; time.sleep(60)"]


def idle_server(tmp_path, n: int) -> servers.KeptServer:
    """A stand-in kept server: a process that waits."""
    proc = processes.spawn(IDLE, subprocess.PIPE, subprocess.DEVNULL)
    return servers.KeptServer(proc, tmp_path / f"{n}.jsonl", tmp_path / f"{n}.err", {}, None)


def test_the_pool_keeps_the_servers_used_last_within_its_limits(tmp_path, monkeypatch):
    monkeypatch.setattr(servers, "MAX_KEPT", 2)
    pool = servers.ServerPool(tmp_path, budget_bytes=1 << 40)
    kept = [idle_server(tmp_path, n) for n in range(3)]
    try:
        for n, server in enumerate(kept):
            pool.keep(("serve", str(n)), server)
        # The one used longest ago is stopped past MAX_KEPT; the others wait for a visit.
        assert kept[0].proc.poll() is not None
        assert pool.take(("serve", "0")) is None
        assert pool.take(("serve", "1")) is kept[1] and pool.reused == 1
        # Taken: the caller's now, no longer the pool's.
        assert pool.take(("serve", "1")) is None
        pool.keep(("serve", "1"), kept[1])
        # A kept server that has exited is stopped and forgotten, not handed out.
        kept[2].proc.kill()
        kept[2].proc.wait()
        assert pool.take(("serve", "2")) is None
        # Over the memory budget, only the last one used stays.
        pool.keep(("serve", "2"), idle_server(tmp_path, 4))
        pool.budget_bytes = 1
        pool.keep(("serve", "1"), pool.take(("serve", "1")))
        assert pool.take(("serve", "2")) is None
    finally:
        pool.close()
    assert all(s.proc.poll() is not None for s in kept)


def test_a_server_that_never_answers_a_sync_is_given_up(tmp_path):
    server = idle_server(tmp_path, 0)
    try:
        assert not servers.sync(server, timeout_s=0.3)  # SIGUSR1 ends a plain Python process
    finally:
        processes.stop_group(server.proc)
    assert not servers.sync(server)


def test_only_a_scenario_whose_records_say_everything_keeps_its_server():
    scenarios = load(REPO / "campaigns" / "interop.toml").scenarios.values()
    kept = {s.scenario_id for s in scenarios if s.keeps_server}
    assert kept
    for s in scenarios:
        if s.scenario_id in kept:
            assert not s.handshake.quic and s.handshake.stacks[1] != "go"
        else:
            assert s.handshake.quic or s.handshake.stacks[1] == "go"


@pytest.mark.parametrize("model", ["threads", "event"])
def test_a_kept_engine_syncs_each_visits_connections(tmp_path, engine_bin, pki_cache, model):
    from chainlab.runner import pki

    served = pki.ensure(engine_bin, ("ML-DSA-44", "ML-DSA-44"), 1)
    rec, err = tmp_path / "server.jsonl", tmp_path / "server.stderr"
    argv = [str(engine_bin), "serve", "--pki", str(served), "--listen", "127.0.0.1:0",
            "--server-model", model, "--records", str(rec)]  # fmt: skip
    with err.open("wb") as errf:
        proc = processes.spawn(argv, subprocess.PIPE, errf)
    try:
        ready = processes.wait_ready(proc, 30.0, err)
        kept = servers.KeptServer(proc, rec, err, ready, ready.get("pid"))
        for visit, count in enumerate((5, 3)):
            client = tmp_path / f"client-{visit}.jsonl"
            subprocess.run(
                [str(engine_bin), "handshake", "--connect", ready["addr"],
                 "--ca", str(served / "ca.pem"), "--warmup", "1", "--count", str(count),
                 "--seq-start", str(10 * visit), "--records", str(client)],
                check=True, capture_output=True, timeout=120,
            )  # fmt: skip
            assert servers.sync(kept)
            # Every connection of the visit is in the file once it has answered, and only
            # the visit's after the line it began at.
            got = records.read(rec, after=kept.lines)
            kept.lines = records.count_lines(rec)
            mine = {r["conn_id"] for r in records.read(client)}
            assert len(mine) == count + 1
            assert {r["conn_id"] for r in got if r["side"] == "server"} == mine
        assert proc.poll() is None
    finally:
        processes.stop_group(proc)
    # Its threads' accounts come as it stops.
    assert any(r["side"] == "server_thread" for r in records.read(rec, after=kept.lines))
