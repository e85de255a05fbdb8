"""Composite ML-DSA in campaign files and the cost model: names like any other algorithm's,
refused in one line where a stack cannot sign or verify them, priced as the sum of their
parts plus the pre-hash, sized as their components concatenated."""

from __future__ import annotations

import textwrap

import pytest

from chainlab.axes.algorithm_sizes import KEY_SIG_BYTES
from chainlab.axes.algorithms import COMPOSITE_COMPONENTS, COMPOSITES
from chainlab.campaign import CampaignError, load
from chainlab.model import cost
from chainlab.model.algorithm_costs import SIGN_VERIFY_MS

HEAD = """
[campaign]
name = "c"
[sampling]
mode = "fixed"
count = 5
"""


def write(tmp_path, matrix: str):
    p = tmp_path / "c.toml"
    p.write_text(textwrap.dedent(HEAD) + textwrap.dedent(matrix))
    return p


@pytest.mark.parametrize("position", [0, 1, 2])
def test_a_composite_at_any_position_is_a_scenario_on_rustls(tmp_path, position):
    chain = ["ML-DSA-44"] * 3
    chain[position] = "MLDSA65-ECDSA-P256-SHA512"
    c = load(
        write(
            tmp_path,
            f'[matrix.m]\nkex = ["X25519"]\nhierarchy = [{chain}]\nstack = ["rustls"]\n'.replace(
                "'", '"'
            ),
        )
    )
    (s,) = c.scenarios.values()
    assert s.hierarchy == tuple(chain)


@pytest.mark.parametrize("stack", ["openssl-3.5", "openssl-4.0", "boringssl", "go"])
@pytest.mark.bad_input
def test_a_composite_on_a_stack_that_cannot_sign_or_verify_it_is_one_line(tmp_path, stack):
    with pytest.raises(CampaignError) as e:
        load(
            write(
                tmp_path,
                '[matrix.m]\nkex = ["X25519MLKEM768"]\n'
                'hierarchy = [["ML-DSA-65", "MLDSA65-Ed25519-SHA512"]]\n'
                f'stack = ["{stack}"]\n',
            )
        )
    lines = str(e.value).splitlines()
    assert lines and all(stack in ln for ln in lines), lines
    assert any("MLDSA65-Ed25519-SHA512" in ln for ln in lines)


@pytest.mark.bad_input
def test_an_unknown_composite_name_lists_the_composites_allowed(tmp_path):
    with pytest.raises(CampaignError) as e:
        load(
            write(
                tmp_path,
                '[matrix.m]\nkex = ["X25519"]\n'
                'hierarchy = [["ML-DSA-65", "MLDSA65-RSA3072-PSS-SHA512"]]\nstack = ["rustls"]\n',
            )
        )
    (line,) = str(e.value).splitlines()
    assert "'MLDSA65-RSA3072-PSS-SHA512'" in line
    assert all(name in line for name in COMPOSITES)


def test_a_composite_costs_its_parts_plus_the_prehash():
    leaf = "MLDSA65-ECDSA-P256-SHA512"
    ops = {
        (o.side, o.subject, o.op, o.message): o.count
        for o in cost.operations(("ML-DSA-44", leaf, leaf), "X25519")
    }
    # The server signs its CertificateVerify with both components and M'.
    assert ops[("server", "ML-DSA-65", "sign", cost.CV)] == 1
    assert ops[("server", "ECDSA-P256", "sign", cost.CV)] == 1
    assert ops[("server", "SHA512", cost.PREHASH, cost.CV)] == 1
    # The client verifies the CertificateVerify and the leaf's certificate (signed by the
    # composite intermediate): both components each, and M' each.
    assert ops[("client", "ML-DSA-65", "verify", cost.CV)] == 1
    assert ops[("client", "ML-DSA-65", "verify", cost.CERT)] == 1
    assert ops[("client", "ECDSA-P256", "verify", cost.CERT)] == 1
    assert ops[("client", "SHA512", cost.PREHASH, cost.CERT)] == 1
    assert not any(subject == leaf for _, subject, _, _ in ops)
    for name, (mldsa, trad, _) in COMPOSITE_COMPONENTS.items():
        assert KEY_SIG_BYTES[name] == tuple(
            a + b for a, b in zip(KEY_SIG_BYTES[mldsa], KEY_SIG_BYTES[trad], strict=True)
        )
        assert SIGN_VERIFY_MS[name] == pytest.approx(
            tuple(a + b for a, b in zip(SIGN_VERIFY_MS[mldsa], SIGN_VERIFY_MS[trad], strict=True))
        )
    # The draft's sizes: MLDSA65-Ed25519-SHA512's key and signature are fixed-length.
    assert KEY_SIG_BYTES["MLDSA65-Ed25519-SHA512"] == (1952 + 32, 3309 + 64)
