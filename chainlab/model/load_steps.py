"""Load steps against what the cost model expects of each scenario (docs/campaigns.md,
[load]): each step must hold about MIN_STEP_ATTEMPTS attempts, and a generator's slots must
be able to start a step's rate. Checked after the file is read (chainlab.campaign.load) and
before anything is built or written: by `validate`, `predict` and every run
(chainlab.runner.campaign.run); one line each, as the loader's problems read.
"""

from __future__ import annotations

from chainlab.campaign.fields import MAX_IN_FLIGHT, MIN_STEP_ATTEMPTS
from chainlab.campaign.model import Campaign, Scenario
from chainlab.model import estimate
from chainlab.schema import Problems


def check(campaign: Campaign) -> None:
    """Raise CampaignError listing every load step of `campaign` that cannot hold its
    attempts (nothing for a campaign without [load])."""
    v = Problems(str(campaign.path))
    check_steps(v, {s.scenario_id: s for s in campaign.scenarios.values() if s.load})
    v.raise_if_any()


def check_steps(v: Problems, scenarios: dict[str, Scenario]) -> None:
    """Each step must hold about MIN_STEP_ATTEMPTS attempts: at its rate, or for
    fractions at the capacity the cost model expects of the scenario."""
    checked = set()
    for sid, sc in scenarios.items():
        if sc.load is None:
            continue
        # Absolute rates hold the same attempts for every scenario of a plan: say it once.
        key = sc.load if sc.load.rates is not None else (sc.load, sid)
        if key not in checked:
            checked.add(key)
            check_plan(v, sid, sc)


def check_plan(v: Problems, sid: str, sc: Scenario) -> None:
    load = sc.load
    if load is None:
        return
    if load.rates is not None:
        # Little's law: a generator with `slots` connections open at a time, each lasting a
        # handshake, can start at most slots / handshake time attempts a second; past that
        # every step would measure its slots (generator_saturated), not the server.
        slots = load.max_in_flight or MAX_IN_FLIGHT
        handshake_s = estimate.handshake_ms(sc) / 1e3
        most = slots / handshake_s if handshake_s > 0 else float("inf")
        for i, rate in enumerate(load.rates):
            if rate > most:
                v.bad(
                    f"load.rates[{i}]",
                    f"bad value {rate:g} for scenario {sid}: {slots} connection slots "
                    f"(max_in_flight) at about {handshake_s * 1e3:.1f} ms a handshake (the "
                    f"estimate, its path included) start at most {most:.0f} attempts/s; "
                    f"allowed: a rate up to {most:.0f}/s, or more slots (max_in_flight up to "
                    f"{MAX_IN_FLIGHT})",
                )
            if rate * load.step_s < MIN_STEP_ATTEMPTS:
                v.bad(
                    f"load.rates[{i}]",
                    f"bad value {rate:g}: a {load.step_s:g} s step holds "
                    f"{rate * load.step_s:.0f} attempts; allowed: at least "
                    f"{MIN_STEP_ATTEMPTS} per step (a rate >= "
                    f"{MIN_STEP_ATTEMPTS / load.step_s:g}/s, or a longer step_s)",
                )
        return
    capacity = load.server_cores / (estimate.server_cpu_ms(sc) / 1e3)
    low = min(load.fractions or (1.0,))
    if low * capacity * load.step_s < MIN_STEP_ATTEMPTS:
        need = MIN_STEP_ATTEMPTS / (low * capacity)
        v.bad(
            "load.step_s",
            f"bad value {load.step_s:g} for scenario {sid}: at fraction {low:g} of its "
            f"expected capacity ({capacity:.1f}/s, from the cost model) a step holds "
            f"{low * capacity * load.step_s:.0f} attempts; allowed: at least "
            f"{MIN_STEP_ATTEMPTS} per step (step_s >= {need:.0f}, e.g. in a "
            "[[load.override]] for this scenario)",
        )
