"""What a run must make because this machine's caches lack it (chainlab.model.run_estimate
.Fresh): the primitives and reference handshakes the primitives cache does not hold enough
of, and the hierarchies the hierarchy cache does not hold. `validate` and a run read it the
same way, before anything is made.
"""

from __future__ import annotations

from pathlib import Path

from chainlab import engine
from chainlab.campaign.model import PrimitivesPlan, Scenario
from chainlab.errors import ChainlabError
from chainlab.model.run_estimate import Fresh
from chainlab.runner import pki, primitives, references
from chainlab.runner.primitives_cache import cache_path, cached_index


def fresh(
    engine_bin: Path,
    scenarios: list[Scenario],
    seed: int,
    plan: PrimitivesPlan,
    measured: list[Scenario] | None = None,
) -> Fresh:
    """`scenarios` to run, in run order (a hierarchy is charged to the first that needs it);
    `measured`: the scenarios whose primitives the run measures (all the campaign selects, a
    resumed run's completed ones too), `scenarios` when None."""
    measured = scenarios if measured is None else measured
    prims: list = []
    refs: list = []
    if plan.measure:
        items = primitives.items_for(measured)
        keys = references.reference_keys(
            primitives.stacks_of(measured),
            references.transports_of(measured),
            references.peers_of(measured),
        )
        for p in references.profiles_of(measured):
            keys += references.path_reference_keys(*p)
        keys += [references.wait_reference_key(st) for st in references.waits_of(measured)]
        try:
            wanted = [item.timing_key for item in items] + keys
            by_key = cached_index(cache_path(engine.info()), wanted)
        except (ChainlabError, OSError):
            by_key = {}
        for item in items:
            if primitives.needs_measuring(item, by_key, plan):
                prims.append((item.timer.engine, *item.timing_key))
        for key in keys:
            if primitives.needs_measuring(key, by_key, plan):
                refs.append(key)
    seen: set[Path] = set()
    hierarchies = []
    for s in scenarios:
        if s.target_spec is not None:
            continue
        for spec in pki.needed(s, seed):
            where = pki.location(engine_bin, *spec)
            if where not in seen and not pki.cached(where):
                # its MTCs' log entries: a batch per landmark interval renewed in
                cert = s.handshake.credential
                batch = cert.batch * cert.renewals if spec[3] else 0
                hierarchies.append((s.scenario_id, spec[0], batch))
            seen.add(where)
    return Fresh(tuple(prims), tuple(refs), tuple(hierarchies))
