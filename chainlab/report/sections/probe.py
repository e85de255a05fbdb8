"""Servers chainlab did not start: what the client saw, and the lab beside it."""

from __future__ import annotations

from chainlab.report.builder import Builder, ci, ci_of, codes, ints, nums, percents
from chainlab.report.document import Section
from chainlab.report.sections.registry import holds, section


def headline(b: Builder) -> list[tuple[str, str]]:
    t = b.a.targets
    if t.empty:
        return []
    ok = t[t["status"] == "ok"]
    fast = ok.sort_values(["mean_ms", "scenario_id"]) if len(ok) else ok
    return [
        (
            "What did the servers chainlab did not start answer?",
            f"{len(ok)} of {len(t)} completed"
            + (
                f"; fastest `{fast.iloc[0]['scenario_id']}` "
                f"{ci_of(fast.iloc[0], 'mean_ms')} ms mean latency"
                if len(ok)
                else ""
            ),
        )
    ]


@section(180, headline=headline, applies=holds("targets"))
def build(b: Builder) -> Section | None:
    a = b.a
    t = a.targets
    if t.empty:
        return None
    s = Section("probe", "Servers chainlab did not start")
    ok = t[t["status"] == "ok"]
    s.blocks.append(
        f"{len(t)} scenario(s) measured a server chainlab did not start ([targets] in the "
        "campaign file, or `chainlab probe`): the engine's client against the address, one "
        "connection at a time; the server's side is not measured (docs/methods/probes.md#probes). "
        f"{len(ok)} completed, {len(t) - len(ok)} failed."
    )
    cols = [
        ("scenario", codes(t["scenario_id"])),
        ("address", list(t["address"])),
        ("verify", [_ca(x) for x in t["ca"]]),
        ("status", [_status(r) for r in t.to_dict("records")]),
        (
            "n ok / measured",
            [f"{a_} / {m}" for a_, m in zip(t["n_ok"], t["n_measured"], strict=True)],
        ),
        ("group", [x if isinstance(x, str) else "" for x in t["negotiated_group"]]),
        ("scheme", [x if isinstance(x, str) else "" for x in t["negotiated_sigalg"]]),
        ("resumed", percents(t["resumed_fraction"])),
        ("mean ms", ci(t, "mean_ms", 3)),
        ("median ms", ci(t, "median_ms", 3)),
        ("p95 ms", nums(t["p95_ms"], 3)),
        ("client CPU ms", ci(t, "client_cpu_ms", 3)),
        ("read B", ints(t["bytes_read"])),
        ("written B", ints(t["bytes_written"])),
    ]
    s.blocks.append(
        b.table(
            "probe",
            "Each probed server, as the client saw it",
            f"Intervals at {b.level}: means by t, median by order statistics. Verify: the "
            "trust anchors the client checked the chain against.",
            t,
            cols,
        )
    )
    failed = t[t["failures"] != ""]
    if len(failed):
        cols = [
            ("scenario", codes(failed["scenario_id"])),
            ("failed handshakes by category (count: example)", list(failed["failures"])),
        ]
        s.blocks.append(
            b.table(
                "probe_failures",
                "Failed handshakes of probed servers",
                "Each failure is recorded by category; nothing is retried.",
                failed,
                cols,
            )
        )
    steps = a.target_load
    if len(steps):
        cols = [
            ("scenario", codes(steps["scenario_id"])),
            ("step", ints(steps["step"])),
            ("offered /s", nums(steps["offered_rate"], 1)),
            ("achieved /s", ci(steps, "achieved_rate", 1)),
            ("failed", percents(steps["failed_share"])),
            ("saturated", ints(steps["n_saturated"])),
            ("p50 ms", ci(steps, "p50_ms", 3)),
            ("p99 ms", ci(steps, "p99_ms", 3)),
            ("p99.9 ms", nums(steps["p999_ms"], 3)),
            ("generator limited", [g or "" for g in steps["generator_note"]]),
        ]
        s.blocks.append(
            b.table(
                "probe_load",
                "Probed servers under open-loop load",
                "Each step offers its rate on a schedule fixed in advance (the campaign's "
                "`rates`); latency from each attempt's intended start "
                "(docs/methods/capacity.md#capacity-under-load), "
                f"achieved rate with its {b.level} Poisson interval. Nothing of the server is "
                "read: a step's limit may be the server, the path or the generator (flagged).",
                steps,
                cols,
            )
        )
    c = a.target_chains
    if len(c):
        cols = [
            ("scenario", codes(c["scenario_id"])),
            ("position", ints(c["position"])),
            ("subject", list(c["subject"])),
            ("key", list(c["key_alg"])),
            ("signed with", list(c["sig_alg"])),
            ("DER B", ints(c["der_bytes"])),
        ]
        s.blocks.append(
            b.table(
                "probe_chains",
                "The chain each probed server sent",
                "As the client observed it in the scenario's first successful handshake, "
                "leaf first (position 0).",
                c,
                cols,
            )
        )
    side = a.target_beside
    if len(side):
        cols = [
            ("probe", codes(side["target_id"])),
            ("lab scenario", codes(side["lab_id"])),
            ("leaf", list(side["leaf_alg"])),
            ("lab network", list(side["lab_network"])),
            ("latency ×", ci(side, "latency_ratio", 3)),
            ("client CPU ×", ci(side, "client_cpu_ratio", 3)),
            ("read B", ints(side["target_bytes_read"])),
            ("lab read B", ints(side["lab_bytes_read"])),
        ]
        s.blocks.append(
            b.table(
                "probe_beside_lab",
                "Each probed server beside the lab's scenarios with its leaf",
                "Lab scenarios of this store with the probe's key exchange, handshake mode "
                f"and observed leaf algorithm; ×: the probe's mean over the lab's, {b.level} "
                "intervals.",
                side,
                cols,
            )
        )
    return s


def _ca(ca: str) -> str:
    if ca == "none":
        return "no verification"
    if ca == "system":
        return "system CA bundle"
    return f"CA file {ca}"


def _status(r: dict) -> str:
    if r["status"] == "ok":
        return "ok"
    return f"failed: {r['failure_cause']}"
