"""Landmark lag: Merkle Tree Certificates for a population whose clients hold landmarks of
different ages, what falls back and what the population pays against an X.509 dual chain,
and the landmark interval from which the rollback rule fires
(chainlab.analysis.landmark_lag)."""

from __future__ import annotations

from chainlab.analysis import landmark_lag, rollout
from chainlab.axes import rollout as populations
from chainlab.report import format as f
from chainlab.report.builder import Builder, ci, codes, ints, nums
from chainlab.report.document import Section
from chainlab.report.sections.registry import holds, section
from chainlab.report.sections.rollout import crossing_answer


def _kinds(spec: str) -> str:
    """A population as its kinds' shares and landmarks: 'cur 70 % (0), never 2 % (none)'."""
    return ", ".join(
        f"{k.name} {k.share:.0%} ({k.landmarks or '?'})" for k in populations.parse(spec)
    )


def _interval(b: Builder, batch) -> str:
    """A landmark interval: its entries, and its hours at the campaign's issuance rate
    ([analysis] mtc_entries_per_hour) when it gives one."""
    rate = b.a.config.mtc_entries_per_hour
    entries = f"{f.integer(batch)} entries"
    return f"{f.num(batch / rate, 3)} h ({entries})" if rate else entries


def _share(x) -> str:
    return f"{x:.1%}" if x == x else "n/a"


def _shares_ci(df, col: str) -> list[str]:
    """A share with its interval, as percentages."""
    return [
        f"{_share(e)} [{_share(lo)}, {_share(hi)}]" if e == e else "n/a"
        for e, lo, hi in zip(df[col], df[f"{col}_lo"], df[f"{col}_hi"], strict=True)
    ]


def headline(b: Builder) -> list[tuple[str, str]]:
    lag = b.a.landmark_lag
    if lag.empty:
        return []
    out = []
    worst = lag.loc[lag["fallback_predicted"].idxmax()]
    out.append(
        (
            "MTC landmark lag: the largest fallback share",
            f"{_share(worst['fallback_measured'])} [{_share(worst['fallback_measured_lo'])}, "
            f"{_share(worst['fallback_measured_hi'])}] of attempts took the standalone MTC "
            f"(predicted {_share(worst['fallback_predicted'])}; {worst['server_stack']}, "
            f"{worst['network']}, landmarks every {_interval(b, worst['mtc_batch'])})",
        )
    )
    first = landmark_lag.crossing(b.a.landmark_lag_rule)
    out += [
        (
            f"MTC landmark lag, rollback rule on {r['server_stack']}, {r['network']}, "
            f"{rollout.load_label(r['load'])}",
            crossing_answer(r, lambda x: f"landmarks every {_interval(b, x)}", "classical"),
        )
        for r in first.to_dict("records")
    ]
    return out


@section(176, headline=headline, applies=holds("landmark_attempts"))
def build(b: Builder) -> Section | None:
    lag, verdicts = b.a.landmark_lag, b.a.landmark_lag_rule
    if lag.empty:
        return None
    factor, quote, line = rollout.rollback_factor()
    s = Section("landmark_lag", "MTC landmark lag")
    s.blocks.append(
        "A server holds the landmark-relative Merkle Tree Certificates of its last landmarks "
        "(renewals) and its standalone one; each attempt of its client draws a kind that holds "
        "the landmarks up to k intervals old (k in brackets; none: no landmarks) and asks for "
        "its newest landmark's trust anchor ID and the CA's. A kind whose newest landmark the "
        "server has a certificate for gets it; the others fall back to the standalone "
        "certificate (docs/methods/mtc.md#landmark-lag). Fallback: predicted from the kinds' "
        "shares, measured as the share of successful attempts whose client verified the "
        f"standalone certificate, with its {b.level} Wilson interval. Landmark interval: the "
        "log's entries in one landmark interval, which set the proof's hashes, and in hours "
        "at the campaign's issuance rate where it gives one ([analysis] mtc_entries_per_hour)."
    )
    cols = [
        ("server", list(lag["server_stack"])),
        ("network", list(lag["network"])),
        ("landmark interval", [_interval(b, x) for x in lag["mtc_batch"]]),
        ("proof hashes", ints(lag["proof_hashes"])),
        ("renewals", ints(lag["renewals"])),
        ("kinds", [_kinds(p) for p in lag["population"]]),
        ("scenario", codes(lag["scenario_id"])),
        ("fallback predicted", [_share(x) for x in lag["fallback_predicted"]]),
        ("fallback measured", _shares_ci(lag, "fallback_measured")),
        ("sustained /s/core", ci(lag, "sustained_per_core", 4)),
        ("overload throughput /s/core", ci(lag, "capacity_per_core", 4)),
    ]
    for load in rollout.loads():
        label = "single" if load == rollout.SINGLE else f"@{load}"
        cols += [
            (f"p50 ms {label}", ci(lag, f"p50_ms_{load}", 3)),
            (f"p99 ms {label}", ci(lag, f"p99_ms_{load}", 3)),
        ]
    cols += [
        ("read B", ci(lag, "bytes_read", 5)),
        ("server CPU ms", ci(lag, "server_cpu_ms", 3)),
    ]
    s.blocks.append(
        b.table(
            "landmark_lag",
            "Each population: what falls back and what it pays",
            f"Percentiles and means with {b.level} intervals (a p99 of a hundred attempts has "
            "no upper end: n/a). Read B: what the client read per handshake; server CPU per "
            "connection, one at a time. Sustained: the heaviest searched offer per server core "
            "it kept up with under load; overload throughput: what the capacity steps achieved "
            "past it (docs/methods/capacity.md).",
            lag,
            cols,
        )
    )
    against = lag[lag["x509_id"].notna()]
    if not against.empty:
        s.blocks.append(
            b.table(
                "landmark_lag_vs_x509",
                "Against the X.509 dual chain serving post-quantum clients",
                "Each population's mean per connection over the X.509 dual chain's (ECDSA and "
                "ML-DSA chains, every client post-quantum capable) on the same server stack "
                f"and path, with {b.level} intervals (delta method on the log scale).",
                against,
                [
                    ("server", list(against["server_stack"])),
                    ("network", list(against["network"])),
                    ("landmark interval", [_interval(b, x) for x in against["mtc_batch"]]),
                    ("fallback predicted", [_share(x) for x in against["fallback_predicted"]]),
                    ("X.509 scenario", codes(against["x509_id"])),
                    ("latency ×", ci(against, "mean_ms_vs_x509", 3)),
                    ("read B ×", ci(against, "bytes_read_vs_x509", 3)),
                    ("server CPU ×", ci(against, "server_cpu_ms_vs_x509", 3)),
                ],
            )
        )
    if not verdicts.empty:
        s.blocks.append(
            f"The guide's rollback rule (line {line}: “{quote}”): each population's p99 over "
            "the all-classical X.509 baseline's (the dual chain's server, every client "
            "classical) on the same stack and path at the same load, with the interval from "
            f"both p99 intervals. 'rolls back': above {factor:g}; 'holds': below; "
            "'undecided': across it or without an end."
        )
        s.blocks.append(
            b.table(
                "landmark_lag_rule",
                "The rollback rule per population, landmark interval and load",
                "",
                verdicts,
                [
                    ("server", list(verdicts["server_stack"])),
                    ("network", list(verdicts["network"])),
                    ("landmark interval", [_interval(b, x) for x in verdicts["mtc_batch"]]),
                    ("fallback predicted", [_share(x) for x in verdicts["fallback_predicted"]]),
                    ("load", [rollout.load_label(x) for x in verdicts["load"]]),
                    ("p99 ms", nums(verdicts["p99_ms"], 3)),
                    ("classical p99 ms", nums(verdicts["baseline_p99_ms"], 3)),
                    ("p99 × classical", ci(verdicts, "ratio", 3)),
                    ("verdict", list(verdicts["verdict"])),
                ],
            )
        )
    return s
