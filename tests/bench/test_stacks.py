"""The stacks benchmark's arithmetic and printing (the benchmark itself only prints)."""

import pytest

from chainlab.axes.stack import STACKS
from chainlab.bench import stacks
from chainlab.bench.engine_results import Run


def runs(rate: float) -> list[Run]:
    return [Run(int(rate * 2), 0, 2.0, [1_000_000], client_cpu_s=0.5, server_cpu_s=0.25)]


def test_rates_print_a_matrix_and_ratios_to_the_reference(capsys):
    rates = {
        "openssl-3.5": 400.0, "openssl-4.0": 440.0, "rustls": 1000.0, "boringssl": 900.0,
        "go": 600.0,
    }  # fmt: skip
    results = {stacks.label(c, s): runs(min(rates[c], rates[s])) for c in STACKS for s in STACKS}
    stacks.report_rates(results, "ML-DSA-65,ML-DSA-65")
    out = capsys.readouterr().out
    assert "1. Full handshakes per wall second, ML-DSA-65,ML-DSA-65," in out
    assert "rate ratio go / openssl-3.5: both sides 1.500, as server 1.000" in out
    assert "rate ratio rustls / openssl-3.5: both sides 2.500, as server 1.000" in out
    assert "rate ratio openssl-4.0 / openssl-3.5: both sides 1.100" in out
    assert "rate ratio boringssl / openssl-3.5: both sides 2.250, as server 1.000" in out


def test_instructions_read_the_engines_overhead_against_the_openssl_engines(capsys):
    ins = {}
    for s, (client, server, over) in {
        "openssl-3.5": (8e6, 16e6, 150e3),
        "openssl-4.0": (8e6, 16e6, 150e3),
        "rustls": (3e6, 3e6, 15e3),
        "boringssl": (5e6, 6e6, 30e3),
        "go": (6e6, 7e6, 60e3),
    }.items():
        for side, total in (("client", client), ("server", server)):
            ins[(s, side, "baseline")] = total
            ins[(s, side, "ecdsa")] = 1e6 + over
            ins[(s, side, "ecdsa_bare")] = 1e6
    results = {stacks.label(c, s): runs(500.0) for c in STACKS for s in STACKS}
    stacks.report_instructions(ins, results)
    out = capsys.readouterr().out
    assert "rustls: engine overhead / openssl-3.5 engine's: client 0.100, server 0.100" in out
    assert "all instructions / openssl-3.5: 0.250 (client 0.375, server 0.188)" in out
    assert "against the inverse instruction ratio 4.000" in out
    assert "boringssl: engine overhead / openssl-3.5 engine's: client 0.200, server 0.200" in out


@pytest.mark.parametrize("argv", [["--rounds", "0"], ["--seconds", "0"]])
@pytest.mark.bad_input
def test_parse_args_rejects_empty_runs(argv):
    with pytest.raises(SystemExit):
        stacks.parse_args(argv)
