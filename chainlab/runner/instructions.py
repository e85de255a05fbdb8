"""Instruction counts per connection and side under valgrind's callgrind ([measure]
instructions = "callgrind"; docs/methods/instructions.md#instructions-per-handshake).

After a scenario's samples (and load steps), its server is started once more under
callgrind, and one client runs `handshake` under callgrind on the same path: `warmup`
attempts, then `count`. Both collect inside the engine's per-connection span only
(`chainlab_record::cpu::counted_span`: a server connection from accept to close, a client
attempt from connect to close) and dump a profile as each span returns, so start-up, the
accept loop and record writing are not counted and every connection has its own count. The
server runs one connection at a time (the threads model, one worker), so its dumps are in
the order of its records; the client's in the order of its attempts. Counts are of user-mode
instructions, as the hardware counter's (`client_instructions` in samples) are. With
[measure] random = "seeded" both sides draw every random byte from a stream fixed by the run's
seed, the scenario, the side and the connection (`random_seed`), so a rerun counts the same
handshakes: counts that depend on random bytes (ML-DSA signing) repeat too.
"""

from __future__ import annotations

import functools
import subprocess
import tempfile
import time
from pathlib import Path

from chainlab import processes
from chainlab.campaign import measure_plan
from chainlab.runner import engine_args, records, seeds
from chainlab.runner.scenario_state import Visit, measure_plan_of

# The span the engine exposes for counting (engine/crates/chainlab-record/src/cpu.rs).
SPAN = "chainlab_record::cpu::counted_span"
# A connection's I/O timeout and the client's handshake timeout under callgrind: far above a
# counted handshake (an SLH-DSA-SHAKE-192s leaf signs in ~1.4 s natively, ~70 s counted).
TIMEOUT_MS = 600_000
# valgrind starts a process and translates its first code paths in a few seconds.
READY_TIMEOUT_S = 120.0
# The client's whole run: its attempts at the estimate's slowdown, with this margin.
CLIENT_MARGIN = 4.0


class InstructionError(Exception):
    pass


@functools.cache
def valgrind_version() -> str:
    """`valgrind --version` (e.g. valgrind-3.19.0)."""
    out = subprocess.run(["valgrind", "--version"], capture_output=True, text=True, timeout=30)
    return out.stdout.strip() or "valgrind (version unknown)"


def source() -> str:
    """What the counts are, as stored with each row."""
    return f"callgrind ({valgrind_version()})"


def wrapper(out_file: Path) -> list[str]:
    """The valgrind prefix of a side's command, dumping to `out_file`.1, .2, ..."""
    return [
        "valgrind",
        "--tool=callgrind",
        f"--toggle-collect={SPAN}",
        f"--dump-after={SPAN}",
        f"--callgrind-out-file={out_file}",
    ]


def random_seed(run_seed: int, scenario_id: str) -> int:
    """The engines' --random-seed for a scenario's counted handshakes: fixed by the run's
    seed and the scenario, so a rerun counts the same handshakes and no two scenarios share
    a stream."""
    return seeds.derive(run_seed, "random", scenario_id)


def seed_flags(plan, run_seed: int, scenario_id: str) -> list[str]:
    """Both sides' --random-seed under [measure] random = "seeded" (none for "system")."""
    if plan.random != "seeded":
        return []
    return engine_args.random_flags(random_seed(run_seed, scenario_id))


def dumps(out_file: Path) -> list[int]:
    """The instructions of each span a side dumped, in order."""
    out = []
    n = 1
    while (path := out_file.with_name(f"{out_file.name}.{n}")).is_file():
        total = next(
            (
                line.split()[1]
                for line in path.read_text().splitlines()
                if line.startswith("totals:")
            ),
            None,
        )
        if total is None:
            raise InstructionError(f"{path.name}: no totals line (a cut callgrind dump)")
        out.append(int(total))
        n += 1
    return out


def run(ex: Visit) -> list[dict]:
    """Counts the scenario's instructions (its [measure] plan) on this visit's path; the
    visit's own server is stopped first. Returns `instruction_samples` rows."""
    plan, s = measure_plan_of(ex), ex.plan
    ex.stop_server()
    d = ex.dir / "callgrind"
    d.mkdir(exist_ok=True)
    host = ex.link.server_addr if ex.link is not None else "127.0.0.1"
    srv_records, srv_out = d / "server.jsonl", d / "server.out"
    seeded = seed_flags(plan, ex.ctx.seed, s.scenario_id)  # both sides take the same
    argv = wrapper(srv_out) + engine_args.server_argv(
        s, ex.ctx.engine, ex.files, f"{host}:0", srv_records, TIMEOUT_MS, counted=True
    )
    argv += seeded
    if ex.link is not None:
        argv = ex.link.server_cmd(argv)
    err = d / "server.stderr"
    with err.open("wb") as errf:
        server = processes.spawn(argv, subprocess.PIPE, errf)
    try:
        try:
            ready = processes.wait_ready(server, READY_TIMEOUT_S, err)
        except processes.ServerStartError as e:
            raise InstructionError(f"server under callgrind: {e}") from None
        cli_records, cli_out = d / "client.jsonl", d / "client.out"
        head = engine_args.client_head(s, ex.ctx.engine, "handshake", ready["addr"], ex.files)
        argv = ex.client_extras(
            [
                *wrapper(cli_out),
                *head,
                "--count", str(plan.count),
                "--warmup", str(plan.warmup),
                "--timeout-ms", str(TIMEOUT_MS),
                "--records", str(cli_records),
                *seeded,
            ]
        )  # fmt: skip
        budget = READY_TIMEOUT_S + CLIENT_MARGIN * _expected_s(ex)
        t0 = time.monotonic()
        with (d / "client.stderr").open("wb") as errf:
            client = processes.spawn(argv, subprocess.DEVNULL, errf)
            try:
                if not processes.wait_exit(client, budget):
                    raise InstructionError(
                        f"the client under callgrind ran past {budget:.0f} s (cut)"
                    )
            finally:
                processes.stop_group(client)
        if client.returncode != 0:
            tail = processes.tail(d / "client.stderr")
            raise InstructionError(
                f"the client under callgrind {processes.describe_exit(client.returncode)}"
                + (f": {tail}" if tail else "")
            )
        ex.ctx.progress.note(
            f"chainlab: {s.scenario_id}: instructions counted under callgrind for "
            f"{plan.warmup + plan.count} handshakes in {time.monotonic() - t0:.1f} s"
        )
    finally:
        processes.stop_group(server)
        if server.stdout is not None:
            server.stdout.close()
    return _rows(ex, records.read(cli_records, writer=s.handshake.stacks[0]),
                 records.server_connections(srv_records, writer=s.handshake.stacks[1]),
                 dumps(cli_out), dumps(srv_out))  # fmt: skip


def _expected_s(ex: Visit) -> float:
    return measure_plan.seconds(ex.plan, ex.state.estimated_s_per_handshake * 1000)


def _rows(ex: Visit, client: list[dict], server: list[dict], cli: list[int], srv: list[int]):
    """Rows pairing each attempt with its dump, and with its server connection's (by
    conn_id; an MTC retry's two connections summed)."""
    if len(cli) != len(client):
        raise InstructionError(
            f"{len(client)} client records but {len(cli)} callgrind dumps (each attempt dumps "
            "once: the engine's counted span is missing or was renamed)"
        )
    if len(srv) != len(server):
        raise InstructionError(f"{len(server)} server records but {len(srv)} callgrind dumps")
    by_conn = {r["conn_id"]: n for r, n in zip(server, srv, strict=True) if r.get("conn_id")}
    out = []
    for r, n in zip(client, cli, strict=True):
        srv_n = by_conn.get(r.get("conn_id"))
        first = r.get("first_conn_id")
        if srv_n is not None and first in by_conn:
            srv_n += by_conn[first]
        out.append(
            {
                "run_id": ex.ctx.run_id,
                "scenario_id": ex.plan.scenario_id,
                "seq": r["seq"],
                "warmup": bool(r.get("warmup")),
                "conn_id": r.get("conn_id"),
                "outcome": r["outcome"],
                "error_category": r.get("error_category"),
                "client_instructions": n,
                "server_instructions": srv_n,
                "source": source(),
                "random": measure_plan_of(ex).random,
            }
        )
    return out


def count_primitive(engine: Path, argv: list[str], count: int, warmup: int = 1) -> float:
    """Mean instructions of one cryptographic operation (`chainlab-engine primitives`
    with `argv`: --subject, --op, ...), counted as handshakes are: one dump per operation,
    the first `warmup` left out."""
    with tempfile.TemporaryDirectory(prefix="chainlab-primitive-") as tmp:
        out = Path(tmp) / "primitive.out"
        cmd = [*wrapper(out), str(engine), "primitives", *argv,
               "--count", str(count), "--warmup", str(warmup)]  # fmt: skip
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
        if done.returncode != 0:
            raise InstructionError(f"primitives {' '.join(argv)}: {done.stderr.strip()[-300:]}")
        counts = dumps(out)[warmup:]
    if not counts:
        raise InstructionError(f"primitives {' '.join(argv)}: no counted operation")
    return sum(counts) / len(counts)
