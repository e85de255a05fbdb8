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
        ({"delay_ms": -1}, "delay_ms: bad value -1; allowed: a number >= 0.0 and <= 10000.0"),
        ({"delay_ms": "5"}, "delay_ms: expected a number, got '5'"),
        ({"loss": 1.5}, "loss: bad value 1.5; allowed: a number >= 0.0 and <= 0.99"),
        ({"loss": True}, "loss: expected a number, got true"),
        ({"rate_mbit": 0}, "rate_mbit: bad value 0; allowed: a number >= 0.001"),
        ({"mtu": 100}, "mtu: bad value 100; allowed: an integer 576 to 65535"),
        ({"mtu": 1500.0}, "mtu: expected an integer, got 1500.0"),
        ({"initcwnd": 0}, "initcwnd: bad value 0; allowed: an integer 1 to 1000"),
        ({"queue_packets": 0}, "queue_packets: bad value 0; allowed: an integer 1 to"),
        ({"backend": "ns3"}, "backend: bad value 'ns3'; allowed: tun, netem, veth"),
        ({"delay_ms": 5, "jitter_ms": 6}, "jitter_ms: bad value 6; allowed: at most delay_ms (5)"),
        ({"rtt": 5}, "rtt: unknown key 'rtt'; allowed: name, delay_ms"),
        ({"backend": "veth", "delay_ms": 5}, "delay_ms: bad value 5.0: backend 'veth' emulates"),
    ],
)
@pytest.mark.bad_input
def test_bad_values_name_the_profile_key_and_what_is_allowed(spec, message):
    with pytest.raises(ChainlabError) as err:
        parse_profile({"name": "p", **spec})
    text = str(err.value)
    assert text.startswith("network profile 'p': ")
    assert message in text
    assert "\n" not in text


def test_every_problem_of_a_profile_is_reported_at_once():
    with pytest.raises(ChainlabError) as err:
        parse_profile({"name": "p", "delay_ms": -1, "mtu": 10, "colour": "red"})
    lines = str(err.value).splitlines()
    assert len(lines) == 3 and all(x.startswith("network profile 'p': ") for x in lines)


@pytest.mark.bad_input
def test_not_a_table():
    with pytest.raises(ChainlabError, match="expected a table of settings"):
        parse_profile(["delay_ms", 5])
