"""The tests' synthetic stores with known answers: `network_profile` rows and the
`network_example` scenario set, written through the benchmark's store writer
(chainlab.bench.synthetic: `SyntheticScenario`, `build_store`), which is what tests import
from here too, so every test's synthetic store comes through this one module.
Nothing here is a measurement.
"""

from __future__ import annotations

import numpy as np

from chainlab.bench.synthetic import SyntheticScenario, build_store, default_campaign_toml
from chainlab.campaign.model import NetworkProfile
from chainlab.network.calibrate import TOLERANCE

__all__ = ["SyntheticScenario", "build_store", "network_example", "network_profile"]


def network_profile(
    name: str,
    *,
    delay_ms: float = 0.0,
    jitter_ms: float = 0.0,
    rate_mbit: float | None = None,
    loss: float = 0.0,
    mtu: int = 1500,
    initcwnd: int | None = None,
    measured_rtt_ms: float | None = None,
    measured_rate_mbit: float | None = None,
    measured_loss: float | None = None,
    tcp_mss: int | None = None,
    flagged: bool | None = None,
) -> dict:
    """A `network_profiles` row for `build_store`: `configured` as the campaign file's
    `[network.<name>]` table gives it (chainlab.campaign.model.NetworkProfile.to_dict()),
    `measured` with the calibration's keys (None: not calibrated). `flagged` defaults to
    measured RTT or rate off the configured one by more than the calibration's TOLERANCE
    (its rule without the absolute slack, which these tests do not need)."""
    configured = NetworkProfile(
        name=name, delay_ms=float(delay_ms), jitter_ms=float(jitter_ms), rate_mbit=rate_mbit,
        loss=float(loss), mtu=mtu, initcwnd=initcwnd, seed=1,
    ).to_dict()  # fmt: skip
    measured = None
    if measured_rtt_ms is not None:
        measured = {
            "profile": name,
            "rtt_ms": measured_rtt_ms,
            "rtt_ms_min": measured_rtt_ms,
            "rtt_ms_max": measured_rtt_ms,
            "rtt_samples": 15,
            "expected_rtt_ms": 2 * delay_ms,
            "rate_mbit": measured_rate_mbit,
            "loss": measured_loss if measured_loss is not None else loss,
            "loss_probes": 1000,
            "tcp_mss": tcp_mss if tcp_mss is not None else mtu - 52,
            "configured_rtt_ms": 2 * delay_ms,
            "configured_rate_mbit": rate_mbit,
            "configured_loss": loss,
            "flag_reasons": [],
        }
    if flagged is None:
        flagged = False
        if measured is not None:
            rtt = 2 * delay_ms
            if rtt > 0 and abs(measured_rtt_ms - rtt) / rtt > TOLERANCE:
                flagged = True
            if rate_mbit and measured_rate_mbit is not None:
                flagged |= abs(measured_rate_mbit - rate_mbit) / rate_mbit > TOLERANCE
    if measured is not None:
        measured["flagged"] = bool(flagged)
    return {"profile": name, "configured": configured, "measured": measured, "flagged": flagged}


def network_example(n: int = 30) -> tuple[list[SyntheticScenario], list[dict], str]:
    """A small store with emulated networks and exact answers (latencies are constants that
    follow chainlab.network.model where a test wants a ratio of 1): (scenarios, profile
    rows for `build_store(network_profiles=...)`, campaign text). The baseline is line A on
    loopback.

    Profiles: net20 (RTT 20 ms, measured 20.2: not flagged), net100 (RTT 100, measured 108:
    flagged), lan (RTT 1, measured 1.18: 18 % off yet not flagged, as the calibration's
    0.2 ms slack judges it), net20lossy (RTT 20, 2 % loss), slow20 (RTT 20 at 10 Mbit/s),
    and edge (RTT 50) declared only in the campaign text, with no calibration row.
    Lines (server flight = bytes read; initial window 10 x 1448 = 14,480 bytes):
      A  ML-DSA-65 root + leaf, X25519MLKEM768, 12,000-byte flight (fits): loopback 1 ms,
         lan 3.36 and net100 217 (1 + 2 measured RTTs), net20 41, slow20 52.2608 (2 RTT +
         11.2608 ms serialization), net20lossy 41 with 3 of n handshakes 200 ms slower (a
         retransmission timeout)
      B  SLH-DSA-SHAKE-128f root + ML-DSA-65 leaf, 40,000-byte flight (one slow-start round
         more): loopback 5 ms, net20 65, edge 155, net20lossy 65 with 2 of n 200 ms slower
      C  as A with X25519, but 60 % of its handshakes' server flights are 20,000 bytes (the
         rest 12,000): loopback 0.8 ms; on net20 60.8 ms (3 RTT) for the large flights and
         40.8 ms for the others
      D  as A with MLKEM768, on net100 only (no loopback twin): 217 ms
    """
    ml, slh = "ML-DSA-65", "SLH-DSA-SHAKE-128f"

    def ns(values_ms) -> np.ndarray:
        return np.asarray(values_ms, dtype=np.float64) * 1e6

    def line(kex, root, latency_ms, flight, network="loopback", **kw):
        return SyntheticScenario(
            kex=kex,
            depth=2,
            root_alg=root,
            leaf_alg=ml,
            served_chain="full",
            network=network,
            n=n,
            n_warmup=2,
            latency_ms=latency_ms,
            server_cpu_ms=0.4,
            client_cpu_ms=0.4,
            bytes_read=flight,
            bytes_written=1500,
            **kw,
        )

    lossy_a = np.full(n, 41.0)
    lossy_a[:3] += 200.0
    lossy_b = np.full(n, 65.0)
    lossy_b[:2] += 200.0
    k_c = round(0.6 * n)
    flight_c = np.where(np.arange(n) < k_c, 20000.0, 12000.0)
    lat_c = np.where(flight_c > 14480, 60.8, 40.8)
    kex = "X25519MLKEM768"
    scenarios = [
        line(kex, ml, 1.0, 12000),
        line(kex, ml, 41.0, 12000, "net20"),
        line(kex, ml, 217.0, 12000, "net100"),
        line(kex, ml, 3.36, 12000, "lan"),
        line(kex, ml, 52.2608, 12000, "slow20"),
        line(kex, ml, 41.0, 12000, "net20lossy", overrides={"total_ns": ns(lossy_a)}),
        line(kex, slh, 5.0, 40000),
        line(kex, slh, 65.0, 40000, "net20"),
        line(kex, slh, 155.0, 40000, "edge"),
        line(kex, slh, 65.0, 40000, "net20lossy", overrides={"total_ns": ns(lossy_b)}),
        line("X25519", ml, 0.8, 12000, overrides={"server_bytes_written": flight_c}),
        line(
            "X25519",
            ml,
            40.8,
            12000,
            "net20",
            overrides={"total_ns": ns(lat_c), "server_bytes_written": flight_c},
        ),
        line("MLKEM768", ml, 217.0, 12000, "net100"),
    ]
    profiles = [
        network_profile("net20", delay_ms=10, measured_rtt_ms=20.2),
        network_profile("net100", delay_ms=50, measured_rtt_ms=108.0),
        network_profile("lan", delay_ms=0.5, measured_rtt_ms=1.18, flagged=False),
        network_profile("net20lossy", delay_ms=10, loss=0.02, measured_rtt_ms=20.1,
                        measured_loss=0.021),
        network_profile("slow20", delay_ms=10, rate_mbit=10, measured_rtt_ms=20.3,
                        measured_rate_mbit=9.95),
    ]  # fmt: skip
    baseline = scenarios[0].scenario_id
    campaign = default_campaign_toml(baseline) + "\n[network.edge]\ndelay_ms = 25\n"
    return scenarios, profiles, campaign
