"""Engine benchmark: handshake rate against OpenSSL's own tools, and instrumentation overhead.

Run as `chainlab bench engine` or `python -m chainlab.bench.engine [--rounds N --seconds S]`.
Prints figures only (no pass/fail). Everything compared is measured in one run, in
interleaved rounds whose order alternates, on 127.0.0.1 with one client at a time:

1. Rate: `openssl s_server` + `openssl s_time -new` against `chainlab-engine serve` +
   `chainlab-engine handshake --duration-ms` (client verification on, and off), all with an
   ML-DSA-65 root and leaf from `chainlab-engine pki` and X25519MLKEM768. Rate = completed
   handshakes / wall time of the client process (start-up included, the same way for both;
   s_time's own "real seconds" are whole seconds, too coarse for a ratio).
2. Overhead: the engine with its instrumentation (CPU clocks, byte counting, records) on
   both sides against `--no-instrument` on both sides: mean client latency (total_ns). A
   third, identical `--no-instrument` configuration is an A/A control: how far two runs of
   the same thing differ on this machine right now, the noise floor the ratio is read against.

3. Instructions per handshake (`--callgrind`, on by default): the same four programs under
   valgrind's callgrind, which counts instructions, not seconds, so the figure does not
   move with the load of a shared machine. Each program runs twice with different handshake
   counts and the slope (difference of instructions over difference of handshakes) removes
   start-up. Clients are measured against one uninstrumented `s_server`; servers against the
   engine client. The server figures keep one real source of variation: ML-DSA signing is
   rejection sampling (about 5 tries on average for ML-DSA-65, a geometric count), so a
   server slope over 150 handshakes still moves by a few per cent from run to run.

4. QUIC beside TCP: the engine's client and server over `--transport quic` (instrumented, and
   `--no-instrument` on both sides), interleaved with the instrumented TCP pair: rates, the
   QUIC / TCP ratio, and QUIC's instrumentation overhead (datagram counter, clocks, records).

Both parts also give CPU per handshake from the kernel's accounting, the same way for every
configuration: the client process's CPU (rusage of the waited-for child) and the server
process's CPU over the run (sum of its threads' schedstat run time). CPU time is far less
disturbed than wall time by other load on a shared machine.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from chainlab import engine as engine_binary
from chainlab import processes
from chainlab.bench.engine_results import (
    Run,
    callgrind_total,
    parse_s_time,
    report_instructions,
    report_overhead,
    report_rates,
    report_transports,
    summarize_records,
)
from chainlab.errors import ChainlabError

OPENSSL = engine_binary.REPO / "engine" / ".openssl" / "bin" / "openssl"
CHAIN = "ML-DSA-65,ML-DSA-65"
GROUP = "X25519MLKEM768"

# s_time has no option for key-exchange groups. OpenSSL's default client offers key shares
# for both X25519MLKEM768 and X25519 (two key generations per handshake); this configuration
# gives s_time's client the single X25519MLKEM768 share the engine's client sends.
STIME_CONF = f"""openssl_conf = openssl_init
[openssl_init]
ssl_conf = ssl_module
[ssl_module]
system_default = chainlab_bench_client
[chainlab_bench_client]
Groups = {GROUP}
"""


# Bounds on waiting for a server to come up and for a client to finish beyond its duration;
# they only decide when a broken run is abandoned, never what is measured.
STARTUP_TIMEOUT_S = 10.0
# Handshake counts of the two callgrind runs per program (the slope between them removes
# start-up): 30 and 150 keep each run under ~15 s at valgrind's ~50x slow-down while 120
# handshakes of difference average out most of ML-DSA signing's rejection-sampling spread.
CALLGRIND_COUNTS = (30, 150)
# s_time runs for whole seconds, not counts: 2 and 8 s under callgrind give ~60 and ~250.
CALLGRIND_STIME_SECONDS = (2, 8)
CALLGRIND_TIMEOUT_S = 180.0
CLIENT_GRACE_S = 30.0


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="chainlab-bench-engine-") as tmp:
        bench = Bench(args, Path(tmp))
        try:
            bench.run()
        finally:
            bench.close()
    return 0


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="chainlab bench engine", description=__doc__.split("\n\n")[0])
    # 4 rounds x 2 s keeps the whole benchmark near one minute; more, shorter rounds pair
    # the compared configurations more closely in time than fewer, longer ones.
    p.add_argument("--rounds", type=int, default=4, help="interleaved rounds (default 4)")
    p.add_argument(
        "--seconds", type=int, default=2, help="seconds per client run (default 2, minimum 1)"
    )
    p.add_argument(
        "--no-callgrind",
        dest="callgrind",
        action="store_false",
        help="skip the instruction counts (part 3, about a minute under valgrind)",
    )
    args = p.parse_args(argv)
    if args.rounds < 1:
        p.error(f"--rounds {args.rounds}: must be at least 1")
    if args.seconds < 1:
        p.error(f"--seconds {args.seconds}: must be at least 1 (s_time counts whole seconds)")
    return args


class Bench:
    def __init__(self, args: argparse.Namespace, tmp: Path):
        self.rounds = args.rounds
        self.seconds = args.seconds
        self.callgrind = args.callgrind
        self.tmp = tmp
        self.engine = str(engine_binary.path())
        if not OPENSSL.is_file():
            raise ChainlabError(
                f"OpenSSL CLI not found at {OPENSSL}; build it with engine/openssl/build.sh"
            )
        self.processes: list[subprocess.Popen] = []
        self.runs = 0

    def run(self) -> None:
        info = engine_binary.info()["openssl_build"]
        pki = self.tmp / "pki"
        self.check([self.engine, "pki", "--chain", CHAIN, "--out", str(pki)], "chainlab-engine pki")
        conf = self.tmp / "s_time.cnf"
        conf.write_text(STIME_CONF)
        ca = str(pki / "ca.pem")

        s_server, s_server_port = self.start_s_server(pki)
        engine, engine_addr = self.start_engine_server(pki, instrument=True)
        plain, plain_addr = self.start_engine_server(pki, instrument=False)
        quic, quic_addr = self.start_engine_server(pki, instrument=True, transport="quic")
        quic_plain, quic_plain_addr = self.start_engine_server(
            pki, instrument=False, transport="quic"
        )

        print(
            f"chainlab bench engine: OpenSSL {info['openssl_version']} "
            f"(patch {info['patch_sha256_16']}), {CHAIN} root + leaf, {GROUP}, 127.0.0.1, "
            f"one client; {self.rounds} interleaved rounds x {self.seconds} s per run"
        )
        print(f"load average at start: {load_average()}; {os.cpu_count()} CPUs")

        rates = self.interleave(
            {
                "s_time": lambda: self.s_time(s_server, s_server_port, conf),
                "engine_verify": lambda: self.engine_client(engine, engine_addr, ["--ca", ca]),
                "engine_noverify": lambda: self.engine_client(engine, engine_addr, ["--no-verify"]),
            }
        )
        overhead = self.interleave(
            {
                "instrumented": lambda: self.engine_client(engine, engine_addr, ["--ca", ca]),
                "no_instrument": lambda: self.engine_client(
                    plain, plain_addr, ["--ca", ca, "--no-instrument"]
                ),
                "no_instrument_again": lambda: self.engine_client(
                    plain, plain_addr, ["--ca", ca, "--no-instrument"]
                ),
            }
        )
        on_quic = ["--ca", ca, "--transport", "quic"]
        transports = self.interleave(
            {
                "tcp": lambda: self.engine_client(engine, engine_addr, ["--ca", ca]),
                "quic": lambda: self.engine_client(quic, quic_addr, on_quic),
                "quic_no_instrument": lambda: self.engine_client(
                    quic_plain, quic_plain_addr, [*on_quic, "--no-instrument"]
                ),
            }
        )
        report_rates(rates)
        report_overhead(overhead)
        report_transports(transports)
        if self.callgrind:
            report_instructions(self.instructions(pki, s_server_port, ca))
        every = {**rates, **overhead, **{f"transport_{k}": v for k, v in transports.items()}}
        failures = {k: sum(r.failed for r in v) for k, v in every.items()}
        if any(failures.values()):
            print(f"failed handshakes: {failures}")
        print(f"load average at end: {load_average()}")

    def interleave(self, configs: dict[str, Callable[[], Run]]) -> dict[str, list[Run]]:
        """Runs every configuration once per round; odd rounds go in reverse order."""
        results: dict[str, list[Run]] = {k: [] for k in configs}
        keys = list(configs)
        for i in range(self.rounds):
            for key in keys if i % 2 == 0 else reversed(keys):
                results[key].append(configs[key]())
        return results

    # --- instructions (callgrind) ----------------------------------------------------------

    def instructions(self, pki: Path, s_server_port: int, ca: str) -> dict[str, float]:
        """Instructions per handshake of each program: slope between a short and a long run."""
        if shutil.which("valgrind") is None:
            raise ChainlabError("valgrind not found (scripts/install-deps.sh installs it)")
        target = f"127.0.0.1:{s_server_port}"
        client = [self.engine, "handshake", "--connect", target, "--groups", GROUP]
        result = {
            "s_time": self.slope(
                lambda n: [
                    str(OPENSSL),
                    "s_time",
                    "-connect",
                    target,
                    "-new",
                    "-time",
                    str(n),
                ],  # fmt: skip
                CALLGRIND_STIME_SECONDS,
                counted=parse_s_time,
            ),
            "engine_verify": self.slope(
                lambda n: [*client, "--ca", ca, "--count", str(n), "--records", "/dev/null"],
                CALLGRIND_COUNTS,
            ),
            "engine_noverify": self.slope(
                lambda n: [*client, "--no-verify", "--count", str(n), "--records", "/dev/null"],
                CALLGRIND_COUNTS,
            ),
        }
        result["s_server"] = self.server_slope(pki, "s_server")
        result["engine_server"] = self.server_slope(pki, "engine")
        return result

    def slope(self, cmd_for, sizes, counted=None) -> float:
        """Instructions per handshake of a client: two runs, (I2 - I1) / (n2 - n1)."""
        points = []
        for size in sizes:
            out_file = self.tmp / f"callgrind.{len(list(self.tmp.glob('callgrind.*')))}"
            cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out_file}"]
            out = subprocess.run(
                [*cmd, *cmd_for(size)],
                capture_output=True,
                text=True,
                timeout=CALLGRIND_TIMEOUT_S,
                env={**os.environ, "OPENSSL_CONF": str(self.tmp / "s_time.cnf")},
            )
            n = counted(out.stdout, out.stderr) if counted else size
            points.append((n, callgrind_total(out_file)))
        (n1, i1), (n2, i2) = points
        return (i2 - i1) / (n2 - n1) if n2 != n1 else float("nan")

    def server_slope(self, pki: Path, which: str) -> float:
        """Instructions per handshake of a server under callgrind, driven by the engine
        client (verification off), for two connection counts."""
        points = []
        for n in CALLGRIND_COUNTS:
            out_file = self.tmp / f"callgrind.srv.{which}.{n}"
            port = free_port()
            vg = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out_file}"]
            if which == "s_server":
                cmd = [
                    str(OPENSSL), "s_server", "-tls1_3", "-groups", GROUP, "-quiet",
                    "-cert", str(pki / "leaf.pem"), "-key", str(pki / "leaf.key"),
                    "-accept", f"127.0.0.1:{port}", "-num_tickets", "0", "-naccept", str(n),
                ]  # fmt: skip
            else:
                cmd = [
                    self.engine, "serve", "--pki", str(pki), "--groups", GROUP,
                    "--tickets", "0", "--listen", f"127.0.0.1:{port}",
                    "--max-connections", str(n), "--records", "/dev/null",
                ]  # fmt: skip
            server = subprocess.Popen(
                [*vg, *cmd],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            try:
                wait_listening(port, CALLGRIND_TIMEOUT_S)
                self.check(
                    [
                        self.engine,
                        "handshake",
                        "--connect",
                        f"127.0.0.1:{port}",
                        "--groups",
                        GROUP,
                        "--no-verify",
                        "--count",
                        str(n),
                        "--timeout-ms",
                        "60000",
                        "--records",
                        "/dev/null",
                    ],  # fmt: skip
                    "chainlab-engine handshake (callgrind server run)",
                )
                server.wait(timeout=CALLGRIND_TIMEOUT_S)
            finally:
                if server.poll() is None:
                    server.kill()
                    server.wait()
            points.append((n, callgrind_total(out_file)))
        (n1, i1), (n2, i2) = points
        return (i2 - i1) / (n2 - n1)

    # --- servers -------------------------------------------------------------------------

    def start_s_server(self, pki: Path) -> tuple[subprocess.Popen, int]:
        port = free_port()
        cmd = [
            str(OPENSSL), "s_server", "-tls1_3", "-groups", GROUP,
            "-cert", str(pki / "leaf.pem"), "-key", str(pki / "leaf.key"),
            "-accept", f"127.0.0.1:{port}", "-quiet", "-num_tickets", "0",
        ]  # fmt: skip
        intermediates = pki / "intermediates.pem"
        if intermediates.is_file() and intermediates.stat().st_size > 0:
            cmd += ["-cert_chain", str(intermediates)]
        err_path = self.tmp / "s_server.err"
        with err_path.open("w") as err:
            proc = self.spawn(cmd, stdin=subprocess.DEVNULL, stdout=err, stderr=err)
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise ChainlabError(
                    f"openssl s_server exited ({proc.returncode}): "
                    f"{err_path.read_text().strip()[-300:]}"
                )
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                return proc, port
            except OSError:
                time.sleep(0.02)
        raise ChainlabError(f"openssl s_server did not listen on port {port} within 10 s")

    def start_engine_server(
        self, pki: Path, instrument: bool, transport: str = "tcp"
    ) -> tuple[subprocess.Popen, str]:
        cmd = [self.engine, "serve", "--pki", str(pki), "--groups", GROUP, "--tickets", "0"]
        cmd += ["--transport", transport]
        if instrument:
            cmd += ["--records", str(self.tmp / f"server-{transport}.jsonl")]
        else:
            cmd += ["--no-instrument"]
        proc = self.spawn(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        out = processes.pipe(proc.stdout)
        ready, _, _ = select.select([out], [], [], STARTUP_TIMEOUT_S)
        line = out.readline() if ready else b""
        if not line:
            proc.kill()
            err = processes.pipe(proc.stderr).read().decode(errors="replace").strip()
            raise ChainlabError(f"chainlab-engine serve printed no ready line: {err}")
        return proc, json.loads(line)["addr"]

    def spawn(self, cmd: list[str], **kwargs) -> subprocess.Popen:
        proc = subprocess.Popen(cmd, **kwargs)
        self.processes.append(proc)
        return proc

    def close(self) -> None:
        """Stops every server this benchmark started (SIGTERM, then SIGKILL)."""
        for proc in reversed(self.processes):
            processes.stop(proc)

    # --- clients -------------------------------------------------------------------------

    def s_time(self, server: subprocess.Popen, port: int, conf: Path) -> Run:
        cmd = [
            str(OPENSSL), "s_time", "-connect", f"127.0.0.1:{port}", "-new",
            "-time", str(self.seconds),
        ]  # fmt: skip
        out, wall, client_cpu, server_cpu = self.measured(
            cmd, server, env={**os.environ, "OPENSSL_CONF": str(conf)}
        )
        return Run(parse_s_time(out.stdout, out.stderr), 0, wall, [], client_cpu, server_cpu)

    def engine_client(self, server: subprocess.Popen, addr: str, extra: list[str]) -> Run:
        self.runs += 1
        records = self.tmp / f"client-{self.runs}.jsonl"
        cmd = [
            self.engine, "handshake", "--connect", addr, "--groups", GROUP,
            "--duration-ms", str(self.seconds * 1000), "--records", str(records), *extra,
        ]  # fmt: skip
        out, wall, client_cpu, server_cpu = self.measured(cmd, server)
        if out.returncode != 0:
            raise ChainlabError(f"chainlab-engine handshake failed: {out.stderr.strip()}")
        run = summarize_records(records.read_text().splitlines(), wall)
        run.client_cpu_s, run.server_cpu_s = client_cpu, server_cpu
        return run

    def measured(self, cmd: list[str], server: subprocess.Popen, env: dict | None = None):
        return measured(cmd, server, self.seconds + CLIENT_GRACE_S, env)

    def check(self, cmd: list[str], what: str) -> None:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        if out.returncode != 0:
            raise ChainlabError(f"{what} failed: {out.stderr.strip()}")


# --- reports -------------------------------------------------------------------------------


def bench_pki(eng: str, tmp: Path, chain: str) -> Path:
    """The hierarchy a bench's servers serve, made under `tmp` (seed "bench": the same keys
    in every bench run); its directory."""
    out = tmp / "pki"
    subprocess.run(
        [eng, "pki", "--chain", chain, "--out", str(out), "--seed", "bench"],
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    return out


def wait_listening(port: int, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.1)
    raise ChainlabError(f"nothing listened on 127.0.0.1:{port} within {timeout_s:.0f} s")


# --- arithmetic and parsing ----------------------------------------------------------------


def measured(cmd: list[str], server: subprocess.Popen, timeout_s: float, env: dict | None = None):
    """Runs a client to completion: its output, wall time, its CPU and the server's CPU
    over the run (seconds)."""
    server_before = process_cpu_s(server.pid)
    children_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout_s)
    wall = time.monotonic() - start
    children_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    server_cpu = process_cpu_s(server.pid) - server_before
    client_cpu = (children_after.ru_utime - children_before.ru_utime) + (
        children_after.ru_stime - children_before.ru_stime
    )
    return out, wall, client_cpu, server_cpu


def process_cpu_s(pid: int) -> float:
    """CPU time a running process has used so far, summed over its threads (seconds).

    From /proc/<pid>/task/*/schedstat (run time in nanoseconds), which is exact where
    /proc/<pid>/stat counts clock ticks (10 ms)."""
    total_ns = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total_ns += int((task / "schedstat").read_text().split()[0])
        except (FileNotFoundError, ProcessLookupError):
            continue  # a thread that exited between listing and reading
    return total_ns / 1e9


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def load_average() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


if __name__ == "__main__":
    try:
        sys.exit(main())
    except ChainlabError as err:
        print(f"chainlab bench engine: error: {err}", file=sys.stderr)
        sys.exit(2)
