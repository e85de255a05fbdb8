"""Stacks benchmark: each TLS stack as server and as client, one connection at a time.

Run as `chainlab bench stacks` or `python -m chainlab.bench.stacks [--rounds N --seconds S]`.
Prints figures only (no pass/fail). Everything is measured in one run on 127.0.0.1 with the
ML-DSA-65 baseline (root + leaf from `chainlab-engine pki`) and X25519MLKEM768, and again with
the ECDSA P-256 baseline:

1. Rate: every client stack against every server stack (openssl-3.5, openssl-4.0, rustls,
   boringssl, go: twenty-five pairs), on each baseline, each an instrumented
   `handshake --duration-ms` against an instrumented `serve --tickets 0`, in interleaved
   rounds whose order alternates. Rate = completed handshakes / wall time of the client
   process (start-up included, the same for every pair). CPU per handshake from the kernel's
   accounting: the client process's rusage and the server's threads' schedstat run time over
   the run.
2. Instructions per handshake under valgrind's callgrind (`--callgrind`, on by default),
   which counts user-mode instructions, not seconds, so the figure does not move with the
   load of a shared machine: each stack's client against the openssl-3.5 server, and each
   stack's server driven by the openssl-3.5 client, each as the slope between two handshake
   counts (start-up removed). Then the same on an ECDSA P-256 chain, instrumented and with
   `--no-instrument` (ML-DSA signing's rejection sampling moves a server's count by more
   than the overhead): the difference is the engine's own overhead per handshake (clocks,
   byte counting, chain capture, records) over what its TLS stack does: the rustls engine is
   no slower than the OpenSSL engine's own overhead would explain when its overhead is no
   larger than the OpenSSL engine's. The rate ratios of part 1 are printed beside the
   inverse instruction ratios, what they would be were user-mode instructions all of a
   handshake's cost; wall time also holds the kernel's work (sockets, loopback TCP,
   scheduling), which callgrind does not count and which is alike for every stack.
3. ML-DSA signing and verification per implementation in process (bench/stacks_primitives.py):
   OpenSSL 3.5, OpenSSL 4.0, BoringSSL, aws-lc, liboqs and Go, through each engine's
   `primitives` subcommand.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from chainlab import engine as engines
from chainlab import processes
from chainlab.axes.stack import DEFAULT_STACK, STACKS
from chainlab.bench import stacks_primitives
from chainlab.bench.engine import (
    CALLGRIND_COUNTS,
    CALLGRIND_TIMEOUT_S,
    CLIENT_GRACE_S,
    STARTUP_TIMEOUT_S,
    free_port,
    load_average,
    measured,
    wait_listening,
)
from chainlab.bench.engine_results import (
    Run,
    callgrind_total,
    cpu_per_handshake_ms,
    pooled_rate,
    print_rounds,
    summarize_records,
)
from chainlab.errors import ChainlabError

CHAIN = "ML-DSA-65,ML-DSA-65"
GROUP = "X25519MLKEM768"
# The engines' own overhead is read on an ECDSA P-256 chain: ML-DSA signing is rejection
# sampling (a geometric number of tries), which moves a server's instructions per handshake
# by more than the overhead itself; ECDSA signing costs about the same every time.
OVERHEAD_CHAIN = "ECDSA-P256,ECDSA-P256"
# Under valgrind the Go engine runs without asynchronous preemption and on one P: the Go
# runtime signals its threads (preemption, and more with several Ps running), and callgrind's
# signal handling does not survive that (an assertion in vgCallgrind_post_signal: 1 run in 4
# of a server's 150 handshakes here with preemption off alone, none in 5 with one P too).
# Handshakes are one at a time, so one P runs them all. The Rust engines ignore both.
VALGRIND_ENV = {**os.environ, "GODEBUG": "asyncpreemptoff=1", "GOMAXPROCS": "1"}


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="chainlab-bench-stacks-") as tmp:
        bench = Bench(args, Path(tmp))
        try:
            bench.run()
        finally:
            bench.close()
    return 0


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="chainlab bench stacks", description=__doc__.split("\n\n")[0])
    # 3 rounds x 2 s x 9 pairs keeps part 1 near one minute; more, shorter rounds pair the
    # configurations more closely in time than fewer, longer ones.
    p.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default 3)")
    p.add_argument("--seconds", type=int, default=2, help="seconds per client run (default 2)")
    p.add_argument(
        "--no-callgrind",
        dest="callgrind",
        action="store_false",
        help="skip the instruction counts (part 2, a few minutes under valgrind)",
    )
    args = p.parse_args(argv)
    if args.rounds < 1 or args.seconds < 1:
        p.error("--rounds and --seconds must be at least 1")
    return args


class Bench:
    def __init__(self, args: argparse.Namespace, tmp: Path):
        self.rounds, self.seconds, self.callgrind = args.rounds, args.seconds, args.callgrind
        self.tmp = tmp
        self.binaries = {s: str(engines.stack_path(s)) for s in STACKS}
        self.infos = {s: engines.stack_info(s) for s in STACKS}
        self.servers: dict[str, tuple[subprocess.Popen, str]] = {}
        self.started: list[subprocess.Popen] = []
        self.runs = 0

    def run(self) -> None:
        pki = self.pki(CHAIN, "pki")
        print(
            f"chainlab bench stacks: {CHAIN} and {OVERHEAD_CHAIN} root + leaf, {GROUP}, "
            f"127.0.0.1, one client; {self.rounds} interleaved rounds x {self.seconds} s per pair"
        )
        for stack, info in self.infos.items():
            print(f"   {stack:12} {describe(info)}")
        print(f"load average at start: {load_average()}; {os.cpu_count()} CPUs")
        results = self.rates(CHAIN, pki)
        ecdsa = self.rates(OVERHEAD_CHAIN, self.pki(OVERHEAD_CHAIN, "pki-ecdsa-rates"))
        if self.callgrind:
            report_instructions(self.instructions(pki), results)
        stacks_primitives.run()
        for chain, res in ((CHAIN, results), (OVERHEAD_CHAIN, ecdsa)):
            failed = {k: sum(r.failed for r in v) for k, v in res.items()}
            failed = {k: n for k, n in failed.items() if n}
            if failed:
                print(f"failed handshakes, {chain}: {failed}")
        print(f"load average at end: {load_average()}")

    def rates(self, chain: str, pki: Path) -> dict[str, list[Run]]:
        """Part 1 on one baseline: every pair in interleaved rounds, then its report."""
        for stack in STACKS:
            self.servers[stack] = self.start_server(stack, pki)
        pairs = [(c, s) for c in STACKS for s in STACKS]
        results: dict[str, list[Run]] = {label(c, s): [] for c, s in pairs}
        for i in range(self.rounds):
            for c, s in pairs if i % 2 == 0 else reversed(pairs):
                results[label(c, s)].append(self.client(c, s, pki))
        for proc, _ in self.servers.values():
            processes.stop(proc)
        report_rates(results, chain)
        return results

    def start_server(self, stack: str, pki: Path) -> tuple[subprocess.Popen, str]:
        cmd = [
            self.binaries[stack], "serve", "--pki", str(pki), "--groups", GROUP,
            "--tickets", "0", "--records", str(self.tmp / f"server-{stack}.jsonl"),
        ]  # fmt: skip
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.started.append(proc)  # stopped by close() whatever happens next
        out = processes.pipe(proc.stdout)
        ready, _, _ = select.select([out], [], [], STARTUP_TIMEOUT_S)
        line = out.readline() if ready else b""
        if not line:
            raise ChainlabError(f"{stack} serve printed no ready line")
        return proc, json.loads(line)["addr"]

    def client(self, client_stack: str, server_stack: str, pki: Path) -> Run:
        self.runs += 1
        server, addr = self.servers[server_stack]
        records = self.tmp / f"client-{self.runs}.jsonl"
        cmd = [
            self.binaries[client_stack], "handshake", "--connect", addr, "--groups", GROUP,
            "--ca", str(pki / "ca.pem"), "--duration-ms", str(self.seconds * 1000),
            "--records", str(records),
        ]  # fmt: skip
        out, wall, client_cpu, server_cpu = measured(cmd, server, self.seconds + CLIENT_GRACE_S)
        if out.returncode != 0:
            raise ChainlabError(f"{client_stack} handshake failed: {out.stderr.strip()}")
        run = summarize_records(records.read_text().splitlines(), wall)
        run.client_cpu_s, run.server_cpu_s = client_cpu, server_cpu
        return run

    def pki(self, chain: str, name: str) -> Path:
        out_dir = self.tmp / name
        out = subprocess.run(
            [self.binaries[DEFAULT_STACK], "pki", "--chain", chain, "--out", str(out_dir)],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        if out.returncode != 0:
            raise ChainlabError(f"chainlab-engine pki failed: {out.stderr.strip()}")
        return out_dir

    # --- instructions (callgrind) ----------------------------------------------------------

    def instructions(self, pki: Path) -> dict[tuple[str, str, str], float]:
        """(stack, side, configuration) -> instructions per handshake; configurations:
        "baseline" (the ML-DSA chain, instrumented), "ecdsa" and "ecdsa_bare" (the ECDSA
        chain, instrumented and --no-instrument)."""
        if shutil.which("valgrind") is None:
            raise ChainlabError("valgrind not found (scripts/install-deps.sh installs it)")
        ecdsa = self.pki(OVERHEAD_CHAIN, "pki-ecdsa")
        runs = {"baseline": (pki, True), "ecdsa": (ecdsa, True), "ecdsa_bare": (ecdsa, False)}
        return {
            (stack, side, name): self.slope(stack, side, instrument, where)
            for stack in STACKS
            for side in ("client", "server")
            for name, (where, instrument) in runs.items()
        }

    def slope(self, stack: str, side: str, instrument: bool, pki: Path) -> float:
        """Instructions per handshake of one side under callgrind: (I2 - I1) / (n2 - n1),
        the other side being the openssl-3.5 engine (outside valgrind)."""
        points = []
        for n in CALLGRIND_COUNTS:
            out_file = self.tmp / f"callgrind.{pki.name}.{stack}.{side}.{instrument}.{n}"
            vg = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out_file}"]
            port = free_port()
            server_bin = self.binaries[stack if side == "server" else DEFAULT_STACK]
            client_bin = self.binaries[stack if side == "client" else DEFAULT_STACK]
            server_cmd = [
                server_bin, "serve", "--pki", str(pki), "--groups", GROUP, "--tickets", "0",
                "--listen", f"127.0.0.1:{port}", "--max-connections", str(n),
                "--records", "/dev/null",
            ]  # fmt: skip
            client_cmd = [
                client_bin, "handshake", "--connect", f"127.0.0.1:{port}", "--groups", GROUP,
                "--ca", str(pki / "ca.pem"), "--count", str(n), "--timeout-ms", "60000",
                "--records", "/dev/null",
            ]  # fmt: skip
            if side == "server":
                server_cmd = [*vg, *server_cmd, *([] if instrument else ["--no-instrument"])]
            else:
                client_cmd = [*vg, *client_cmd, *([] if instrument else ["--no-instrument"])]
            server = subprocess.Popen(
                server_cmd,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                env=VALGRIND_ENV,
            )
            try:
                wait_listening(port, CALLGRIND_TIMEOUT_S)
                done = subprocess.run(
                    client_cmd,
                    capture_output=True,
                    text=True,
                    timeout=CALLGRIND_TIMEOUT_S,
                    env=VALGRIND_ENV,
                )
                if done.returncode != 0:
                    raise ChainlabError(f"{stack} {side} callgrind run: {done.stderr.strip()}")
                server.wait(timeout=CALLGRIND_TIMEOUT_S)
            finally:
                processes.stop(server)
            points.append((n, callgrind_total(out_file)))
        (n1, i1), (n2, i2) = points
        return (i2 - i1) / (n2 - n1)

    def close(self) -> None:
        for proc in reversed(self.started):
            processes.stop(proc)


def describe(info: dict) -> str:
    if "openssl_build" in info:
        b = info["openssl_build"]
        return f"OpenSSL {b['openssl_version']} (patch {b['patch_sha256_16']})"
    return ", ".join(f"{k} {v}" for k, v in sorted(info.get("build", {}).items()))


def label(client: str, server: str) -> str:
    return f"{client} -> {server}"


def report_rates(results: dict[str, list[Run]], chain: str) -> None:
    print()
    print(
        f"1. Full handshakes per wall second, {chain}, client stack -> server stack (both "
        "instrumented)"
    )
    print_rounds(
        {k: k for k in results},
        results,
        lambda r: f"{r.rate:8.1f}",
        lambda rs: f"{pooled_rate(rs):8.1f}",
    )
    print("   as a matrix (rows: client stack; columns: server stack):")
    print(f"   {'':14}" + "".join(f"{s:>14}" for s in STACKS))
    for c in STACKS:
        cells = "".join(f"{pooled_rate(results[label(c, s)]):14.1f}" for s in STACKS)
        print(f"   {c:14}{cells}")
    base = pooled_rate(results[label(DEFAULT_STACK, DEFAULT_STACK)])
    for s in STACKS:
        if s == DEFAULT_STACK:
            continue
        both = pooled_rate(results[label(s, s)]) / base
        as_server = pooled_rate(results[label(DEFAULT_STACK, s)]) / base
        as_client = pooled_rate(results[label(s, DEFAULT_STACK)]) / base
        print(
            f"   rate ratio {s} / {DEFAULT_STACK}: both sides {both:.3f}, as server "
            f"{as_server:.3f}, as client {as_client:.3f}"
        )
    print("   CPU per handshake, ms (client process / server process, all rounds):")
    for key, runs in results.items():
        client, server = cpu_per_handshake_ms(runs)
        print(f"     {key:30} {client:7.3f} / {server:7.3f}")


def report_instructions(
    ins: dict[tuple[str, str, str], float], results: dict[str, list[Run]]
) -> None:
    print()
    print("2. Instructions per handshake (valgrind callgrind, user mode; independent of load)")
    print(f"   {CHAIN} root + leaf, instrumented:")
    print(f"   {'':14}{'client':>12}{'server':>12}{'both':>12}")
    for s in STACKS:
        c, v = ins[(s, "client", "baseline")], ins[(s, "server", "baseline")]
        print(f"   {s:14}{c / 1e6:11.3f}M{v / 1e6:11.3f}M{(c + v) / 1e6:11.3f}M")
    print(
        f"   the engine's own overhead, {OVERHEAD_CHAIN}: instrumented minus --no-instrument "
        "(clocks, byte counting, chain capture, record), per handshake:"
    )
    print(f"   {'':14}{'client':>12}{'server':>12}")
    over = {
        (s, side): ins[(s, side, "ecdsa")] - ins[(s, side, "ecdsa_bare")]
        for s in STACKS
        for side in ("client", "server")
    }
    for s in STACKS:
        print(f"   {s:14}{over[(s, 'client')] / 1e3:11.1f}k{over[(s, 'server')] / 1e3:11.1f}k")
    rate_base = pooled_rate(results[label(DEFAULT_STACK, DEFAULT_STACK)])
    base = {side: ins[(DEFAULT_STACK, side, "baseline")] for side in ("client", "server")}
    base_both = base["client"] + base["server"]
    for s in STACKS:
        if s == DEFAULT_STACK:
            continue
        both = ins[(s, "client", "baseline")] + ins[(s, "server", "baseline")]
        ratios = {
            side: over[(s, side)] / over[(DEFAULT_STACK, side)]
            if over[(DEFAULT_STACK, side)]
            else float("nan")
            for side in ("client", "server")
        }
        print(
            f"   {s}: engine overhead / {DEFAULT_STACK} engine's: client {ratios['client']:.3f}, "
            f"server {ratios['server']:.3f} (at most ~1: no slower than the OpenSSL engine's "
            "own overhead explains)"
        )
        print(
            f"     all instructions / {DEFAULT_STACK}: {both / base_both:.3f} (client "
            f"{ins[(s, 'client', 'baseline')] / base['client']:.3f}, server "
            f"{ins[(s, 'server', 'baseline')] / base['server']:.3f}); rate ratio both sides "
            f"{pooled_rate(results[label(s, s)]) / rate_base:.3f}, against the inverse "
            f"instruction ratio {base_both / both:.3f} (user-mode work only; the kernel's "
            "per-handshake work is alike for every stack)"
        )


if __name__ == "__main__":
    try:
        sys.exit(main())
    except ChainlabError as err:
        print(f"chainlab bench stacks: error: {err}", file=sys.stderr)
        sys.exit(2)
