"""What a run does about emulated networks besides opening links (chainlab.network).

- `preflight`: before the first emulated scenario of a run, check privileges and the
  forwarder and remove what killed earlier runs left behind; without them every scenario on
  an emulated profile fails with the reason, while loopback scenarios run.
- `profile_spec`: the profile dict handed to `emulated_link`, the run's seed filled in
  where the profile sets none (so a campaign's loss pattern replays).
- `profile_row`: the `network_profiles` row of a calibrated profile (one per run and profile).
"""

from __future__ import annotations

from chainlab.campaign.model import NetworkProfile, Scenario
from chainlab.errors import ChainlabError
from chainlab.network import namespaces
from chainlab.network.link import forwarder_path
from chainlab.network.profile import LOOPBACK
from chainlab.runner import seeds


def preflight(scenarios: list[Scenario], networks: dict[str, NetworkProfile]) -> dict:
    """Readiness of the emulated profiles `scenarios` use, before any link is opened.

    Returns {"errors": {profile: reason}, "removed": [leftovers cleaned]}: a profile with an
    error cannot run in this run (no privileges, no `ip`, no forwarder for its backend).
    """
    used = sorted({s.network for s in scenarios if s.network != LOOPBACK})
    if not used:
        return {"errors": {}, "removed": []}
    try:
        namespaces.require_privileges()
        # Leftovers of a killed earlier run: namespaces, forwarders, orphaned servers.
        removed = namespaces.cleanup_stale()
    except ChainlabError as e:
        return {"errors": dict.fromkeys(used, str(e)), "removed": []}
    errors = {}
    for name in used:
        if networks[name].backend == "tun":
            try:
                forwarder_path()
            except ChainlabError as e:
                errors[name] = str(e)
    return {"errors": errors, "removed": removed}


def profile_spec(profile: NetworkProfile, seed: int) -> dict:
    """The profile as `emulated_link` takes it: the campaign's declaration, with a seed
    derived from the run's and the profile's name where the profile names none."""
    spec = profile.to_dict()
    if spec.get("seed") is None:
        spec["seed"] = seeds.derive(seed, "link", profile.name)
    return spec


def profile_row(run_id: str, spec: dict, calibration: dict) -> dict:
    """The `network_profiles` row: configured (as declared, with the seed in effect),
    measured (the calibration) and flagged as the calibration judged it."""
    return {
        "run_id": run_id,
        "profile": spec["name"],
        "configured": spec,
        "measured": calibration,
        "flagged": bool(calibration.get("flagged")),
    }


def describe_calibration(name: str, c: dict) -> str:
    """One progress line on a calibrated profile."""

    def num(key, fmt):
        v = c.get(key)
        return "-" if v is None else format(v, fmt)

    parts = [
        f"RTT {num('rtt_ms', '.2f')} ms (expected {num('expected_rtt_ms', '.2f')})",
        f"rate {num('rate_mbit', '.1f')} Mbit/s",
        f"loss {num('loss', '.2%')}",
    ]
    line = (
        f"chainlab: network profile {name!r} calibrated in "
        f"{num('calibration_seconds', '.1f')}s: " + ", ".join(parts)
    )
    if c.get("flagged"):
        line += "; FLAGGED: " + "; ".join(c.get("flag_reasons") or ["off its configuration"])
    return line
