"""Check a campaign file and list the scenarios it expands to, with an estimated run time.

Nothing runs and nothing is written. Every problem is printed on its own line with the file,
the key path, the bad value and what is allowed; the exit status is then 2.
"""

from chainlab import engine
from chainlab.commands import campaign_arguments, read_campaign
from chainlab.errors import ChainlabError
from chainlab.model import calibration_time, estimate, run_estimate
from chainlab.runner import fresh, primitives_cache
from chainlab.runner.campaign import estimate_note
from chainlab.schema import counted

HELP = "check a campaign file; list its scenarios and estimated run time"


def add_arguments(parser):
    campaign_arguments(parser)
    parser.add_argument(
        "--workers",
        type=int,
        metavar="W",
        help="also estimate the wall time on W worker hosts of a Dask cluster (--cluster)",
    )


def run(args) -> int:
    if args.workers is not None and args.workers < 1:
        # Before anything is read or printed.
        raise ChainlabError(f"--workers {args.workers}: allowed: at least 1")
    c = read_campaign(args.file)
    selected = c.select(args.campaign)
    names = args.campaign or list(c.campaigns)
    member: dict[str, list[str]] = {}
    for camp, sid in c.memberships(names):
        member.setdefault(sid, []).append(camp)
    print(
        f"{c.path.name}: campaign {c.name!r}, {counted(len(selected), 'scenario')} "
        f"(campaigns: {', '.join(f'{n} ({len(set(c.campaigns[n]))})' for n in names)}), "
        f"order {c.order}, seed {c.seed}"
    )
    if c.baseline:
        print(f"baseline: {c.baseline}")
    width = max(len(s.scenario_id) for s in selected)
    print(
        f"{'scenario':<{width}}  {'campaigns':<9}  {'sampling':<28}  {'est. handshakes':>17}"
        f"  {'est. time':>9}"
    )
    # The cost model from this machine's measured primitives, where they are cached; the
    # built-in table for scenarios it cannot predict (or without a measured machine).
    # With the spread the other load on the CPUs makes now, as a run now would take it.
    # At the cached primitives' speed: a run also takes a host reading as it starts and
    # prices at that speed (docs/methods/cost-model.md), which `validate` starts no engine for.
    model, load_read, at_host = primitives_cache.estimate_model()
    fallback = sum(model is None or bool(estimate.missing_primitives(s, model)) for s in selected)
    for s in selected:
        e = estimate.scenario(s, model)
        p = s.sampling
        if p.mode == "fixed":
            samp = f"fixed {p.count}"
            counts = f"{e.handshakes_expected}"
        else:
            cap = f", cap {p.time_cap_s:g}s" if p.time_cap_s else ""
            samp = f"adaptive {100 * p.target_rel_halfwidth:g}% {p.min}-{p.max}{cap}"
            counts = f"~{e.handshakes_expected} ({e.handshakes_low}-{e.handshakes_high})"
        print(
            f"{s.scenario_id:<{width}}  {','.join(member[s.scenario_id]):<9}  {samp:<28}  "
            f"{counts:>17}  {estimate.fmt_duration(e.seconds_expected):>9}"
        )
    profiles, calibration = calibration_time.calibration_total(selected)
    if profiles:
        print(
            f"network calibration: {profiles} emulated profile(s), once each per run, "
            f"{estimate.fmt_duration(calibration)}"
        )
    shared = [sid for sid, cs in member.items() if len(set(cs)) > 1]
    if shared:
        print(f"{counted(len(shared), 'scenario')} shared by several campaigns and run once")
    # Matrices of one campaign that cross to the same scenario (each listed once in it).
    twice = [sid for sid, cs in member.items() if len(cs) > len(set(cs))]
    if twice:
        print(f"{counted(len(twice), 'scenario')} made by several matrices and run once")
    # What this machine's caches lack (a run's first minutes), as the run will see it.
    try:
        made = fresh.fresh(engine.path(), selected, c.seed, c.primitives)
    except (ChainlabError, OSError):
        made = None
    est = run_estimate.run(selected, model, made, c.primitives, load_read, host_reading_ns=at_host)
    print(
        f"{estimate_note(est)} (cost model in docs/campaigns.md#estimated-run-time"
        + ("" if made else "; no engine built: caches not read, nothing counted as missing")
        + ")"
    )
    if args.workers is not None:
        wall, share = run_estimate.cluster_seconds(selected, args.workers, model)
        print(
            f"estimated on {args.workers} worker host(s): {estimate.fmt_duration(wall)} "
            f"(one scenario per host at a time, longest first; the busiest host does "
            f"{100 * share:.0f} % of the work; each emulated scenario calibrates its profile)"
        )
    if model is not None and fallback == 0:
        print(f"handshake costs: the cost model, from {model.source}")
    else:
        print(
            f"handshake costs: the built-in table for {fallback} of "
            f"{counted(len(selected), 'scenario')} (their primitives are not measured on this "
            f"machine yet; `chainlab predict {args.file}` or any run measures them)"
            + (f", the cost model from {model.source} for the rest" if model else "")
        )
    for n in c.notes:
        print(f"note: {n}")
    return 0
