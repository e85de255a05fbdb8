"""One seed function: every seed a run derives comes from `seeds.derive`."""

import re
from pathlib import Path

import pytest

from chainlab.runner import instructions, pki, seeds

CHAINLAB = Path(__file__).resolve().parents[2] / "chainlab"


def test_a_derived_seed_is_fixed_by_its_inputs_and_an_unsigned_64_bit_integer():
    a = seeds.derive(1, "batch", "sid", 3)
    assert a == seeds.derive(1, "batch", "sid", 3)
    assert 0 <= a < 2**64
    others = {
        seeds.derive(2, "batch", "sid", 3),
        seeds.derive(1, "batch", "sid", 4),
        seeds.derive(1, "batch", "other", 3),
        seeds.derive(1, "load-step", "sid", 3),
        seeds.derive(1, "batch", "sid3"),  # keys are separated, not concatenated
    }
    assert a not in others and len(others) == 5


def test_an_unknown_purpose_is_an_error_not_a_new_stream():
    with pytest.raises(ValueError, match="unknown seed purpose 'batches'; allowed: .*batch"):
        seeds.derive(1, "batches", "sid")


def test_the_counted_handshakes_random_bytes_keep_their_stored_seed():
    # Known answer: the value stop 33's instruction runs used (sha256 of "chainlab random
    # <seed> <scenario>", first eight bytes), so seeded counts stay comparable across it.
    sid = "x25519mlkem768__ml_root__ml_leaf"
    assert instructions.random_seed(1, sid) == 2036693302475272651


def test_client_and_second_hierarchies_get_seeds_of_their_own(monkeypatch):
    got = []
    monkeypatch.setattr(pki, "ensure", lambda e, h, seed, **kw: got.append((seed, kw)))
    h = ("ML-DSA-44", "ML-DSA-44")
    pki.ensure_client(Path("engine"), h, 1)
    pki.ensure_second(Path("engine"), h, 1)
    assert got == [
        (seeds.derive(1, "client-hierarchy"), {"purpose": "client"}),
        (seeds.derive(1, "second-chain"), {}),
    ]
    assert len({1, *(s for s, _ in got)}) == 3


# A seed computed from the run's by arithmetic, or a generator seeded with it directly.
_DERIVATION = re.compile(
    r"\bseed\s*[+*^]\s*\w|\w\s*[+*^]\s*(?:\w+\.)*seed\b|Random\(\s*(?:\w+\.)*seed\s*\)"
)


def test_no_module_derives_a_run_seed_its_own_way():
    found = []
    for path in sorted((CHAINLAB / "runner").rglob("*.py")) + sorted(
        (CHAINLAB / "commands").rglob("*.py")
    ):
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if _DERIVATION.search(line.split("#", 1)[0]):
                found.append(f"{path.relative_to(CHAINLAB)}:{n}: {line.strip()}")
    assert found == [], "derive seeds with chainlab.runner.seeds.derive:\n" + "\n".join(found)


def test_a_second_chain_sharing_the_roots_algorithm_is_a_ca_of_its_own(engine_bin, pki_cache):
    # The dual-chain server's second hierarchy was once made under the run's own seed: keys
    # depend on (seed, role, algorithm), so a second chain whose root has the first's
    # algorithm got the first's root, key and name.
    first = pki.ensure(engine_bin, ("ML-DSA-44", "ECDSA-P256"), 1)
    second = pki.ensure_second(engine_bin, ("ML-DSA-44", "ML-DSA-44"), 1)
    client = pki.ensure_client(engine_bin, ("ML-DSA-44", "ML-DSA-44"), 1)
    roots = [pki.pem_certs(d / "ca.pem")[0] for d in (first, second, client)]
    assert len(set(roots)) == 3
