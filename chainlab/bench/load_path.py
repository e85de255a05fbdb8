"""`chainlab bench load`'s capacity over a path: the same server measured over an emulated
50 ms round trip (no rate limit) and a 100 ms one losing 1 % each way, as on loopback, per
server model. A pool of blocking
workers holds each connection for its round trips, so the pool, not the CPU, sets its pace;
event loops keep the core busy whatever the round trip.

Set-up: client and server network namespaces joined by chainlab-link (needs root; the
forwarder on the generator's core, never the server's); the server pinned to SERVER_CPU as
on loopback; the rustls generator (the cheaper client) offered OVERLOAD x the derived
capacity with PATH_SLOTS connections at most, verification off.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from chainlab import engine as engine_binary
from chainlab import processes
from chainlab.network import emulated_link
from chainlab.runner import records
from chainlab.runner.load_counters import cores_time

# 50 ms of round trip, nothing else: the path's own limit is its latency. Then 100 ms with 1 %
# loss each way (seeded), whose retransmissions (200 ms minimum RTO) lengthen some
# connections' lives: more connections in flight, the same CPU per handshake.
PATHS = {
    "50 ms": {"name": "wan50", "delay_ms": 25},
    "100 ms, 1 % loss": {"name": "lossy", "delay_ms": 50, "loss": 0.01, "seed": 1},
}
# Slots enough for ~3 x 800/s x ~0.4 s of a lossy connection's life, so the path does not cap
# the offer.
PATH_SLOTS = 1024
# Handshakes before the schedule: the server's and the generator's first connections.
WARMUP = 20


def available() -> str | None:
    """None when the path can be measured here, else why not."""
    return None if os.geteuid() == 0 else "needs root (network namespaces)"


def capacities(server: str, tmp: Path, name: str, model: str, workers: int, rate: float,
               seconds: int, cpus: tuple[str, str], group: str) -> dict:  # fmt: skip
    """`capacity` over each of PATHS, by its label."""
    return {
        label: capacity(
            server,
            tmp,
            f"{name}-{profile['name']}",
            profile,
            model,
            workers,
            rate,
            seconds,
            cpus,
            group,
        )  # fmt: skip
        for label, profile in PATHS.items()
    }


def capacity(binary: str, tmp: Path, name: str, profile: dict, model: str, workers: int,
             rate: float, seconds: int, cpus: tuple[str, str], group: str) -> dict:  # fmt: skip
    """Achieved handshakes per second over the path `profile` and the server core's busy
    share, of the `binary` under `model`; `name` tells its files apart."""
    server_cpu, client_cpu = cpus
    with emulated_link(
        profile, f"bench-{name}"[:40], calibrate=False, forwarder_cpus={int(client_cpu)}
    ) as link:
        srv_rec = tmp / f"server-path-{name}.jsonl"
        err = tmp / f"server-path-{name}.stderr"
        with err.open("wb") as errf:
            server = processes.spawn(
                link.server_cmd(
                    [binary, "serve", "--pki", str(tmp / "pki"), "--groups", group,
                     "--listen", f"{link.server_addr}:0", "--cpus", server_cpu,
                     "--server-model", model, "--workers", str(workers),
                     "--records", str(srv_rec)]
                ),
                subprocess.PIPE, errf,
            )  # fmt: skip
        try:
            ready = processes.wait_ready(server, 20.0, err)
            rec = tmp / f"load-path-{name}.jsonl"
            gen = str(engine_binary.stack_path("rustls"))
            head = [gen, "--connect", ready["addr"], "--ca", str(tmp / "pki" / "ca.pem"),
                    "--groups", group, "--cpus", client_cpu, "--no-verify"]  # fmt: skip
            # Warm-ups on their own, so the core's busy share covers the schedule alone (20
            # handshakes over the path are 2 s of an idle server).
            subprocess.run(
                link.client_cmd([head[0], "handshake", *head[1:], "--count", str(WARMUP),
                                 "--records", str(tmp / f"warm-path-{name}.jsonl")]),
                check=True, timeout=120, capture_output=True,
            )  # fmt: skip
            before = cores_time([int(server_cpu)])
            subprocess.run(
                link.client_cmd(
                    [head[0], "load", *head[1:],
                     "--rate", f"{rate:.3f}", "--duration-ms", str(seconds * 1000),
                     "--max-in-flight", str(PATH_SLOTS), "--records", str(rec)]
                ),
                check=True, timeout=seconds + 120, capture_output=True,
            )  # fmt: skip
            after = cores_time([int(server_cpu)])
        finally:
            processes.stop_group(server)
    got = records.read(rec)
    gen_rec = got[-1]
    ok = sum(1 for r in got if r.get("side") == "client" and not r.get("warmup")
             and r["outcome"] == "ok")  # fmt: skip
    busy = (after[0] - before[0]) / (after[1] - before[1]) if before and after else float("nan")
    return {
        "path_capacity": ok / (gen_rec["wall_ns"] / 1e9),
        "path_server_core_busy": busy,
        "path_saturated": gen_rec["saturated"],
    }
