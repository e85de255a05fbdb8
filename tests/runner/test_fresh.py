"""What a run must make (chainlab.runner.fresh): read from the caches the way the run uses
them, before anything is made, so `validate` and the run's stored estimate see the same."""

from chainlab.campaign import load
from chainlab.campaign.model import PrimitivesPlan
from chainlab.runner import fresh, pki, primitives, references

from .conftest import REPO

QUICK = REPO / "campaigns" / "quick.toml"


def test_empty_caches_make_everything_and_a_cached_hierarchy_is_not_made_again(
    engine_bin, tmp_path, monkeypatch
):
    monkeypatch.setenv("CHAINLAB_PRIMITIVES_CACHE", str(tmp_path / "primitives"))
    monkeypatch.setenv("CHAINLAB_PKI_CACHE", str(tmp_path / "pki"))
    scenarios = load(QUICK).select(None)
    plan = PrimitivesPlan()
    got = fresh.fresh(engine_bin, scenarios, 7, plan)
    items = primitives.items_for(scenarios)
    assert [p[1:] for p in got.primitives] == [i.timing_key for i in items]
    assert [p[0] for p in got.primitives] == [i.timer.engine for i in items]
    # The reference stack's overhead references, and its wait reference: quick.toml's
    # SLH-DSA-SHAKE-128f leaves keep its client waiting ~42 ms.
    assert len(got.references) == len(references.reference_keys(["openssl-3.5"])) + 1
    assert got.references[-1] == references.wait_reference_key("openssl-3.5")
    # Each distinct hierarchy once, charged to the first scenario that needs it.
    distinct = list(dict.fromkeys(s.hierarchy for s in scenarios))
    assert [h for _, h, _batch in got.hierarchies] == distinct
    first = next(s for s in scenarios if s.hierarchy == distinct[0])
    assert got.hierarchies[0][0] == first.scenario_id
    # A hierarchy in the cache is not made again (the cache's mark: its manifest).
    where = pki.location(engine_bin, *pki.needed(first, 7)[0])
    where.mkdir(parents=True)
    (where / "manifest.json").write_text("{}")
    again = fresh.fresh(engine_bin, scenarios, 7, plan)
    assert [h for _, h, _batch in again.hierarchies] == distinct[1:]
    # Another seed is another hierarchy; without [primitives] measuring, no primitives.
    other = fresh.fresh(engine_bin, scenarios, 8, PrimitivesPlan(measure=False))
    assert len(other.hierarchies) == len(distinct)
    assert other.primitives == () and other.references == ()


def test_a_hierarchy_issuing_mtcs_carries_its_batch(engine_bin, tmp_path, monkeypatch):
    monkeypatch.setenv("CHAINLAB_PKI_CACHE", str(tmp_path / "pki"))
    scenarios = load(REPO / "campaigns" / "mtc.toml").select(None)
    got = fresh.fresh(engine_bin, scenarios, 7, PrimitivesPlan(measure=False))
    by_id = {s.scenario_id: s for s in scenarios}
    batches = {batch for _sid, _h, batch in got.hierarchies}
    # X.509 hierarchies none; each MTC one its credential's log entries per landmark interval
    # it renews in (2^12 and 2^22 here, and lag_retry's three renewals of 2^12).
    assert batches == {0, 4096, 3 * 4096, 4194304}
    for sid, _h, batch in got.hierarchies:
        cert = by_id[sid].handshake.credential
        assert batch == (cert.batch * cert.renewals if cert.is_mtc else 0)
