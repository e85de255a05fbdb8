"""Estimated time of a network profile's calibration (chainlab.network.calibrate), which a
run does once per emulated profile before its scenarios: part of the run-time estimate
(chainlab.model.run_estimate) beside each scenario's (chainlab.model.estimate).
"""

from __future__ import annotations

from chainlab.campaign.model import NetworkProfile, Scenario
from chainlab.model.estimate import SYN_RTO_MS
from chainlab.network.calibrate import BULK_MAX_S, plan_for
from chainlab.network.profile import parse_profile

# chainlab.network.calibrate per profile: its probe processes and the parts that do not
# scale with the link (0.6 s measured on the 0.5 ms lan profile, unlimited rate).
CALIBRATION_BASE_S = 0.6
# Round trips of the calibration besides its TCP connects (bulk, train and report requests).
CALIBRATION_EXTRA_RTTS = 4
# A lossy link's bulk transfer runs into its 2 s cap and then drains the sender's buffer at
# the loss-limited rate: calibrating 50 ms one-way + 1 % loss took 8.4 s, of which the model
# without this term explains 2.9 s.
CALIBRATION_LOSSY_BULK_S = 5.5
# Without a rate or loss, a path of tens of ms runs its bulk transfer to its time bound
# (plan_for's bulk_seconds, BULK_TARGET_S there: wan50's calibration took 2.27 s twice on
# 2026-11-30, estimated 2.50 s; with the 2 s bound before, 3.5-3.6 s, estimated 3.75); on
# the 0.5 ms lan it fits the base.
UNLIMITED_BULK_RTT_MS = 10.0


def calibration_seconds(profile: NetworkProfile) -> float:
    """Estimated time of one calibration of the profile (chainlab.network.calibrate): its
    TCP connects, bulk transfer, packet train and loss probes at the profile's RTT and rate."""
    prof = parse_profile(profile.to_dict())
    plan = plan_for(prof)
    rtt_s = prof.rtt_ms / 1000
    t: float = CALIBRATION_BASE_S + (plan["connects"] + CALIBRATION_EXTRA_RTTS) * rtt_s
    t += plan["connects"] * (1 - (1 - prof.loss) ** 2) * SYN_RTO_MS / 1000
    if prof.rate_mbit:
        rate_bps = prof.rate_mbit * 1e6
        t += min(plan["bulk_bytes"] * 8 / rate_bps, BULK_MAX_S)
        t += plan["train_packets"] * prof.mtu * 8 / rate_bps
    elif not prof.loss and prof.rtt_ms >= UNLIMITED_BULK_RTT_MS:
        t += plan["bulk_seconds"]
    t += 2 * plan["loss_probes"] * plan["probe_interval_s"]
    if prof.loss:
        t += CALIBRATION_LOSSY_BULK_S
    return t


def calibration_total(scenarios: list[Scenario]) -> tuple[int, float]:
    """(profiles, seconds): a run calibrates each emulated profile its scenarios use once."""
    profiles = {s.network: s.network_profile for s in scenarios if s.network_profile}
    return len(profiles), sum(calibration_seconds(p) for p in profiles.values())
