"""What limited a load step (chainlab.analysis.load_capacity.step_limit), by hand-made steps:
the server is called saturated only with busy cores or an overflowing accept queue, and
every other limit is named in words."""

import pytest

from chainlab.analysis.load_capacity import SERVER_BUSY, step_limit


def step(**over) -> dict:
    """A step that fell behind (achieved 60 of 100 offered) with nothing else known."""
    base = {
        "n_saturated": 0,
        "achieved_rate": 60.0,
        "offered_rate": 100.0,
        "achieved_share": 0.6,
        "server_cores_busy": float("nan"),
        "listen_overflows": float("nan"),
        "generator_limited": False,
        "generator_note": "",
    }
    return {**base, **over}


def test_busy_server_cores_make_a_saturated_server():
    sat, why = step_limit(step(server_cores_busy=0.97))
    assert sat and why == "server CPU (97% of its cores busy) (achieved 60% of the offer)"


def test_an_overflowing_accept_queue_makes_a_saturated_server_even_with_idle_cores():
    sat, why = step_limit(step(server_cores_busy=0.4, listen_overflows=12.0))
    assert sat and why == "server listen queue (12 overflows) (achieved 60% of the offer)"


def test_a_step_short_of_its_offer_or_past_its_latency_bound_never_kept_up():
    """The pattern of a load run here: capacity 627/s (overloaded); the step at 0.9 of it
    offered 564.5/s, achieved 536/s (95 %, above the old 0.9 threshold) with the core 97 %
    busy and a p99 of 363 ms against 8.7 ms at the lightest step."""
    at_09 = step(
        offered_rate=564.5, achieved_rate=536.0, achieved_rate_hi=548.0, achieved_share=0.95,
        server_cores_busy=0.97, p99_ms=363.0, p99_bound_ms=87.0,
    )  # fmt: skip
    sat, why = step_limit(at_09)
    assert sat and why.startswith("server CPU (97% of its cores busy) (achieved 95% of the")
    assert "p99 363 ms, above its bound of 87 ms" in why
    # The same achieved rate within its interval of the offer, but the latency unbounded.
    sat, why = step_limit({**at_09, "achieved_rate_hi": 570.0})
    assert sat and "kept up" not in why and "above its bound" in why
    # With idle cores it is the latency that says so, not "kept up".
    sat, why = step_limit({**at_09, "achieved_rate_hi": 570.0, "server_cores_busy": 0.3})
    assert not sat and why.startswith("latency: p99 363 ms, above its bound of 87 ms")
    # Within its interval and its bound: kept up.
    sat, why = step_limit({**at_09, "achieved_rate_hi": 570.0, "p99_ms": 20.5})
    assert (sat, why) == (False, "nothing: the server kept up with the offer")


def test_a_population_step_is_judged_on_the_offer_its_clients_could_complete():
    """A staged rollout's step: 510/s offered, 10 % of its clients refused by the server's
    alert (no chain serves them), 447/s completed with the cores 40 % busy."""
    pop = step(
        offered_rate=510.0, achieved_rate=447.0, achieved_rate_hi=489.0, achieved_share=0.88,
        server_cores_busy=0.4, servable_rate=457.3, p99_ms=20.0, p99_bound_ms=200.0,
    )  # fmt: skip
    assert step_limit(pop) == (False, "nothing: the server kept up with the offer")
    # Short of the servable part too: said of that part, not of the whole offer.
    sat, why = step_limit({**pop, "achieved_rate": 300.0, "achieved_rate_hi": 330.0})
    assert (
        not sat
        and why == "not the server: achieved 66% of the servable offer (server cores 40% busy)"
    )
    # Without the column (an analysis row built by hand, an old frame): the whole offer.
    sat, why = step_limit({k: v for k, v in pop.items() if k != "servable_rate"})
    assert not sat and why == "not the server: achieved 88% of the offer (server cores 40% busy)"


def test_idle_cores_and_full_slots_are_the_slots_not_the_server():
    # The 50 ms path case: every slot open, the server's core 15 % busy.
    sat, why = step_limit(step(server_cores_busy=0.15, n_saturated=300))
    assert not sat
    assert why.startswith("connection slots: 300 attempts found every slot open")
    assert "server cores 15% busy" in why


def test_a_busy_generator_is_named_with_its_note():
    note = "its process used 91% of its 1 core(s)"
    sat, why = step_limit(step(server_cores_busy=0.5, generator_limited=True, generator_note=note))
    assert (sat, why) == (False, f"generator ({note})")


def test_a_step_that_kept_up_is_limited_by_nothing():
    sat, why = step_limit(step(achieved_rate=99.0, achieved_share=0.99, server_cores_busy=0.95))
    assert (sat, why) == (False, "nothing: the server kept up with the offer")


def test_a_shortfall_with_idle_cores_and_nothing_else_says_so():
    sat, why = step_limit(step(server_cores_busy=SERVER_BUSY - 0.2))
    assert not sat and why == "not the server: achieved 60% of the offer (server cores 65% busy)"


def test_capacity_is_the_best_capacity_step_per_core_against_the_derived_figure():
    """capacity_frame by hand: two capacity steps (the heavier offer's goodput fell), two
    server cores, a derived figure of 400/s per core; cost at $0.04 per vCPU-hour."""
    import math
    from types import SimpleNamespace

    import pandas as pd

    from chainlab.analysis.load_capacity import capacity_frame

    sid = "s"
    steps = pd.DataFrame(
        [
            {"scenario_id": sid, "kind": "capacity", "step": 0, "server_cores": 2,
             "offered_rate": 900.0, "achieved_rate": 880.0, "achieved_rate_lo": 860.0,
             "achieved_rate_hi": 900.0, "n_ok": 4400, "n_saturated": 0,
             "server_saturated": False, "limited_by": "nothing", "generator_limited": False,
             "server_utilisation": 0.97, "kept_up": False},
            {"scenario_id": sid, "kind": "capacity", "step": 1, "server_cores": 2,
             "offered_rate": 1800.0, "achieved_rate": 700.0, "achieved_rate_lo": 680.0,
             "achieved_rate_hi": 720.0, "n_ok": 3500, "n_saturated": 900,
             "server_saturated": True, "limited_by": "server CPU (99% of its cores busy)",
             "generator_limited": False, "server_utilisation": 0.99, "kept_up": False},
        ]
    )  # fmt: skip
    summary = pd.DataFrame([{"scenario_id": sid, "capacity_cpu_ms_se": 0.0}])
    derived = pd.DataFrame(
        [{"scenario_id": sid, "handshakes_per_core_s": 400.0, "handshakes_per_core_s_lo": 390.0,
          "handshakes_per_core_s_hi": 410.0, "handshakes_per_core_s_handshake_only": 420.0}]
    )  # fmt: skip
    cfg = SimpleNamespace(
        confidence_level=0.95, price_per_vcpu_hour=0.04, service_classes={"small": 1e6}
    )
    row = capacity_frame(steps, summary, derived, cfg).iloc[0]
    assert row["capacity"] == 880.0 and row["capacity_per_core"] == 440.0
    assert (row["capacity_per_core_lo"], row["capacity_per_core_hi"]) == (430.0, 450.0)
    # Saturation and its cause come from the heaviest offer.
    assert row["saturated"] and row["limited_by"].startswith("server CPU")
    assert row["measured_over_derived"] == 1.1
    # Measured ratio's interval: log-scale, se 1/sqrt(4400) (a Poisson count), derived se 0.
    half = 1.959964 / math.sqrt(4400)
    assert row["measured_over_derived_lo"] == pytest.approx(1.1 * math.exp(-half), rel=1e-4)
    assert row["handshakes_per_vcpu_hour"] == 440.0 * 3600
    assert row["cost_per_million"] == pytest.approx(1e6 / (440.0 * 3600) * 0.04)
    assert row["monthly_cost_small"] == pytest.approx(row["cost_per_million"])


def test_the_sustained_rate_is_the_heaviest_step_that_kept_up_below_the_overload_throughput():
    """The pattern of the issue's run: an overloaded capacity step achieved 627/s; steps at
    0.3 and 0.6 of it kept up; the step at 0.9 (564.5/s offered) achieved 536/s with a p99 of
    363 ms. The server sustains 376.2/s (the 0.6 step), and not 564.5/s."""
    import pandas as pd

    from chainlab.analysis.load_capacity import sustained

    def row(kind, index, offered, achieved, lo, hi, p99, busy):
        r = step(
            offered_rate=offered, achieved_rate=achieved, achieved_rate_hi=hi,
            achieved_share=achieved / offered, server_cores_busy=busy, p99_ms=p99,
            p99_bound_ms=87.0, n_saturated=614 if kind == "capacity" else 0,
        )  # fmt: skip
        kept = step_limit(r)[1] == "nothing: the server kept up with the offer"
        return {**r, "kind": kind, "step": index, "achieved_rate_lo": lo, "kept_up": kept}

    g = pd.DataFrame(
        [
            row("capacity", 0, 2000.0, 627.0, 604.0, 650.0, 1450.0, 0.99),
            row("step", 1, 188.1, 187.0, 175.0, 199.0, 8.7, 0.31),
            row("step", 2, 376.2, 373.0, 356.0, 391.0, 20.5, 0.62),
            row("step", 3, 564.5, 536.0, 522.0, 548.0, 363.0, 0.97),
        ]
    )
    got = sustained(g)
    assert got["sustained"] == 376.2 and got["sustained_step"] == "step 2"
    assert (got["sustained_lo"], got["sustained_hi"]) == (356.0, 391.0)
    assert got["not_sustained"] == 564.5, "the 0.9 step did not keep up"
    assert got["sustained"] < 627.0, "below the overload throughput"
    # No step kept up: nothing to claim.
    assert sustained(g.assign(kept_up=False)) == {}


def test_a_full_link_is_named_with_its_share_and_is_not_the_server():
    import json
    from types import SimpleNamespace

    import pandas as pd

    from chainlab.analysis.load_capacity import link_loads

    sat, why = step_limit(step(server_cores_busy=0.3, link_share=0.95, link_rate_mbit=10.0))
    assert not sat
    assert why == "link (95% of its 10 Mbit/s used, busier direction) (achieved 60% of the offer)"
    # Busy cores and a full link: the server, with the link named too.
    sat, why = step_limit(step(server_cores_busy=0.97, link_share=0.95, link_rate_mbit=10.0))
    assert sat and "link (95%" in why
    # A link with room is no cause.
    sat, why = step_limit(step(server_cores_busy=0.3, link_share=0.2, link_rate_mbit=10.0))
    assert "link" not in why
    # The busier direction's bytes per handshake, against the profile's configured rate.
    data = SimpleNamespace(
        network_profiles=pd.DataFrame(
            [{"profile": "slow", "configured": json.dumps({"rate_mbit": 10.0})},
             {"profile": "fast", "configured": json.dumps({"rate_mbit": None})}]
        ),
        network_samples=pd.DataFrame(
            [{"scenario_id": "a", "bytes_written": 1500, "server_bytes_written": 9000},
             {"scenario_id": "a", "bytes_written": 1500, "server_bytes_written": 11000},
             {"scenario_id": "b", "bytes_written": 1500, "server_bytes_written": 9000}]
        ),
        scenarios=pd.DataFrame([{"scenario_id": "a", "network": "slow"},
                                {"scenario_id": "b", "network": "fast"}]),
    )  # fmt: skip
    assert link_loads(data) == {"a": (10.0, 10000.0)}, "no configured rate: no link figure"


def test_server_cpu_outside_connections_is_the_process_cpu_no_record_holds():
    import math

    from chainlab.analysis.load_capacity import _outside

    assert _outside({"server_cpu_s": 0.97, "server_process_cpu_s": 1.0}) == 1.0 - 0.97
    assert math.isnan(_outside({"server_cpu_s": 0.97, "server_process_cpu_s": None}))
    assert math.isnan(_outside({"server_cpu_s": None, "server_process_cpu_s": 1.0}))
    assert math.isnan(_outside({"server_cpu_s": 0.0, "server_process_cpu_s": 0.0}))
