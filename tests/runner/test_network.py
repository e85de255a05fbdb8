"""The runner's network helpers: preflight (privileges, forwarder, leftovers), the profile
handed to the link (the run's seed), the stored row and the progress line."""

import os
import textwrap

import pytest

from chainlab.campaign import load
from chainlab.network import namespaces
from chainlab.runner import network, seeds

CAMPAIGN = """
[campaign]
seed = 7
[aliases]
ml = "ML-DSA-65"
[network.lan]
delay_ms = 0.5
[network.pinned]
delay_ms = 5
seed = 3
congestion_control = "reno"
[network.wire]
backend = "netem"
[matrix.m]
kex = ["X25519"]
hierarchy = [["ml", "ml"]]
network = ["loopback", "lan", "pinned", "wire"]
"""


@pytest.fixture
def campaign(tmp_path):
    p = tmp_path / "c.toml"
    p.write_text(textwrap.dedent(CAMPAIGN))
    return load(p)


def test_a_seed_derived_from_the_runs_fills_a_profile_without_one(campaign):
    lan = network.profile_spec(campaign.networks["lan"], seed=7)
    assert lan["seed"] == seeds.derive(7, "link", "lan")
    assert lan["name"] == "lan" and lan["delay_ms"] == 0.5
    pinned = network.profile_spec(campaign.networks["pinned"], seed=7)
    assert pinned["seed"] == 3 and pinned["congestion_control"] == "reno"
    # The declaration itself is untouched.
    assert campaign.networks["lan"].seed is None


def test_the_row_takes_flagged_from_the_calibration(campaign):
    spec = network.profile_spec(campaign.networks["lan"], seed=7)
    for flagged in (True, False):
        row = network.profile_row("r1", spec, {"rtt_ms": 1.3, "flagged": flagged})
        assert row == {
            "run_id": "r1",
            "profile": "lan",
            "configured": spec,
            "measured": {"rtt_ms": 1.3, "flagged": flagged},
            "flagged": flagged,
        }


def test_the_calibration_line_says_what_was_measured_and_why_it_is_flagged():
    c = {"rtt_ms": 4.288, "expected_rtt_ms": 4.0, "rate_mbit": None, "loss": 0.0,
         "calibration_seconds": 0.93, "flagged": True,
         "flag_reasons": ["RTT 4.288 ms vs expected 4.000 ms (allowed +-0.200)"]}  # fmt: skip
    line = network.describe_calibration("lan", c)
    assert line.startswith("chainlab: network profile 'lan' calibrated in 0.9s: RTT 4.29 ms")
    assert "rate - Mbit/s" in line and "loss 0.00%" in line
    assert line.endswith("FLAGGED: RTT 4.288 ms vs expected 4.000 ms (allowed +-0.200)")
    c.update(flagged=False)
    assert "FLAGGED" not in network.describe_calibration("lan", c)


def test_preflight_without_privileges_fails_every_emulated_profile_only(campaign, monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    monkeypatch.setattr(namespaces, "_effective_capabilities", lambda: 0)

    def must_not_run():
        raise AssertionError("cleanup_stale needs the privileges that are missing")

    monkeypatch.setattr(namespaces, "cleanup_stale", must_not_run)
    ready = network.preflight(campaign.select(), campaign.networks)
    assert set(ready["errors"]) == {"lan", "pinned", "wire"}
    for reason in ready["errors"].values():
        assert "need root (or CAP_NET_ADMIN and CAP_SYS_ADMIN)" in reason
        assert "'loopback' network" in reason
    assert ready["removed"] == []


def test_preflight_cleans_leftovers_first_and_checks_the_forwarder_per_backend(
    campaign, monkeypatch, tmp_path
):
    monkeypatch.setattr(namespaces, "require_privileges", lambda: None)
    monkeypatch.setattr(namespaces, "cleanup_stale", lambda: ["namespace chainlab-old-1-c"])
    monkeypatch.setenv("CHAINLAB_LINK", str(tmp_path / "no-such-forwarder"))
    ready = network.preflight(campaign.select(), campaign.networks)
    assert ready["removed"] == ["namespace chainlab-old-1-c"]
    # The tun profiles need the forwarder; the netem one does not.
    assert set(ready["errors"]) == {"lan", "pinned"}
    assert "chainlab-link not found" in ready["errors"]["lan"]


def test_preflight_does_nothing_for_a_loopback_only_run(campaign, monkeypatch):
    def must_not_run():
        raise AssertionError("a loopback-only run needs no network checks")

    monkeypatch.setattr(namespaces, "require_privileges", must_not_run)
    monkeypatch.setattr(namespaces, "cleanup_stale", must_not_run)
    loopback = [s for s in campaign.select() if s.network == "loopback"]
    assert network.preflight(loopback, campaign.networks) == {"errors": {}, "removed": []}
