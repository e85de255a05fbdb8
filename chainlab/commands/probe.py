"""Probe a TLS 1.3 server chainlab did not start: the engine's client measures handshakes
against HOST:PORT, one connection at a time, and the run is stored like any other.

The probe is a campaign: it writes `<store stem>.toml` next to the store (one [targets]
entry, one matrix; a `--ca` file is copied beside it as `<store stem>.ca.pem`), runs it, and
prints what the client saw. `chainlab run` of that file repeats the probe; `chainlab report`
of the store reports it ("Servers chainlab did not start"). Every attempt is bounded by
`--timeout-ms`; failures are recorded by category and nothing is retried. Exit status: 0
when every scenario completed, 1 when a probe failed, 2 for bad input.
"""

import re
import shutil
from pathlib import Path

import tomli_w

from chainlab.campaign import load
from chainlab.campaign.algorithms import GROUPS, canonical_group
from chainlab.campaign.fields import TARGET_ADDRESS_RE
from chainlab.errors import ChainlabError

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
        "--timeout-ms",
        type=int,
        default=5000,
        help="connect + handshake timeout of each attempt (default 5000)",
    )


def run(args) -> int:
    address = args.address
    if not TARGET_ADDRESS_RE.match(address):
        raise ChainlabError(
            f"probe: address {address!r}: allowed: host:port, e.g. example.com:443 or [::1]:8443"
        )
    if args.count < 1 or args.warmup < 0 or args.timeout_ms < 1:
        raise ChainlabError(
            "probe: --count must be at least 1, --warmup at least 0, --timeout-ms at least 1"
        )
    groups = []
    for g in args.groups.split(","):
        canon = canonical_group(g)
        if canon is None:
            raise ChainlabError(f"probe: --groups {g!r}: allowed: {', '.join(GROUPS)}")
        groups.append(canon)
    name = NAME_RE.sub("-", address.lower()).strip("-")
    store = args.store or Path("results") / f"probe-{name}.duckdb"
    store.parent.mkdir(parents=True, exist_ok=True)
    if store.exists():
        raise ChainlabError(f"probe: store {store} exists; give another --store")
    target = {"address": address, "ca": args.ca}
    if args.ca not in ("system", "none"):
        ca = Path(args.ca)
        if not ca.is_file():
            raise ChainlabError(
                f"probe: --ca {args.ca!r}: no such file; allowed: 'system', 'none' or a PEM file"
            )
        copied = store.with_name(f"{store.stem}.ca.pem")
        shutil.copyfile(ca, copied)
        target["ca"] = copied.name  # relative to the campaign file: no path of this machine
    if args.servername:
        target["servername"] = args.servername
    if args.sigalgs:
        target["sigalgs"] = args.sigalgs
    campaign = {
        "campaign": {
            "name": f"probe-{name}",
            "description": f"chainlab probe {address}",
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
        "targets": {"probe": target},
        "matrix": {
            "probe": {
                "kex": groups,
                "target": ["probe"],
                "handshake_mode": ["full", "resumed"] if args.resume else ["full"],
            }
        },
    }
    file = store.with_name(f"{store.stem}.toml")
    file.write_text(
        f"# Written by `chainlab probe {address}`; `chainlab run` repeats the probe.\n"
        + tomli_w.dumps(campaign)
    )
    c = load(file)
    # Deferred, as in `chainlab run`: the runner and analysis load the store's libraries.
    from chainlab.analysis.analyze import analyze
    from chainlab.runner.campaign import RunOptions
    from chainlab.runner.campaign import run as run_campaign

    summary = run_campaign(c, RunOptions(store=store))
    if summary.interrupted:
        return 130
    t = analyze(store).targets
    for r in t.to_dict("records"):
        print(_line(r))
    print(f"probe: campaign {file}; `chainlab report {store}` reports it")
    return 0 if (t["status"] == "ok").all() else 1


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
