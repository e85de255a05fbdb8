"""Projection from loopback: the network model's prediction against the emulated latency."""

from __future__ import annotations

from chainlab.analysis.network import REFERENCE_PROFILES, NetworkAnalysis
from chainlab.report import format as f
from chainlab.report.builder import Builder, ci, codes, ints, nums
from chainlab.report.document import Section


def build(b: Builder, net: NetworkAnalysis) -> Section:
    """The section of `net`, the store's network analysis (the networks section has one)."""
    s = Section("networks-projection", "Projection from loopback")
    s.blocks.append(
        "The model of docs/network.md (chainlab/network/model.py) predicts a scenario's "
        "latency on a link from its loopback run: **predicted = base + (2 + k)·RTT + "
        "serialization**. Base is the loopback median (both sides' CPU on the critical "
        "path); 2 round trips are the TCP connect and the TLS 1.3 exchange; k more come "
        "from slow start when a flight is larger than the initial window (the window "
        "starts at initcwnd segments and doubles every round trip); serialization is the "
        "time to put the bytes (with 52 header bytes per segment) on a rate-limited link. "
        "It predicts the loss-free latency, so on a lossy link it is the median's "
        "prediction only while p(no loss), the chance a handshake loses no packet, is "
        "at least 0.5."
    )
    s.blocks.append(
        "**How to read it.** A ratio emulated / predicted near 1 (its interval covering "
        "1, or within a few per cent) says the network cost of that scenario is what its "
        "round trips and bytes explain, so the same formula carries its loopback "
        "measurement to networks that were not emulated: take base and the flights from "
        "the tables (the CSVs have them), your RTT, rate and initcwnd, and compute k and "
        "the serialization as above; the second table does this for reference links. "
        "Where the ratio is off, compare the model's round trips with the observed ones "
        "((emulated − base − serialization) / RTT): a fractional excess of a few per cent "
        "of an RTT is the link's and the kernel's own per-packet cost; a whole extra "
        "round trip is a window the model did not foresee (the receive window, delayed "
        "ACKs); a flagged profile is judged by 'predicted at measured link'; on a lossy "
        "profile the excess is retransmission, which the model leaves out."
    )
    pj = net.projection
    if len(pj):
        cols = [
            ("emulated scenario", codes(pj["emulated_id"])),
            ("profile", codes(pj["profile"])),
            ("RTT ms", nums(pj["rtt_ms"])),
            ("base ms", nums(pj["base_ms"], 4)),
            (
                "flights C1 / S bytes",
                [
                    f"{f.integer(c)} / {f.integer(sv)}"
                    for c, sv in zip(
                        pj["client_flight_bytes"], pj["server_flight_bytes"], strict=True
                    )
                ],
            ),
            (
                "round trips: model (slow start) | observed",
                [
                    f"{f.integer(m)} ({f.integer(k)}) | {f.num(o, 3)}"
                    for m, k, o in zip(
                        pj["round_trips"],
                        pj["extra_round_trips"],
                        pj["observed_round_trips"],
                        strict=True,
                    )
                ],
            ),
            ("serialization ms", nums(pj["serialization_ms"])),
            ("p(no loss)", nums(pj["p_no_loss"])),
            ("predicted ms", ci(pj, "predicted_ms", 4)),
            ("predicted at measured link ms", nums(pj["predicted_measured_link_ms"], 4)),
            ("emulated median ms", ci(pj, "emulated_median_ms", 4)),
            ("emulated / predicted", ci(pj, "ratio")),
            ("emulated / predicted at measured link", nums(pj["ratio_measured_link"], 4)),
        ]
        s.blocks.append(
            b.table(
                "network_projection",
                "Predicted versus emulated latency",
                "One row per emulated scenario with a loopback twin. Predicted: "
                "chainlab.network.model.predict on the twin's samples and the configured "
                "profile (its base is the twin's median; the interval carries the twin's "
                "median interval, not model error). At measured link: the same with the "
                "calibrated RTT, rate (where one is configured) and loss. Ratio interval: "
                "percentile interval of exact bootstrap replicates of both medians "
                f"(B = {b.cfg.bootstrap_resamples}).",
                pj,
                cols,
            )
        )
    rf = net.reference
    if len(rf):
        names = [str(p["name"]) for p in REFERENCE_PROFILES]
        first = rf.drop_duplicates("scenario_id")
        cols = [
            ("loopback scenario", codes(first["scenario_id"])),
            ("class", [b.cls_name(c) for c in first["placement_class"]]),
            ("base ms", nums(first["base_ms"], 4)),
            ("server flight bytes", ints(first["server_flight_bytes"])),
        ]
        for name in names:
            g = rf[rf["profile"] == name].set_index("scenario_id").loc[first["scenario_id"]]
            cols.append(
                (
                    f"{name}: ms (round trips)",
                    [
                        f"{f.num(v, 4)} ({f.integer(k)})"
                        for v, k in zip(g["predicted_ms"], g["round_trips"], strict=True)
                    ],
                )
            )
        rp = net.reference_profiles.to_dict("records")[0]
        s.blocks.append(
            b.table(
                "network_reference_projection",
                "Projected latency on links that were not emulated",
                "Every successful loopback scenario, by the model above, on reference "
                f"links with MTU {f.integer(rp['mtu'])} (MSS {f.integer(rp['mss'])}), "
                f"initcwnd {f.integer(rp['initcwnd'])} and no loss: "
                + "; ".join(names)
                + ". A projection, not a measurement: trust it as far as the ratios above "
                "are near 1.",
                rf,
                cols,
            )
        )
    return s
