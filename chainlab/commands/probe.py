"""Probe a TLS 1.3 server chainlab did not start: the engine's client measures handshakes
against HOST:PORT, one connection at a time, and the run is stored like any other.

The probe is a campaign: it writes `<store stem>.toml` next to the store (one [targets]
entry, one matrix; a `--ca` file is copied beside it as `<store stem>.ca.pem`), runs it, and
prints what the client saw. `chainlab run` of that file repeats the probe; `chainlab report`
of the store reports it ("Servers chainlab did not start"). Every attempt is bounded by
`--timeout-ms`; failures are recorded by category and nothing is retried. With `--rate`,
open-loop load steps follow (the engine's load generator: attempts on a schedule fixed in
advance, each step bounded by `--duration-s` and `--max-in-flight`). Exit status as `run`'s:
0 when every scenario completed, 3 when some failed, 4 when none did, 2 for bad input.
"""

import os
import re
import shutil
import socket
import tempfile
from pathlib import Path

import tomli_w

from chainlab import environment
from chainlab.axes.algorithms import GROUPS, canonical_group
from chainlab.campaign.fields import MIN_STEP_ATTEMPTS, TARGET_ADDRESS_RE
from chainlab.campaign.tables import trust_anchor_problem
from chainlab.commands import read_campaign
from chainlab.commands.run import run_status
from chainlab.schema import Problems

HELP = "measure handshakes against a TLS 1.3 server chainlab did not start"
# A probe's name in its store and file names: the address with anything but letters and
# digits folded to '-'.
NAME_RE = re.compile(r"[^a-z0-9]+")


def add_arguments(parser):
    parser.add_argument("address", help="the server, HOST:PORT (IPv6 in brackets)")
    parser.add_argument(
        "--store",
        type=Path,
        help="result store to write (default: results/probe-<host>-<port>.duckdb); the "
        "probe's campaign file is written next to it",
    )
    parser.add_argument("--count", type=int, default=100, help="measured handshakes (default 100)")
    parser.add_argument("--warmup", type=int, default=1, help="warm-up handshakes (default 1)")
    parser.add_argument(
        "--groups",
        default="X25519MLKEM768",
        help="key-exchange groups to offer, comma-separated; one scenario each "
        "(default X25519MLKEM768)",
    )
    parser.add_argument("--sigalgs", help="signature schemes to offer, colon-separated TLS names")
    parser.add_argument(
        "--ca",
        default="system",
        help="trust anchors: 'system' (this machine's CA bundle, the default), 'none' (no "
        "chain verification) or a PEM file",
    )
    parser.add_argument("--servername", help="SNI and the name checked (default: the host)")
    parser.add_argument(
        "--resume",
        action="store_true",
        help="also measure resumed handshakes (a second scenario per group)",
    )
    parser.add_argument(
        "--rate",
        type=float,
        action="append",
        metavar="R",
        help="after the single-connection handshakes, offer R attempts per second for "
        "--duration-s (open loop; repeatable: one step per rate)",
    )
    parser.add_argument(
        "--duration-s", type=float, default=5.0, help="length of each --rate step (default 5)"
    )
    parser.add_argument(
        "--max-in-flight",
        type=int,
        default=64,
        help="connections in flight at most during a --rate step (default 64)",
    )
    parser.add_argument(
        "--timeout-ms",
        type=int,
        default=5000,
        help="connect + handshake timeout of each attempt (default 5000)",
    )


def run(args) -> int:
    store, groups = check(args)  # every problem listed; nothing written before this passes
    environment.check(caches=("pki", "primitives"))
    name = _name(args.address)
    target = {"address": args.address, "ca": args.ca}
    if args.ca not in ("system", "none"):
        # Beside the campaign file, named relative to it: no path of this machine.
        target["ca"] = f"{store.stem}.ca.pem"
    if args.servername:
        target["servername"] = args.servername
    if args.sigalgs:
        target["sigalgs"] = args.sigalgs
    campaign = {
        "campaign": {
            "name": f"probe-{name}",
            "description": f"chainlab probe {args.address}",
            "order": "declared",
        },
        "sampling": {
            "mode": "fixed",
            "count": args.count,
            "warmup": args.warmup,
            "batch_warmup": min(args.warmup, 1),
            "timeout_ms": args.timeout_ms,
            # Every attempt is made and recorded; the scenario counts as failed only when
            # all of them failed (failed / count > count / (count + 1)).
            "max_failed_fraction": args.count / (args.count + 1),
        },
        "primitives": {"measure": False},
        **({"load": _load(args)} if args.rate else {}),
        "targets": {"probe": target},
        "matrix": {
            "probe": {
                "kex": groups,
                "target": ["probe"],
                "handshake_mode": ["full", "resumed"] if args.resume else ["full"],
            }
        },
    }
    file, c = _write_validated(campaign, store, args)
    # Deferred, as in `chainlab run`: the runner and analysis load the store's libraries.
    from chainlab.analysis.analyze import analyze
    from chainlab.runner.campaign import RunOptions
    from chainlab.runner.campaign import run as run_campaign

    summary = run_campaign(c, RunOptions(store=store))
    if summary.interrupted:
        return run_status(summary)
    a = analyze(store)
    t = a.targets
    for r in t.to_dict("records"):
        print(_line(r))
        if len(a.target_load):
            steps = a.target_load[a.target_load["scenario_id"] == r["scenario_id"]]
            for s in steps.to_dict("records"):
                print(_step_line(s))
    print(f"probe: campaign {file}; `chainlab report {store}` reports it")
    return run_status(summary)


def check(args) -> tuple[Path, list[str]]:
    """(the store to write, the canonical groups), once every option is valid; otherwise a
    ConfigError listing every problem, one line each. Nothing is written here."""
    p = Problems("probe")
    if not TARGET_ADDRESS_RE.match(args.address):
        p.bad(
            "address",
            f"bad value {args.address!r}; allowed: host:port, e.g. example.com:443 or [::1]:8443",
        )
    else:
        host, port = args.address.rsplit(":", 1)
        try:
            # A name that does not resolve would run zero handshakes into a new store.
            socket.getaddrinfo(host.strip("[]"), int(port), type=socket.SOCK_STREAM)
        except (socket.gaierror, UnicodeError) as e:
            why = getattr(e, "strerror", None) or e
            p.bad("address", f"{host} does not resolve ({why}); allowed: a host "
                  "name this machine resolves, or an address")  # fmt: skip
    for flag, value, least in (
        ("--count", args.count, 1),
        ("--warmup", args.warmup, 0),
        ("--timeout-ms", args.timeout_ms, 1),
    ):
        if value < least:
            p.bad(flag, f"bad value {value}; allowed: at least {least}")
    if args.rate:
        for r in args.rate:
            if r <= 0:
                p.bad("--rate", f"bad value {r:g}; allowed: a positive rate (attempts/s)")
            elif args.duration_s > 0 and r * args.duration_s < MIN_STEP_ATTEMPTS:
                p.bad(
                    "--rate",
                    f"--rate {r:g} for --duration-s {args.duration_s:g} schedules "
                    f"{r * args.duration_s:.0f} attempts; allowed: at least "
                    f"{MIN_STEP_ATTEMPTS} per step (a higher rate or a longer --duration-s)",
                )
        if args.duration_s <= 0:
            p.bad("--duration-s", f"bad value {args.duration_s:g}; allowed: a positive length")
        if args.max_in_flight < 1:
            p.bad("--max-in-flight", f"bad value {args.max_in_flight}; allowed: at least 1")
    groups = []
    for g in args.groups.split(","):
        canon = canonical_group(g)
        if canon is None:
            p.bad("--groups", f"unknown group {g!r}; allowed: {', '.join(GROUPS)}")
        elif canon not in groups:
            groups.append(canon)
    store = args.store or Path("results") / f"probe-{_name(args.address)}.duckdb"
    for f in (store, store.with_name(f"{store.stem}.toml")):
        if f.exists():
            p.bad("--store", f"{f} exists; allowed: a --store whose files do not exist yet")
    if args.ca not in ("system", "none"):
        ca = Path(args.ca)
        problem = trust_anchor_problem(ca) if ca.is_file() else "no such file"
        if problem:
            p.bad("--ca", f"{args.ca!r}: {problem}; allowed: 'system', 'none' or a PEM file")
    p.raise_if_any()
    return store, groups


def _name(address: str) -> str:
    return NAME_RE.sub("-", address.lower()).strip("-")


def _write_validated(campaign: dict, store: Path, args):
    """Validates the probe's campaign (and its --ca copy) in a scratch directory, then puts
    both beside the store: a campaign that does not validate leaves nothing behind."""
    text = f"# Written by `chainlab probe {args.address}`; `chainlab run` repeats the probe.\n"
    text += tomli_w.dumps(campaign)
    file = store.with_name(f"{store.stem}.toml")
    ca = campaign["targets"]["probe"]["ca"]
    with tempfile.TemporaryDirectory(prefix="chainlab-probe-") as tmp:
        scratch = Path(tmp) / file.name
        scratch.write_text(text)
        if ca not in ("system", "none"):
            shutil.copyfile(args.ca, Path(tmp) / ca)
        read_campaign(scratch)  # raises listing every problem
        store.parent.mkdir(parents=True, exist_ok=True)
        if ca not in ("system", "none"):
            shutil.copyfile(Path(tmp) / ca, store.with_name(ca))
        file.write_text(text)
    return file, read_campaign(file)


def _load(args) -> dict:
    """[load] of a probe: its rates, the generator on every CPU this process may use (the
    server's side of [load] does not apply to a target)."""
    cpus = sorted(os.sched_getaffinity(0))
    return {
        "rates": args.rate,
        "step_s": args.duration_s,
        "max_in_flight": args.max_in_flight,
        "server_cpus": str(cpus[0]),
        "generator_cpus": ",".join(map(str, cpus)),
    }


def _step_line(r: dict) -> str:
    return (
        f"  load step {int(r['step'])}: offered {r['offered_rate']:.1f}/s, achieved "
        f"{r['achieved_rate']:.1f}/s, {int(r['n_failed'])} failed "
        f"({int(r['n_saturated'])} saturated); latency from the intended start p50 "
        f"{r['p50_ms']:.2f} ms, p99 {r['p99_ms']:.2f} ms"
        + (f"; generator limited: {r['generator_note']}" if r["generator_limited"] else "")
    )


def _line(r: dict) -> str:
    head = f"probe {r['address']} ({r['kex']}, {r['handshake_mode']}): "
    if r["status"] != "ok":
        return (
            head + f"FAILED: {r['failure_cause']}: {r['n_failed']} of {r['n_measured']} "
            f"handshakes failed ({r['failures'] or r['failure_detail']})"
        )
    text = (
        f"{r['n_ok']}/{r['n_measured']} ok; latency median {r['median_ms']:.2f} ms, mean "
        f"{r['mean_ms']:.2f} ms [{r['mean_ms_lo']:.2f}, {r['mean_ms_hi']:.2f}]; client CPU "
        f"{r['client_cpu_ms']:.2f} ms; {r['negotiated_group']}"
    )
    if isinstance(r["negotiated_sigalg"], str):
        text += f", {r['negotiated_sigalg']}"
    if r["chain_len"] == r["chain_len"]:
        text += f"; chain {int(r['chain_len'])} certificate(s), {int(r['chain_bytes'])} B"
    text += f"; read {int(r['bytes_read'])} B, wrote {int(r['bytes_written'])} B"
    if r["n_failed"]:
        text += f"; {r['n_failed']} failed ({r['failures']})"
    return head + text
