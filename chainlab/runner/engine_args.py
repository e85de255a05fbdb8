"""The engine command lines of a scenario: what its server is started with and what every
client (a `handshake` batch, a `load` step) starts with, on whichever stack each side runs.

Pure functions of the scenario and of what a visit knows (hierarchy directories, the
server's address, the link): nothing here starts a process.
"""

from __future__ import annotations

from pathlib import Path

from chainlab import axes
from chainlab import engine as engines
from chainlab.axes.stack import DEFAULT_STACK
from chainlab.campaign.model import STORE_ROLES, Scenario


def binary(run_engine: Path, stack: str) -> Path:
    """The engine of a side's TLS stack: the run's engine for the default stack (the
    hierarchies come from it whatever the stacks), the stack's own binary otherwise."""
    return run_engine if stack == DEFAULT_STACK else engines.stack_path(stack)


def axis_flags(s: Scenario) -> list[str]:
    """The flags both sides take for the scenario's axis values (chainlab.axes.axis:
    `Axis.flags`), in registry order."""
    out: list[str] = []
    for axis in axes.registered():
        if axis.flags is not None:
            out += axis.flags(s.value(axis.key))
    return out


def random_flags(seed: int | None) -> list[str]:
    """Either side's --random-seed (the OpenSSL engines': every random byte from a stream
    fixed by the seed, the side and the connection's `seq`), none without a seed."""
    return [] if seed is None else ["--random-seed", str(seed)]


def server_argv(
    s: Scenario,
    run_engine: Path,
    files,
    listen: str,
    records: Path,
    timeout_ms: int,
    counted: bool = False,
) -> list[str]:
    """`serve` for this scenario, listening on `listen` (host:port), recording to `records`,
    with its `files` (chainlab.runner.scenario_state.Files: hierarchies, trust anchors) and
    what each axis value asks of the server (`Axis.server_flags`); `counted`: a server whose
    instructions callgrind counts, one connection at a time (chainlab.runner.instructions)."""
    argv = [
        str(binary(run_engine, s.handshake.stacks[1])), "serve",
        "--pki", str(files.pki_dir),
        "--listen", listen,
        "--chain", s.handshake.engine_chain,
    ]  # fmt: skip
    for axis in axes.registered():
        if axis.server_flags is not None:
            argv += axis.server_flags(s.value(axis.key), s, files)
    argv += [
        *axis_flags(s),
        "--io-timeout-ms", str(timeout_ms),
        "--records", str(records),
    ]  # fmt: skip
    if counted:
        # One worker thread: each connection's span runs alone, dumps in record order.
        argv += ["--server-model", "threads", "--workers", "1"]
    elif s.load is not None:
        # Load steps follow on this server: its workers on its own cores from the start,
        # so the single-connection phase measures the same server.
        # A QUIC server is one thread serving every connection through one event loop
        # (its listener owns the one socket): the model and the workers apply to TCP.
        model, workers = (
            ("threads", 1)
            if s.handshake.quic
            else (
                s.load.server_model,
                s.load.server_workers,
            )
        )
        argv += [
            "--server-model", model, "--workers", str(workers), "--cpus", s.load.server_cpus,
        ]  # fmt: skip
    return argv


def anchor_file(s: Scenario) -> str:
    """The client's trust anchor in the hierarchy directory: the root (`ca.pem`), or the
    leaf's issuing intermediate (`int1.pem` at depth 3, `int2.pem` at depth 4)."""
    if not s.handshake.anchor_depth:
        return "ca.pem"
    return f"{STORE_ROLES.get(s.roles[-2], s.roles[-2])}.pem"


def trust(s: Scenario, files) -> list[str]:
    """The client's trust anchors: an axis value's that replaces the hierarchy's
    (`Axis.trust`: a Merkle Tree Certificate's CA, a dual-chain server's two roots), else
    the hierarchy's anchor."""
    for axis in axes.registered():
        if axis.trust is not None:
            got = axis.trust(s.value(axis.key), files)
            if got is not None:
                return got
    return ["--ca", str(files.pki_dir / anchor_file(s))]


def client_head(
    s: Scenario,
    run_engine: Path,
    subcommand: str,
    server_addr: str,
    files,
    stack: str | None = None,
) -> list[str]:
    """The start of every client command of this scenario: the engine subcommand, the
    server, the trust anchors and the groups offered; `stack` runs another stack's client
    than the scenario's (the load generator's, [load] generator_stack)."""
    if s.target_spec is not None:
        return _target_head(s, run_engine, subcommand, server_addr, files.target_ca)
    return [
        str(binary(run_engine, stack or s.handshake.stacks[0])), subcommand,
        "--connect", server_addr,
        *trust(s, files),
        "--groups", s.kex,
        *axis_flags(s),
    ]  # fmt: skip


def _target_head(
    s: Scenario, run_engine: Path, subcommand: str, server_addr: str, target_ca: Path | None
) -> list[str]:
    t = s.target_spec
    if t is None:
        raise ValueError(f"scenario {s.scenario_id} has no target")
    head = [
        str(binary(run_engine, s.handshake.stacks[0])), subcommand,
        "--connect", server_addr,
        "--servername", t.servername,
        "--groups", s.kex,
        *axis_flags(s),
    ]  # fmt: skip
    head += ["--ca", str(target_ca)] if target_ca is not None else ["--no-verify"]
    if t.sigalgs:
        head += ["--sigalgs", t.sigalgs]
    return head


def client_extras(s: Scenario, argv: list[str], files, seed: int) -> list[str]:
    """What every client of this scenario adds to its command: what each axis value asks
    of a client (`Axis.client_flags`: intermediates the server does not send, resumption, a
    client certificate, a client population), draws seeded with the batch's `seed`."""
    out = list(argv)
    for axis in axes.registered():
        if axis.client_flags is not None:
            out += axis.client_flags(s.value(axis.key), s, files, seed)
    return out
