"""What limited a load step (chainlab.analysis.load_capacity.step_limit), by hand-made steps:
the server is called saturated only with busy cores or an overflowing accept queue, and
every other limit is named in words."""

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
    assert sat and why == "server CPU (97% of its cores busy)"


def test_an_overflowing_accept_queue_makes_a_saturated_server_even_with_idle_cores():
    sat, why = step_limit(step(server_cores_busy=0.4, listen_overflows=12.0))
    assert sat and why == "server listen queue (12 overflows)"


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
