"""`chainlab bench load`: the load generator's headroom and the ML-DSA-65 baseline's capacity
on one server core, measured side by side in one run.

Set-up (outside every timed part): an ML-DSA-65 root + leaf hierarchy, X25519MLKEM768,
a server pinned to core 0 for each stack (`chainlab-engine`, `chainlab-rustls`,
`chainlab-boring`, `chainlab-go` with GOMAXPROCS = its one core) and server model: thread per
connection (4 workers) and event-driven (one event loop); every client pinned to core 1.
Each server gets every figure below, so all are compared within one run.

1. Derived capacity: one connection at a time (`handshake --count`), 1 / the server's mean
   whole-connection CPU (and the handshake span's, beside it).
2. Measured capacity: `load` offered 3 x the derived figure for --seconds, verification off
   (so the server, not the generator, sets the pace): successful handshakes per second.
3. Closed-loop saturation from OpenSSL's own tool: N parallel `openssl s_time -new` clients
   for --seconds against the same server: their connections over the wall time from the
   first start to the last exit (s_time runs past -time to finish its last connection, and
   prints whole seconds; dividing by -time overstated its rate by up to a quarter).
4. Generator headroom: the rate one generator core sustains = attempts started per second of
   the generator process's CPU, from the load runs with verification on and off, beside the
   server's measured capacity (targets: >= 1.5x with verification, >= 2x without); for the
   OpenSSL generator and, side by side, the rustls one (`chainlab-rustls load`).
5. The schedule kept below capacity: `load` offered a quarter of the derived figure, the
   achieved start rate against the offered one and the p99 scheduling lag (the figures the
   engine's tests leave to this benchmark, since a noisy host moves them).
6. Capacity over a path (bench/load_path.py; needs root): the same server in a network
   namespace behind an emulated 50 ms round trip, and a 100 ms one losing 1 % each way,
   against loopback's.

Prints figures only (no pass/fail).

    chainlab bench load [-- --seconds S] [--clients N]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from chainlab import engine as engine_binary
from chainlab import processes
from chainlab.analysis import load_capacity
from chainlab.bench import load_path
from chainlab.bench.engine import GROUP, OPENSSL, STIME_CONF, bench_pki
from chainlab.bench.engine_results import parse_s_time
from chainlab.runner import records

CHAIN = "ML-DSA-65,ML-DSA-65"
SERVER_CPU, CLIENT_CPU = "0", "1"
# Each server model with its workers: 4 threads keep a core busy through each connection's
# waits on loopback; one event loop per core serves any number of connections.
# Each server stack under each model, with its workers.
SERVERS = tuple(
    (stack, model, workers)
    for stack in ("openssl-3.5", "rustls", "boringssl", "go")
    for model, workers in (("threads", 4), ("event", 1))
)
# Single-connection handshakes for the derived figure: a mean CPU within ~1 %.
SINGLE_COUNT = 400
# The load run's offer, as a multiple of the derived capacity: surely past saturation.
OVERLOAD = 3.0
# The schedule run's offer, as a fraction of the derived capacity: surely below saturation.
UNDERLOAD = 0.25
TARGET_VERIFY, TARGET_NO_VERIFY = 1.5, 2.0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="chainlab bench load", description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=int, default=5, help="length of each load and s_time run")
    ap.add_argument("--clients", type=int, default=8, help="parallel s_time clients")
    args = ap.parse_args(argv)
    if args.seconds < 1 or args.clients < 1:
        ap.error("--seconds and --clients must be at least 1")
    if (os.cpu_count() or 1) < 2:
        print("chainlab bench load: needs 2 CPUs (server on one, clients on the other)")
        return 0
    eng = str(engine_binary.path())
    with tempfile.TemporaryDirectory(prefix="chainlab-bench-load-") as tmp_name:
        tmp = Path(tmp_name)
        bench_pki(eng, tmp, CHAIN)
        figures = {}
        for stack, model, workers in SERVERS:
            key = f"{stack} {model}"
            srv = str(engine_binary.stack_path(stack))
            srv_rec = tmp / f"server-{stack}-{model}.jsonl"
            err = tmp / f"server-{stack}-{model}.stderr"
            with err.open("wb") as errf:
                server = processes.spawn(
                    [srv, "serve", "--pki", str(tmp / "pki"), "--groups", GROUP,
                     "--cpus", SERVER_CPU, "--server-model", model, "--workers", str(workers),
                     "--records", str(srv_rec)],
                    subprocess.PIPE, errf,
                )  # fmt: skip
            try:
                ready = processes.wait_ready(server, 20.0, err)
                figures[key] = measure(eng, ready["addr"], tmp, srv_rec, args)
            finally:
                processes.stop_group(server)
            if load_path.available() is None:
                figures[key]["paths"] = load_path.capacities(
                    srv, tmp, f"{stack}-{model}", model, workers,
                    OVERLOAD * figures[key]["derived"], args.seconds,
                    (SERVER_CPU, CLIENT_CPU), GROUP,
                )  # fmt: skip
    report(figures, args)
    return 0


def _client(eng: str, addr: str, tmp: Path, *extra: str) -> list[str]:
    return [eng, *extra[:1], "--connect", addr, "--ca", str(tmp / "pki" / "ca.pem"),
            "--groups", GROUP, "--cpus", CLIENT_CPU, *extra[1:]]  # fmt: skip


def measure(eng: str, addr: str, tmp: Path, srv_rec: Path, args) -> dict:
    out: dict = {}
    # 1. One connection at a time.
    before = records.count_lines(srv_rec)
    single = tmp / "single.jsonl"
    subprocess.run(
        _client(eng, addr, tmp, "handshake", "--count", str(SINGLE_COUNT), "--warmup", "20",
                "--records", str(single)),
        check=True, timeout=600,
    )  # fmt: skip
    srv = [r for r in records.read(srv_rec)[before:] if r["outcome"] == "ok"][20:]
    out["conn_cpu_ms"] = statistics.mean(r["conn_cpu_ns"] for r in srv) / 1e6
    out["hs_cpu_ms"] = statistics.mean(r["cpu_ns"] for r in srv) / 1e6
    out["derived"] = 1e3 / out["conn_cpu_ms"]
    out["derived_hs"] = 1e3 / out["hs_cpu_ms"]
    # 2 and 4. Open loop past saturation, verification off and on, from each generator.
    generators = [("", eng), ("rustls_", str(engine_binary.stack_path("rustls")))]
    for (name, gen_eng), verify in itertools.product(generators, (False, True)):
        rec = tmp / f"load-{name}{verify}.jsonl"
        extra = [] if verify else ["--no-verify"]
        subprocess.run(
            _client(gen_eng, addr, tmp, "load", "--rate", f"{OVERLOAD * out['derived']:.3f}",
                    "--duration-ms", str(args.seconds * 1000), "--warmup", "20",
                    "--records", str(rec), *extra),
            check=True, timeout=args.seconds + 120,
        )  # fmt: skip
        got = records.read(rec)
        gen = got[-1]
        ok = sum(1 for r in got if r.get("side") == "client" and not r.get("warmup")
                 and r["outcome"] == "ok")  # fmt: skip
        key = name + ("verify" if verify else "no_verify")
        out[f"capacity_{key}"] = ok / (gen["wall_ns"] / 1e9)
        out[f"generator_per_core_{key}"] = gen["started"] / (gen["process_cpu_ns"] / 1e9)
        out[f"generator_busy_{key}"] = gen["process_cpu_ns"] / gen["wall_ns"]
        out[f"saturated_{key}"] = gen["saturated"]
    # 5. Open loop below capacity: is the schedule kept?
    rec = tmp / "load-below.jsonl"
    offered = UNDERLOAD * out["derived"]
    subprocess.run(
        _client(eng, addr, tmp, "load", "--rate", f"{offered:.3f}",
                "--duration-ms", str(args.seconds * 1000), "--records", str(rec)),
        check=True, timeout=args.seconds + 120,
    )  # fmt: skip
    kept = [r for r in records.read(rec)
            if r.get("side") == "client" and r.get("sched_lag_ns") is not None]  # fmt: skip
    started = sorted(r["start_unix_ns"] for r in kept)
    lags = sorted(r["sched_lag_ns"] for r in kept)
    span_s = (started[-1] - started[0]) / 1e9
    out["below_offered"] = offered
    out["below_achieved"] = (len(started) - 1) / span_s if span_s > 0 else float("nan")
    out["below_p99_lag_ms"] = lags[min(len(lags) - 1, len(lags) * 99 // 100)] / 1e6
    # 3. Closed loop: N s_time clients at once.
    conf = tmp / "s_time.cnf"
    conf.write_text(STIME_CONF)
    port = addr.rsplit(":", 1)[1]
    env = {**os.environ, "OPENSSL_CONF": str(conf)}
    # s_time runs past -time (it finishes its last connection) and prints whole seconds, so
    # its rate is its connections over the wall time from the first start to the last exit.
    t_start = time.monotonic()
    procs = [
        subprocess.Popen(
            [
                str(OPENSSL),
                "s_time",
                "-connect",
                f"127.0.0.1:{port}",
                "-new",
                "-time",
                str(args.seconds),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            preexec_fn=lambda: os.sched_setaffinity(0, {int(CLIENT_CPU)}),
        )  # fmt: skip
        for _ in range(args.clients)
    ]
    total = 0
    for p in procs:
        stdout, stderr = p.communicate(timeout=args.seconds + 60)
        total += parse_s_time(stdout, stderr)
    out["s_time"] = total / (time.monotonic() - t_start)
    return out


# A generator whose one core offers less than this multiple of what it achieved was the
# limit of its run: the server's capacity is at least the figure, not exactly it.
GENERATOR_BOUND = 1.1


def _bound(achieved: float, generator_per_core: float) -> str:
    """A note when the generator, not the server, set the pace of a run."""
    if generator_per_core < GENERATOR_BOUND * achieved:
        return "  (the generator's core was the limit: the server does at least this)"
    return ""


def report(figures: dict, args) -> None:
    for (stack, model, workers), f in zip(SERVERS, figures.values(), strict=True):
        cap = f["capacity_no_verify"]
        lines = [
            "chainlab bench load: ML-DSA-65 root + leaf, X25519MLKEM768; server "
            f"{stack} on core {SERVER_CPU} (--server-model {model}, {workers} worker(s)), "
            f"clients on core {CLIENT_CPU}",
            f"  server CPU per connection, one at a time: {f['conn_cpu_ms']:.3f} ms whole "
            f"connection, {f['hs_cpu_ms']:.3f} ms handshake span",
            f"  derived capacity (1 / CPU per connection):      {f['derived']:8.1f} /s per core "
            f"(handshake span only: {f['derived_hs']:.1f})",
            f"  measured capacity (open loop, --no-verify):     {cap:8.1f} /s   "
            f"measured / derived = {cap / f['derived']:.3f}"
            + _bound(cap, f["generator_per_core_no_verify"]),
            f"  measured capacity (open loop, verification on): {f['capacity_verify']:8.1f} /s",
            f"  measured capacity (rustls generator, --no-verify): "
            f"{f['capacity_rustls_no_verify']:8.1f} /s"
            + _bound(f["capacity_rustls_no_verify"], f["generator_per_core_rustls_no_verify"]),
            f"  openssl s_time -new x {args.clients} (closed loop):       {f['s_time']:8.1f} /s"
            f"   measured / s_time = {cap / f['s_time']:.3f}",
            "  generator headroom (attempts per generator CPU-second / server capacity):",
        ]
        for name, label in (("", "OpenSSL"), ("rustls_", "rustls")):
            for key, what, target in (
                ("verify", "verification on: ", TARGET_VERIFY),
                ("no_verify", "verification off:", TARGET_NO_VERIFY),
            ):
                per = f[f"generator_per_core_{name}{key}"]
                lines.append(
                    f"    {label:8} {what} {per:8.1f} /s per core = {per / cap:.2f}x  "
                    f"(target >= {target}x)"
                )  # fmt: skip
        for label, p in f.get("paths", {}).items():
            lines.append(
                f"  over a {label} path (rustls generator, --no-verify): "
                f"{p['path_capacity']:8.1f} /s = {p['path_capacity'] / cap:.3f} of loopback's;"
                f" server core {p['path_server_core_busy']:.0%} busy"
                + (
                    ""
                    if p["path_server_core_busy"] >= load_capacity.SERVER_BUSY
                    else "  (not the server's limit: its core was not busy)"
                )
            )
        if "paths" not in f:
            lines.append(f"  over a path: not measured ({load_path.available()})")
        lines.append(
            f"  schedule below capacity (offered {f['below_offered']:.1f} /s): achieved "
            f"{f['below_achieved']:.2f} /s = "
            f"{f['below_achieved'] / f['below_offered']:.4f} of offered, "
            f"p99 scheduling lag {f['below_p99_lag_ms']:.3f} ms"
        )
        print("\n".join(lines))
    for stack in dict.fromkeys(stack for stack, _, _ in SERVERS):
        threads, event = figures[f"{stack} threads"], figures[f"{stack} event"]
        print(
            f"  {stack}: event / threads, measured capacity on loopback: "
            f"{event['capacity_no_verify'] / threads['capacity_no_verify']:.3f}"
        )
    print(json.dumps(_rounded(figures), sort_keys=True))


def _rounded(value):
    """Figures to 4 decimals, nested tables (per path) included."""
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    return round(value, 4) if isinstance(value, float) else value
