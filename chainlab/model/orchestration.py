"""What a run spends outside its handshakes, per connection, client batch and scenario, at
the host's speed (chainlab.model.estimate prices a scenario's time with it).

The costs are orchestration's own (process starts, records read, files), CPU-bound work of
this process and the engines' starts, so they are taken to slow with the host as its
reference workload does (chainlab.model.host_speed): each figure below was measured at
`READING_NS` and is scaled by a model's host reading over it (`factor`). On 2026-12-01 this
VM read 15.1-15.6 ms; a scenario's fixed cost was 13.4 ms there against about 29 ms on
2026-11-30 at 21 ms (interop.toml's 249 took 23.3 s over 11.1 s of handshakes, 2.8 s of it
the run's start and 1.5 s its 16 windows), and a batch's 13.8 ms against 48 ms on 2026-11-27
(browser.toml's 3.7 batches a scenario, a cache read at about 43 ms): slower where the host
was, by somewhat more than the reading. The constants before (0.04 s a scenario, 0.05 s a
batch, unscaled) priced interop.toml's run of 2026-12-01 at 1.65 of its wall time; these,
made again from its store, at 1.05.
"""

from __future__ import annotations

from chainlab.model.cost import CostModel

# The host reading (the reference workload's CPU ns, chainlab.runner.host.reference) at which
# the costs below were measured.
READING_NS = 15.3e6

# Between one handshake's end (`total_ns`) and the next one's start, in the client's loop:
# the close (close_notify both ways), the record written, the next socket. Its median was
# 0.12-0.15 ms per connection over the 4 ML-DSA-leaf scenarios of a signature-placement.toml
# run on 2026-11-27 (0.20-0.30 ms beside 1.3 s SLH-DSA handshakes). On an emulated path the
# close waits for the peer's answer: one round trip more (50.5-51.0 ms on 50 ms paths, over
# TCP and QUIC alike, in that day's families.toml and quic.toml runs), unless the client reads
# the close after the next handshake (`Handshake.defers_close`: TCP). Not scaled: on
# 2026-12-01 (15.3 ms) the loopback gaps' medians were 0.07-0.095 ms, as on 2026-11-27.
CONNECTION_GAP_MS = 0.14
# ... where the client frees a connection during the next one's close (the OpenSSL engines,
# docs/engine-records.md): 0.085-0.092 ms against 0.13 ms in three 3000-handshake ML-DSA-65
# runs each (2026-11-27).
CONNECTION_GAP_MS_BY_CLIENT = {"openssl-3.5": 0.09, "openssl-4.0": 0.09}

# Measured at READING_NS, by least squares over 324 loopback scenario runs of interop.toml,
# browser.toml, composite.toml, quic.toml and a 600-handshake campaign (2026-12-01): a
# scenario's wall time (`scenario_runs.wall_seconds`) less its handshakes and the gaps
# between them was SCENARIO_S + BATCH_S per client batch beyond the first + RECORD_S per
# handshake; per campaign the fit was within 0.08 s of the sum measured.
# A scenario's fixed cost: server start and stop, the first client process, its hierarchy's
# files, its rows. Its host readings and store commit are its window's
# (host_speed.WINDOW_COST_S). Each engine process started 0.75 ms sooner once engines set
# their own parent-death signal (a server start's median 4.81 -> 4.06 ms, chainlab.processes;
# interop.toml's median scenario 10.9-11.5 -> 9.5 ms outside its handshakes, 2026-12-01):
# less 1.5 ms for the scenario's two, 0.8 ms for a batch's client.
SCENARIO_S = 0.0119
# Each client batch beyond the first (an engine process, its start, its records read; in
# interleaved order a server restarted for the visit too).
BATCH_S = 0.0130
# What a client batch beyond the first spares where the run keeps the scenario's server
# (`Scenario.keeps_server`, chainlab.runner.servers): its visit's server is taken, not started
# and stopped. interop.toml's server starts went 1.20 -> 0.59 s and its stops and records
# 0.49 -> 0.32 s over 249 visits, 178 of them on kept servers; browser.toml's 0.45 -> 0.07 s
# and 0.21 -> 0.12 s over 81 visits, all kept (2026-12-01): 3.5-5.8 ms a kept visit.
KEPT_VISIT_S = 0.004
# Each handshake's two records (client and server) read and paired into rows.
RECORD_S = 35e-6
# An emulated link's set-up and teardown (namespaces, devices, forwarder) per scenario,
# without calibration: 0.09-0.11 s measured for the lan, wan and lossy profiles. A scenario
# that shares the run's link (Scenario.shares_link) pays it once per run, not counted. Not
# scaled: mostly the kernel's.
LINK_S = 0.1


def connection_gap_ms(client_stack: str) -> float:
    """The client loop's time between two handshakes on loopback (CONNECTION_GAP_MS)."""
    return CONNECTION_GAP_MS_BY_CLIENT.get(client_stack, CONNECTION_GAP_MS)


def factor(model: CostModel | None) -> float:
    """How much slower than at READING_NS orchestration runs on the host `model` is priced at
    (its host reading, chainlab.model.host_speed.at_reading); 1 without a model or a reading."""
    if model is None or model.host_ns is None or model.host_ns <= 0:
        return 1.0
    return model.host_ns / READING_NS


def scenario_s(model: CostModel | None, own_link: bool) -> float:
    """A scenario's fixed cost at the host's speed, with its link's where it has its own."""
    return SCENARIO_S * factor(model) + (LINK_S if own_link else 0.0)


def batches_s(model: CostModel | None, batches: int, handshakes: int, kept: bool = False) -> float:
    """What `batches` client batches of `handshakes` in all cost beyond the first batch's
    start, at the host's speed; `kept`: on a server the run keeps between visits."""
    batch = BATCH_S - (KEPT_VISIT_S if kept else 0.0)
    return (batch * max(batches - 1, 0) + RECORD_S * handshakes) * factor(model)
