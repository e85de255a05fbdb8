"""Predict each scenario of a campaign file from this machine's measured primitives: its
handshake latency (loopback, or projected onto its network profile), server and client CPU
per handshake, the bytes of each side's flight and the capacity of one server core.

Nothing runs but the primitives the cost model lacks: they are measured first (at the
file's [primitives] settings) and kept in this machine's cache, so a second prediction
takes seconds. Every figure printed is a prediction (docs/methods/cost-model.md#cost-model).
"""

import sys
import tempfile
import uuid
from pathlib import Path

from chainlab import engine, environment
from chainlab.commands import campaign_arguments, read_campaign
from chainlab.model import estimate, flights
from chainlab.runner import parts, primitives, references
from chainlab.schema import counted

HELP = "predict each scenario's latency, CPU, bytes and capacity from measured primitives"


def add_arguments(parser):
    campaign_arguments(parser)


def run(args) -> int:
    c = read_campaign(args.file)
    selected = c.select(args.campaign)
    items = primitives.items_for(selected)
    environment.check(caches=("pki", "primitives"))
    engine.ensure(
        parts.needed(selected, c.seed),
        say=lambda text: print(f"chainlab: {text}", file=sys.stderr, flush=True),
    )
    with tempfile.TemporaryDirectory(prefix="chainlab-predict-") as tmp:
        out = primitives.ensure(
            engine.path(),
            items,
            c.primitives,
            uuid.uuid4().hex,
            Path(tmp),
            seed=c.seed,
            stacks=primitives.stacks_of(selected),
            transports=references.transports_of(selected),
            waits=references.waits_of(selected),
            peers=references.peers_of(selected),
        )
    model = primitives.model(out.rows, "this machine's primitives")
    for note in out.host_notes:
        print(f"primitives: {note}")
    print(
        f"{c.path.name}: {counted(len(selected), 'scenario')}, PREDICTED from this machine's "
        "primitives "
        f"({out.cached} from its cache, {out.measured} measured now, {out.seconds:.1f}s)"
    )
    width = max(len(s.scenario_id) for s in selected)
    print(
        f"{'scenario':<{width}}  {'latency ms':>10}  {'server CPU ms':>13}  "
        f"{'client CPU ms':>13}  {'client B':>8}  {'server B':>8}  {'per core /s':>11}"
    )
    for s in selected:
        p = estimate.predict(s, model)
        latency = estimate.handshake_ms(s, model)
        client_b, server_b = flights.flight_bytes(s)
        print(
            f"{s.scenario_id:<{width}}  {latency:>10.3f}  {p.server_ms:>13.3f}  "
            f"{p.client_ms:>13.3f}  {client_b:>8}  {server_b:>8}  {1000 / p.server_ms:>11.1f}"
        )
    print(
        "predicted: latency on loopback or projected onto the scenario's network profile; "
        "CPU = primitives + the TLS overhead of the reference handshakes; bytes = the "
        "client's first flight and the server's flight; capacity = 1 / server CPU"
    )
    return 0
