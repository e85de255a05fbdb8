"""Emulated networks: profiles configured versus calibrated, scenarios on them, latency plots."""

from __future__ import annotations

from typing import Any

import numpy as np

from chainlab.analysis.network import EXCEED_MARK_SHARE
from chainlab.network.calibrate import RTT_FLOOR_MS, TOLERANCE
from chainlab.report import format as f
from chainlab.report.builder import Builder, ci, codes, ints, nums
from chainlab.report.document import Section
from chainlab.report.sections import projection
from chainlab.report.sections.registry import section, uses

# The calibration's tolerance, as the text says it.
TOLERANCE_TEXT = f"{TOLERANCE * 100:g} %"


def headline(b: Builder) -> list[tuple[str, str]]:
    net = b.a.network
    if net is None or net.profiles.empty:
        return []
    pr = net.profiles.drop_duplicates("profile")
    flagged = sorted(pr.loc[pr["calibration_flagged"] == True, "profile"])  # noqa: E712

    def one(r) -> str:
        measured = r["measured_rtt_ms"]
        got = f"{f.num(measured, 4)} ms" if measured == measured else "not calibrated"
        return f"`{r['profile']}` RTT {got} (configured {f.num(r['rtt_ms'], 4)} ms)"

    return [
        (
            "Did each emulated path deliver the round-trip time it was configured with?",
            "; ".join(one(r) for r in pr.to_dict("records"))
            + f"; calibration flagged: {', '.join(flagged) if flagged else 'none'}",
        )
    ]


@section(50, headline=headline, applies=uses("network"))
def build(b: Builder) -> Section | None:
    net = b.a.network
    if net is None:
        return None
    a, s = b.a, Section("networks", "Emulated networks")
    sm = a.summary
    em = sm[sm["network"] != "loopback"]
    pr = net.profiles
    s.blocks.append(
        f"{len(em)} of the {len(sm)} scenarios ran over emulated links "
        f"({len(pr['profile'].unique())} profile(s)), the others over loopback: client and "
        "server in two network namespaces joined by chainlab's link, which delays, paces "
        "and drops packets while both ends keep the kernel's own TCP (docs/network.md). "
        "A run calibrates each profile before its first use. The **initial window** is "
        "initcwnd × MSS, with MSS = MTU − 52 bytes: IPv4 20 + TCP 20 + the 12-byte "
        "timestamp option Linux negotiates by default (without timestamps it would be "
        "MTU − 40); 'TCP MSS measured' is what the calibration's TCP connection reported, "
        "which checks that assumption per profile."
    )
    bad_mss = pr[pr["mss_confirmed"] == False]  # noqa: E712 (None = not measured)
    if len(bad_mss):
        s.blocks.append(
            "**The MSS assumption does not hold for** "
            + ", ".join(
                f"`{r.profile}` (measured {f.integer(r.tcp_mss)}, assumed {f.integer(r.mss)})"
                for r in bad_mss.itertuples()
            )
            + "; its initial-window shares and projections use the assumed MSS."
        )
    several_runs = pr["run_id"].nunique() > 1

    calibrated = np.isfinite(pr["measured_rtt_ms"].to_numpy(dtype=float))

    def flag(v, cal):
        if v is True:
            return "**FLAGGED**"
        return "ok" if v is False and cal else "not calibrated"

    def meas(v, lo, hi):
        if v != v:
            return "n/a"
        if lo == lo and hi == hi and (lo != v or hi != v):
            return f"{f.num(v, 4)} ({f.num(lo, 4)}–{f.num(hi, 4)})"
        return f.num(v, 4)

    def rate_cfg(v):
        return f.num(v, 4) if v == v else "unlimited"

    def rate_meas(r):
        if r["rate_mbit"] == r["rate_mbit"]:
            return f"{f.num(r['measured_rate_mbit'], 4)} (TCP {f.num(r['tcp_rate_mbit'], 4)})"
        if r["measured_rate_mbit"] == r["measured_rate_mbit"]:
            return f"link not limiting (train {f.num(r['measured_rate_mbit'], 4)})"
        return "n/a"

    def pct(v):
        return f.pct(v * 100) if v == v else "n/a"

    def verdict(r):
        parts = [r["source"]]
        if r["calibration_flagged"] is not None:
            cal = "flags it" if r["calibration_flagged"] else "accepts it"
            parts.append(f"calibration {cal}")
        if r["calibration_reasons"]:
            parts.append(r["calibration_reasons"])
        return "; ".join(parts)

    rows = [r for _, r in pr.iterrows()]
    cols: list[tuple[str, list[Any]]] = [("profile", codes(pr["profile"]))]
    if several_runs:
        cols.append(("run", codes(pr["run_id"])))
    cols += [
        ("RTT ms configured", nums(pr["rtt_ms"], 4)),
        (
            "RTT ms measured (min–max)",
            [
                meas(v, lo, hi)
                for v, lo, hi in zip(
                    pr["measured_rtt_ms"],
                    pr["measured_rtt_min_ms"],
                    pr["measured_rtt_max_ms"],
                    strict=True,
                )
            ],
        ),
        ("RTT off by", [pct(v) for v in pr["rtt_deviation"]]),
        ("rate Mbit/s configured", [rate_cfg(v) for v in pr["rate_mbit"]]),
        ("rate measured (train, TCP)", [rate_meas(r) for r in rows]),
        ("rate off by", [pct(v) for v in pr["rate_deviation"]]),
        ("loss configured", [f.num(v * 100) + " %" for v in pr["loss"]]),
        (
            "loss measured (probes)",
            [
                f"{f.num(v * 100)} % ({f.integer(n)})" if v == v else "n/a"
                for v, n in zip(pr["measured_loss"], pr["loss_probes"], strict=True)
            ],
        ),
        (
            "MTU / MSS / initcwnd",
            [
                f"{f.integer(m)} / {f.integer(ss)} / {f.integer(i)}"
                for m, ss, i in zip(pr["mtu"], pr["mss"], pr["initcwnd"], strict=True)
            ],
        ),
        ("initial window bytes", ints(pr["window_bytes"])),
        ("TCP MSS measured", ints(pr["tcp_mss"])),
        ("flag", [flag(v, c) for v, c in zip(pr["flagged"], calibrated, strict=True)]),
        ("source, calibration's verdict", [verdict(r) for r in rows]),
        ("scenarios", ints(pr["n_scenarios"])),
    ]
    s.blocks.append(
        b.table(
            "network_profiles",
            "Network profiles: configured versus measured",
            "Measured before use: RTT = median of TCP connects (min–max over them), rate = "
            "a packet train through the bottleneck (TCP: a bulk transfer), loss = paced UDP "
            "probes both ways (docs/network.md, Calibration). 'flag' is the flag the run "
            f"stored: measured RTT or rate more than {TOLERANCE_TEXT} off the configuration (the "
            "calibration judges the RTT against the configured RTT plus the SYN's "
            f"serialization, with at least {RTT_FLOOR_MS:g} ms of slack). 'RTT off by' and 'rate "
            "off "
            "by' are measured / configured − 1.",
            pr,
            cols,
        )
    )
    flagged = pr[pr["flagged"] == True]  # noqa: E712 (None = not calibrated)
    if len(flagged):
        s.blocks.append(
            "**Flagged: "
            + ", ".join(f"`{x}`" for x in flagged["profile"])
            + f".** The link did not behave as configured (RTT or rate more than {TOLERANCE_TEXT} "
            "off), "
            "so those scenarios measured the network the calibration describes, not the "
            "one the profile names: read their latencies against the measured RTT and rate "
            "(the projection table's 'predicted at measured link' recomputes the model "
            "with them; the plots put them at their configured RTT, marked '(flagged)'). "
            "Their byte counts stand: they do not depend on the link."
        )
    elif calibrated.all():
        s.blocks.append(
            f"No profile is flagged: every measured RTT and rate is within {TOLERANCE_TEXT} of its "
            "configuration, so the latencies below belong to the networks as configured."
        )
    else:
        s.blocks.append("No calibrated profile is flagged.")
    if not calibrated.all():
        s.blocks.append(
            "Not calibrated, so nothing confirms that the link behaved as configured: "
            + ", ".join(f"`{x}`" for x in pr.loc[~calibrated, "profile"])
            + "."
        )
    differ = pr[pr["flag_differs"]]
    if len(differ):
        s.blocks.append(
            "For "
            + ", ".join(f"`{x}`" for x in differ["profile"])
            + " the stored flag and the calibration's own verdict differ (a run that "
            "judged the flag itself, against the configured RTT and rate alone); the "
            "table shows both."
        )
    slack = pr[pr["accepted_within_slack"]]
    if len(slack):
        s.blocks.append(
            f"Not flagged although the RTT is more than {TOLERANCE_TEXT} off: "
            + ", ".join(
                f"`{r.profile}` ({f.num(r.measured_rtt_ms - r.rtt_ms, 3)} ms over "
                f"{f.num(r.rtt_ms, 3)} ms)"
                for r in slack.itertuples()
            )
            + f". The calibration allows at least {RTT_FLOOR_MS:g} ms, the link's own latency "
            "budget, "
            "below which a millisecond-scale RTT cannot be resolved; such a profile's "
            "latencies carry that fraction of a millisecond per round trip."
        )
    for note in net.notes:
        s.blocks.append(note)

    timing = net.link_timing
    if len(timing):
        s.blocks.append(
            b.table(
                "link_timing",
                "The link's own timing error per scenario",
                "How late the forwarder's timer released delayed packets while it carried "
                "each scenario (every delayed packet carries that error), and the longest "
                "wait of a packet for the bottleneck. 'flagged': its packets were held later "
                f"on average than the profile's tolerance ({TOLERANCE_TEXT} of its RTT, at "
                f"least {RTT_FLOOR_MS:g} ms), so that scenario's latencies are inflated by "
                "the link.",
                timing,
                [
                    ("scenario", codes(timing["scenario_id"])),
                    ("profile", codes(timing["network"])),
                    ("timer late µs, mean", nums(timing["link_timer_late_us_mean"], 3)),
                    ("timer late µs, max", nums(timing["link_timer_late_us_max"], 4)),
                    ("queue wait µs, max", nums(timing["link_queue_wait_us_max"], 4)),
                    ("flagged", [f.yes_no(x) for x in timing["link_flagged"]]),
                ],
            )
        )

    pts = net.points
    ep = pts[pts["emulated"]] if len(pts) else pts
    if len(ep):
        cols = [
            ("scenario", codes(ep["scenario_id"])),
            ("hierarchy", list(ep["line_label"])),
            ("profile", codes(ep["network"])),
            ("RTT ms", nums(ep["rtt_ms"])),
            ("loss", [f.num(v * 100) + " %" if v == v else "n/a" for v in ep["loss"]]),
            ("n", ints(ep["n_ok"])),
            ("median ms", ci(ep, "median_ms")),
            ("mean ms", ci(ep, "mean_ms")),
            ("p95 ms", ci(ep, "p95_ms")),
            ("loopback median ms", nums(ep["loopback_median_ms"])),
            ("server flight bytes (median)", ints(ep["server_flight_bytes"])),
            ("initial window bytes", ints(ep["window_bytes"])),
            (
                "flight > initial window",
                [
                    f"{f.ci(v, lo, hi)} ({f.integer(k)} of {f.integer(n)})" if v == v else "n/a"
                    for v, lo, hi, k, n in zip(
                        ep["exceed_share"],
                        ep["exceed_share_lo"],
                        ep["exceed_share_hi"],
                        ep["n_exceed"],
                        ep["n_server"],
                        strict=True,
                    )
                ],
            ),
        ]
        s.blocks.append(
            b.table(
                "network_scenarios",
                "Scenarios on emulated networks",
                "Latency statistics as in the scenario summary (median: order-statistic "
                "interval). 'flight > initial window': the share of handshakes whose server "
                "flight (the server's bytes written to the end of its handshake) is larger "
                "than initcwnd × MSS, with a Wilson interval; such a flight cannot leave in "
                "the first window and costs at least one more round trip. The CSV also has "
                "the loopback twins and each point's profile family.",
                pts,
                cols,
            )
        )
    s.blocks.append(
        b.figure(
            "network_rtt",
            "Median latency of each hierarchy on each profile, at the profile's configured "
            "RTT (loopback at 0). Solid and other styled lines join profiles of one family "
            "(differing only in RTT); the dashed line is the model's prediction from the "
            "loopback twin; a ring marks points where at least "
            f"{EXCEED_MARK_SHARE * 100:g} % of the handshakes' server flight exceeded the "
            "initial window. Points of different families at the same RTT are set apart "
            "slightly.",
        )
    )
    loss_fig = b.figure(
        "network_loss",
        f"Mean latency (the loss tail moves it; bars: {b.level} intervals) and p95 of each "
        "hierarchy across profiles that differ only in loss; dashed: the model's loss-free "
        "prediction; rings as in the RTT plot.",
    )
    if loss_fig is not None:
        s.blocks.append(loss_fig)
    elif (pr["loss"] > 0).any():
        s.blocks.append(
            "No latency-versus-loss plot: no two profiles here differ only in loss (it "
            "needs e.g. the same RTT and rate with and without loss). The lossy profiles' "
            "scenarios are in the RTT plot and the tables."
        )
    else:
        s.blocks.append("No profile has loss, so there is no latency-versus-loss plot.")
    s.blocks.append(projection.build(b, net))
    return s
