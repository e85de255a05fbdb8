"""The engine command lines of a scenario: what its server is started with and what every
client (a `handshake` batch, a `load` step) starts with, on whichever stack each side runs.

Pure functions of the scenario and of what a visit knows (hierarchy directories, the
server's address, the link): nothing here starts a process.
"""

from __future__ import annotations

from pathlib import Path

from chainlab import engine as engines
from chainlab.campaign import axes, rollout
from chainlab.campaign.model import STORE_ROLES, Scenario
from chainlab.campaign.stacks import DEFAULT_STACK


def binary(run_engine: Path, stack: str) -> Path:
    """The engine of a side's TLS stack: the run's engine for the default stack (the
    hierarchies come from it whatever the stacks), the stack's own binary otherwise."""
    return run_engine if stack == DEFAULT_STACK else engines.stack_path(stack)


def axis_flags(s: Scenario) -> list[str]:
    """The flags both sides take for the scenario's axis values (chainlab.campaign.axes:
    `Axis.flags`), in registry order. The axes that need a visit's files (served chain,
    resumption, client certificates) or choose the binary (stack) are passed below."""
    out: list[str] = []
    for axis in axes.registered():
        if axis.flags is not None:
            out += axis.flags(s.value(axis.key))
    return out


def server_argv(
    s: Scenario,
    run_engine: Path,
    pki_dir: Path,
    listen: str,
    records: Path,
    timeout_ms: int,
    client_pki_dir: Path | None,
    second_pki_dir: Path | None = None,
    counted: bool = False,
) -> list[str]:
    """`serve` for this scenario, listening on `listen` (host:port), recording to `records`;
    `second_pki_dir`: the second chain's hierarchy (staged rollout); `counted`: a server whose
    instructions callgrind counts, one connection at a time (chainlab.runner.instructions)."""
    argv = [
        str(binary(run_engine, s.server_stack)), "serve",
        "--pki", str(pki_dir),
        "--listen", listen,
        "--chain", s.engine_chain,
        *s.certificate.server_flags(),
        *rollout.server_groups(s.kex, s.value("population"), s.value("server_groups")),
        *axis_flags(s),
        "--tickets", "0" if s.handshake_mode == "full" else "1",
        "--io-timeout-ms", str(timeout_ms),
        "--records", str(records),
    ]  # fmt: skip
    if client_pki_dir is not None:
        argv += ["--client-ca", str(client_pki_dir / "ca.pem")]
    if second_pki_dir is not None:
        argv += ["--second-pki", str(second_pki_dir)]
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
            if s.transport == "quic"
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
    if not s.anchor_depth:
        return "ca.pem"
    return f"{STORE_ROLES.get(s.roles[-2], s.roles[-2])}.pem"


def client_head(
    s: Scenario,
    run_engine: Path,
    subcommand: str,
    server_addr: str,
    pki_dir: Path | None,
    client_pki_dir: Path | None,
    target_ca: Path | None,
    stack: str | None = None,
    trust_file: Path | None = None,
) -> list[str]:
    """The start of every client command of this scenario: the engine subcommand, the
    server, the trust anchor and what the scenario offers; `stack` runs another stack's
    client than the scenario's (the load generator's, [load] generator_stack);
    `trust_file` replaces the hierarchy's anchor (a dual-chain server's two roots)."""
    if s.target_spec is not None:
        return _target_head(s, run_engine, subcommand, server_addr, target_ca)
    trust = (
        s.certificate.client_flags(pki_dir)
        if s.certificate.is_mtc
        else ["--ca", str(trust_file or pki_dir / anchor_file(s))]
    )
    head = [
        str(binary(run_engine, stack or s.client_stack)), subcommand,
        "--connect", server_addr,
        *trust,
        "--groups", s.kex,
        *axis_flags(s),
    ]  # fmt: skip
    if s.anchor_depth:
        # The Trust Anchor IDs model: the client trusts the leaf's issuer itself and
        # verifies the leaf alone (a partial chain, ending at a non-self-signed anchor).
        head.append("--partial-chain")
    if client_pki_dir is not None:
        head += ["--cert-pki", str(client_pki_dir)]
    return head


def _target_head(
    s: Scenario, run_engine: Path, subcommand: str, server_addr: str, target_ca: Path | None
) -> list[str]:
    t = s.target_spec
    head = [
        str(binary(run_engine, s.client_stack)), subcommand,
        "--connect", server_addr,
        "--servername", t.servername,
        "--groups", s.kex,
        *axis_flags(s),
    ]  # fmt: skip
    head += ["--ca", str(target_ca)] if target_ca is not None else ["--no-verify"]
    if t.sigalgs:
        head += ["--sigalgs", t.sigalgs]
    return head


def client_extras(
    s: Scenario, argv: list[str], pki_dir: Path | None, resume_seed: int
) -> list[str]:
    """What every client of this scenario adds to its command: intermediates the server does
    not send, resumption (a mix seeded with `resume_seed`), a client population (its draws
    seeded with it too)."""
    if s.served_chain == "leaf" and s.depth >= 3:
        # The server omits the intermediates: the client gets them as untrusted path
        # material, as a browser with an intermediate cache would.
        argv = [*argv, "--untrusted", str(pki_dir / "intermediates.pem")]
    if s.handshake_mode == "resumed":
        argv = [*argv, "--resume"]
    elif s.handshake_mode != "full":
        # A resumption mix: each handshake offers the ticket with the scenario's ratio,
        # seeded per batch so a rerun with the run's seed repeats the mix.
        ratio = f"{s.resumption_ratio:g}"
        argv = [*argv, "--resume-ratio", ratio, "--resume-seed", str(resume_seed)]
    population = s.value("population")
    if population != rollout.NO_POPULATION:
        # Each client draws its kinds from the batch's seed: a rerun repeats the draws.
        argv = [*argv, "--population", population, "--population-seed", str(resume_seed)]
    return argv
