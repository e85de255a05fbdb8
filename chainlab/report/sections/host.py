"""Host speed: how far the machine's speed moved during each scenario, from a fixed
CPU-bound workload timed at its start and end (and around each load step)."""

from __future__ import annotations

from chainlab.analysis.load_capacity import normalised_latency
from chainlab.report import format as f
from chainlab.report.builder import Builder, ci, codes, ints, nums, percents
from chainlab.report.document import Section
from chainlab.report.sections.registry import holds, section
from chainlab.runner.host import HOST_DRIFT_LIMIT


def headline(b: Builder) -> list[tuple[str, str]]:
    h = b.a.host_speed
    if h is None or h.empty:
        return []
    moved = h[h["moved"]]
    drift = h["drift"].abs().max()
    return [
        (
            "Did the host's speed hold during the run?",
            ("yes" if moved.empty else "no")
            + f": the reference workload moved more than {HOST_DRIFT_LIMIT:.0%} in "
            f"{len(moved)} of {len(h)} scenario(s); largest drift "
            + (f"{f.num(drift * 100)} %" if drift == drift else "n/a"),
        )
    ]


@section(30, headline=headline, applies=holds("host_reference"))
def build(b: Builder) -> Section | None:
    h = b.a.host_speed
    if h is None or h.empty:
        return None
    s = Section("host", "Host speed during each scenario")
    s.blocks.append(
        "A fixed workload (`chainlab-engine reference`: SHAKE-256 over a fixed buffer, the Keccak "
        "work SLH-DSA-SHAKE and ML-DSA spend most of their time in) timed at each "
        "scenario's start and end and around each load step (on the server's cores where "
        "a campaign's [load] pins the server); scenarios that ran within one window of a "
        "second share its two readings (docs/methods/cost-model.md). Its "
        "time moves only with the host: a drift or a spread of several per cent explains "
        "wider intervals and shifts between scenarios measured minutes apart (this VM's "
        "speed is known to drift), and capacity can be read per unit of host speed. "
        "'shared core': the workload waited for its core (wall time over 1.2 × its CPU). "
        "Not pinned, it runs on every CPU at once and gives their mean; 'CPUs apart' is how "
        "much slower the slowest CPU was than the fastest at the start or end, whichever "
        "was more (a shared VM's CPUs are not always equally fast)."
    )
    cols = [
        ("scenario", codes(h["scenario_id"])),
        ("timings", ints(h["n"])),
        ("start ms", nums(h["start_ms"], 4)),
        ("end ms", nums(h["end_ms"], 4)),
        ("fastest ms", nums(h["fastest_ms"], 4)),
        ("slowest ms", nums(h["slowest_ms"], 4)),
        ("drift (end / start − 1)", [f.pct(x * 100) if x == x else "n/a" for x in h["drift"]]),
        ("spread (slowest / fastest − 1)", percents(h["spread"])),
        ("shared core", [f.yes_no(x) for x in h["shared_core"]]),
        # Where the kernel reports it: the hypervisor's steal over the scenario.
        *(
            [("steal ms (all CPUs)", nums(h["steal_ms"], 3))]
            if "steal_ms" in h and h["steal_ms"].notna().any()
            else []
        ),
        (f"moved > {HOST_DRIFT_LIMIT:.0%}", [f.yes_no(x) for x in h["moved"]]),
        # Unpinned readings on each CPU (schema 16 on): the larger gap between them.
        *(
            [("CPUs apart (slowest / fastest − 1)", percents(h["uneven"]))]
            if "uneven" in h and h["uneven"].notna().any()
            else []
        ),
    ]
    s.blocks.append(
        b.table("host_speed", "Reference workload per scenario", "Lower is faster.", h, cols)
    )
    moved = h[h["moved"]]
    if len(moved):
        s.blocks.append(
            f"The host's speed moved more than {HOST_DRIFT_LIMIT:.0%} during "
            f"{len(moved)} scenario(s): "
            + ", ".join(f"`{x}`" for x in moved["scenario_id"])
            + ". Their wall-clock figures mix two host speeds; their instruction counts, "
            "where the campaign took them, do not."
        )
    n = normalised_latency(h, b.a.summary)
    if len(n):
        cols = [
            ("scenario", codes(n["scenario_id"])),
            ("mean ms (measured)", ci(n, "mean_ms", 3)),
            ("host factor", nums(n["host_factor"], 3)),
            ("mean ms, host-speed normalised", ci(n, "normalised_mean_ms", 3)),
        ]
        s.blocks.append(
            b.table(
                "host_normalised",
                "Latency normalised to the run's median host speed (a label, not a measurement)",
                "Host factor: the run's median reference time over this scenario's (the mean "
                "of its start and end); the normalised mean is the measured one times it. It "
                "assumes the handshake slows as the reference workload does: CPU-bound work "
                "does, round trips on an emulated link do not. The measured figure is the "
                "one every other section uses.",
                n,
                cols,
            )
        )
    return s
