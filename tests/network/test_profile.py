"""Profile validation: defaults, derived values, and one-line errors naming the bad key."""

import pytest

from chainlab.errors import ChainlabError
from chainlab.network.profile import DEFAULT_QUEUE_PACKETS, parse_profile


def test_defaults_and_derived_values():
    p = parse_profile({"name": "wan", "delay_ms": 25, "rate_mbit": 10})
    assert p.rtt_ms == 50
    assert p.mss == 1448
    assert p.initcwnd == 10
    assert p.queue_limit == DEFAULT_QUEUE_PACKETS
    assert p.backend == "tun"
    assert (p.loss, p.jitter_ms, p.seed) == (0.0, 0.0, 1)


def test_the_campaign_runner_dict_is_accepted_with_its_none_values():
    # What chainlab.campaign.model.NetworkProfile.to_dict() gives for an unset queue/initcwnd.
    spec = {
        "name": "lossy", "delay_ms": 50.0, "jitter_ms": 0.0, "rate_mbit": None, "loss": 0.01,
        "mtu": 1500, "queue_packets": None, "initcwnd": None, "backend": "tun",
    }  # fmt: skip
    p = parse_profile(spec)
    assert p.initcwnd == 10
    assert p.queue_limit is None  # no rate, no bottleneck queue
    assert p.loss == 0.01


def test_an_explicit_queue_is_kept():
    assert parse_profile({"name": "x", "rate_mbit": 1, "queue_packets": 20}).queue_limit == 20


@pytest.mark.parametrize(
    "spec, message",
    [
        ({"delay_ms": -1}, "delay_ms = -1; allowed: a number in [0.0, 10000.0]"),
        ({"delay_ms": "5"}, "delay_ms = '5'"),
        ({"loss": 1.5}, "loss = 1.5; allowed: a number in [0.0, 1.0]"),
        ({"loss": True}, "loss = True"),
        ({"rate_mbit": 0}, "rate_mbit = 0"),
        ({"mtu": 100}, "mtu = 100; allowed: an integer in [576, 65535]"),
        ({"mtu": 1500.0}, "mtu = 1500.0"),
        ({"initcwnd": 0}, "initcwnd = 0"),
        ({"queue_packets": 0}, "queue_packets = 0"),
        ({"backend": "ns3"}, "backend = 'ns3'; allowed: tun, netem, veth"),
        ({"delay_ms": 5, "jitter_ms": 6}, "jitter_ms = 6 exceeds delay_ms = 5"),
        ({"rtt": 5}, "unknown key 'rtt'; allowed: name, delay_ms"),
        ({"backend": "veth", "delay_ms": 5}, "backend 'veth' emulates nothing, yet delay_ms"),
    ],
)
def test_bad_values_name_the_profile_key_and_what_is_allowed(spec, message):
    with pytest.raises(ChainlabError) as err:
        parse_profile({"name": "p", **spec})
    text = str(err.value)
    assert text.startswith("network profile 'p': ")
    assert message in text
    assert "\n" not in text


def test_not_a_table():
    with pytest.raises(ChainlabError, match="expected a table of settings"):
        parse_profile(["delay_ms", 5])
