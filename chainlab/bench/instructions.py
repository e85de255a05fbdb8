"""Instruction-count benchmark: the baseline handshake's instructions per side as the runner
counts them ([measure] instructions = "callgrind"; chainlab.runner.instructions), how much
they move between repetitions, and what counting costs in wall time per handshake.

Run as `chainlab bench instructions [-- --rounds R --count N]`. Prints figures only.
The rounds run twice: with the system's random bytes, and with both sides' random bytes
seeded ([measure] random = "seeded": the engines' --random-seed, the same seed each round),
where every round counts the same handshakes.
`-- --stores A.duckdb B.duckdb` instead compares two runs of one campaign with [measure]
(e.g. campaigns/signature-placement-instructions.toml a day apart): per scenario, each run's
mean instructions per handshake and side, their run-to-run difference, and each scenario's
server instructions over the campaign baseline's in both runs, with that ratio's difference.

The baseline is the paper's: ML-DSA-65 root and leaf, X25519MLKEM768, on loopback, the
OpenSSL 3.5 engine on both sides. Each of R rounds starts a server and runs one client under
callgrind (the runner's own command lines: one warm-up attempt, then N counted), and reads
each connection's count from its dump. Per side: the mean per round, the spread of those
means over the rounds ((max − min) / mean; a deterministic code path repeats to the
instruction, ML-DSA signing's rejection sampling moves the server's), and the coefficient
of variation per handshake within a round. Cost: the counted client's wall time per attempt
(valgrind's start included) against the native handshake's mean latency, measured the same
round on a native server.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import tempfile
import time
import tomllib
from pathlib import Path

import chainlab
from chainlab import engine as engine_binary
from chainlab import processes
from chainlab.runner import instructions, pki

CHAIN = ("ML-DSA-65", "ML-DSA-65")
GROUP = "X25519MLKEM768"
# Native handshakes timed per round for the cost's denominator.
NATIVE_COUNT = 200
# The random bytes of the counted handshakes, each mode its own rounds; "seeded" gives both
# sides this --random-seed every round.
RANDOM_MODES = ("system", "seeded")
SEED = 1


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="chainlab bench instructions")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--count", type=int, default=10)
    p.add_argument("--stores", nargs=2, type=Path, metavar=("A", "B"))
    args = p.parse_args(argv)
    if args.stores:
        compare_runs(*args.stores)
        return 0
    eng = engine_binary.path()
    pki_dir = pki.ensure(eng, CHAIN, 1)
    by_mode = {}
    for mode in RANDOM_MODES:
        rounds = []
        for r in range(args.rounds):
            with tempfile.TemporaryDirectory(prefix="chainlab-bench-instr-") as tmp:
                rounds.append(one_round(eng, pki_dir, Path(tmp), args.count, r, mode))
        by_mode[mode] = rounds
    print()
    print(f"chainlab bench instructions: {' / '.join(CHAIN)}, {GROUP}, loopback, openssl-3.5")
    print(f"  {instructions.source()}; {args.rounds} rounds of {args.count} counted handshakes")
    for mode, rounds in by_mode.items():
        report(mode, rounds)
    return 0


def _serve(argv: list[str], tmp: Path, name: str):
    err = tmp / f"{name}.stderr"
    with err.open("wb") as errf:
        proc = processes.spawn(argv, subprocess.PIPE, errf)
    ready = processes.wait_ready(proc, instructions.READY_TIMEOUT_S, err)
    return proc, ready["addr"]


def one_round(eng: Path, pki_dir: Path, tmp: Path, count: int, r: int, mode: str) -> dict:
    serve = [str(eng), "serve", "--pki", str(pki_dir), "--listen", "127.0.0.1:0",
             "--groups", GROUP, "--io-timeout-ms", str(instructions.TIMEOUT_MS),
             "--server-model", "threads", "--workers", "1"]  # fmt: skip

    def client(addr: str, n: int, warm: int, records: Path) -> list[str]:
        timeout = str(instructions.TIMEOUT_MS)
        return [str(eng), "handshake", "--connect", addr, "--ca", str(pki_dir / "ca.pem"),
                "--groups", GROUP, "--count", str(n), "--warmup", str(warm),
                "--timeout-ms", timeout, "--records", str(records)]  # fmt: skip

    # Native: the handshake's latency on this host now.
    proc, addr = _serve([*serve, "--records", str(tmp / "native-server.jsonl")], tmp, "native")
    try:
        native_rec = tmp / "native.jsonl"
        subprocess.run(client(addr, NATIVE_COUNT, 5, native_rec), check=True, timeout=600)
    finally:
        processes.stop_group(proc)
    lines = [json.loads(x) for x in native_rec.read_text().splitlines()]
    native_ms = statistics.fmean(x["total_ns"] for x in lines if not x["warmup"]) / 1e6

    # Counted, with the runner's wrappers.
    srv_out, cli_out = tmp / "server.out", tmp / "client.out"
    seeded = ["--random-seed", str(SEED)] if mode == "seeded" else []
    proc, addr = _serve(
        [*instructions.wrapper(srv_out), *serve, *seeded,
         "--records", str(tmp / "server.jsonl")],
        tmp, "counted",
    )  # fmt: skip
    try:
        start = time.monotonic()
        subprocess.run(
            [*instructions.wrapper(cli_out), *client(addr, count, 1, tmp / "client.jsonl"),
             *seeded],
            check=True, timeout=3600, capture_output=True,
        )  # fmt: skip
        wall = time.monotonic() - start
    finally:
        processes.stop_group(proc)
    client_counts = instructions.dumps(cli_out)[1:]  # the warm-up first
    server_counts = instructions.dumps(srv_out)[1:]
    print(f"{mode} random, round {r + 1}: {count} counted handshakes in {wall:.1f} s", flush=True)
    return {
        "client": client_counts,
        "server": server_counts,
        "counted_s_per_handshake": wall / (count + 1),
        "native_ms": native_ms,
    }


def report(mode: str, rounds: list[dict]) -> None:
    print(f"  {mode} random bytes:")
    for side in ("server", "client"):
        means = [statistics.fmean(r[side]) for r in rounds]
        cvs = [statistics.pstdev(r[side]) / statistics.fmean(r[side]) for r in rounds]
        mean = statistics.fmean(means)
        spread = (max(means) - min(means)) / mean
        print(
            f"    {side}: {mean / 1e6:.3f} M instructions per handshake; per round "
            + ", ".join(f"{m / 1e6:.3f} M" for m in means)
            + f"; spread over rounds {spread:.3%}; per-handshake CV "
            + ", ".join(f"{c:.2%}" for c in cvs)
        )
    counted = [r["counted_s_per_handshake"] for r in rounds]
    native = [r["native_ms"] for r in rounds]
    ratio = statistics.fmean(counted) * 1000 / statistics.fmean(native)
    print(
        f"    cost: {statistics.fmean(counted):.2f} s of wall time per counted handshake "
        f"(valgrind's start included; per round "
        + ", ".join(f"{c:.2f}" for c in counted)
        + f") against {statistics.fmean(native):.3f} ms native: x{ratio:,.0f}"
    )


# A side whose count per handshake varies less than this within a run is a deterministic
# code path (to the instruction but for first-use effects); ML-DSA signing varies ~40 %.
DETERMINISTIC_CV = 0.01


def _means(path: Path):
    """Per scenario and side: mean instructions per counted handshake, its CV; the
    campaign's baseline (from the stored campaign file); and the random bytes the counted
    handshakes drew ('system' before store version 10)."""
    with chainlab.open(path) as st:
        rows = st.table("instruction_samples")
        runs = st.table("runs")
    rows = rows[~rows["warmup"] & (rows["outcome"] == "ok")]
    g = rows.groupby("scenario_id")
    out = {}
    for side in ("server", "client"):
        col = g[f"{side}_instructions"]
        out[side] = (col.mean(), col.std(ddof=0) / col.mean())
    campaign = tomllib.loads(runs.iloc[-1]["campaign_toml"])
    random = sorted(set(rows["random"])) if "random" in rows else ["system"]
    return out, campaign.get("campaign", {}).get("baseline"), "/".join(random)


def compare_runs(a: Path, b: Path) -> None:
    (ma, base, random_a), (mb, _, random_b) = _means(a), _means(b)
    print(f"chainlab bench instructions: {a.name} against {b.name}")
    print(f"  random bytes of the counted handshakes: {random_a} / {random_b}")
    print("  per scenario: mean instructions per handshake in each run, B / A − 1, and the")
    print("  server's over the baseline's in each run with B / A − 1; 'det.' a side whose")
    print(f"  per-handshake CV is under {DETERMINISTIC_CV:.0%} in both runs")
    worst, worst_ratio = 0.0, 0.0
    sids = sorted(set(ma["server"][0].index) & set(mb["server"][0].index))
    has_base = base in ma["server"][0].index and base in mb["server"][0].index
    for sid in sids:
        parts = []
        for side in ("server", "client"):
            (mean_a, cv_a), (mean_b, cv_b) = ma[side], mb[side]
            det = cv_a[sid] < DETERMINISTIC_CV and cv_b[sid] < DETERMINISTIC_CV
            diff = mean_b[sid] / mean_a[sid] - 1
            if det:
                worst = max(worst, abs(diff))
            parts.append(
                f"{side} {mean_a[sid] / 1e6:.3f} M / {mean_b[sid] / 1e6:.3f} M ({diff:+.4%}"
                + (", det." if det else f", CV {cv_a[sid]:.0%} / {cv_b[sid]:.0%}")
                + ")"
            )
        if has_base and sid != base:
            ra = ma["server"][0][sid] / ma["server"][0][base]
            rb = mb["server"][0][sid] / mb["server"][0][base]
            worst_ratio = max(worst_ratio, abs(rb / ra - 1))
            parts.append(f"server / baseline {ra:.4g} / {rb:.4g} ({rb / ra - 1:+.4%})")
        print(f"  {sid}: " + "; ".join(parts))
    print(f"  largest run-to-run difference of a deterministic side: {worst:.4%}")
    if has_base:
        print(
            "  largest run-to-run difference of a scenario's server instructions over the "
            f"baseline's: {worst_ratio:.4%}"
        )
