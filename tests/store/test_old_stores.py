"""Stores written by earlier chainlab versions, kept in tests/data/stores as test inputs:
every later chainlab must open, export and report them (see tests/data/stores/tiny.toml)."""

import shutil
from pathlib import Path

import pytest

import chainlab
from chainlab.analysis.analyze import analyze
from chainlab.report import build_report
from chainlab.store import SCHEMA_VERSION

STORES = sorted((Path(__file__).parents[1] / "data" / "stores").glob("v*-*.duckdb"))


def test_there_is_a_store_of_the_current_schema_version():
    assert any(p.name.startswith(f"v{SCHEMA_VERSION}-") for p in STORES), STORES


# A kept store's scenarios, measured handshakes each (None: adaptive), and a scenario its
# report shows: three at 30, one with an SLH-DSA leaf under an ML-DSA root, unless said here.
SHAPE = (3, 30, "x25519mlkem768__ml_root__slhf_leaf")
SHAPES = {
    # tiny-every-stack.toml: the ML-DSA-44 baseline on each of five stacks, and one cross pair
    "v13-stacks.duckdb": (6, 200, "x25519mlkem768__ml_root__ml_leaf__stack_go"),
    # the bundled campaigns/quick.toml (adaptive: its counts are the run's), every cache cold
    "v14-quick.duckdb": (6, None, "x25519mlkem768__ml_root__ml_leaf"),
    # tiny-landmark-lag.toml: a lagging population on two stacks, the X.509 dual chain twice
    "v15-landmark-lag.duckdb": (
        4,
        1000,
        "x25519mlkem768__ml_root__ml_leaf__mtcl64_ren3__pop_cur50_late30_never20__tai0",
    ),  # fmt: skip
}


@pytest.mark.parametrize("path", STORES, ids=lambda p: p.name)
def test_old_store_opens_exports_and_reports(path, tmp_path, main):
    store = tmp_path / path.name
    shutil.copy(path, store)  # never write next to the kept file
    with chainlab.open(store) as s:
        samples = s.table("samples")
        runs = s.table("runs")
        scenarios = s.table("scenarios")
    assert len(runs) == 1 and runs["status"].iloc[0] == "completed"
    n_scenarios, count, shown = SHAPES.get(path.name, SHAPE)
    assert len(scenarios) == n_scenarios
    measured = samples[~samples["warmup"]]
    assert (measured["outcome"] == "ok").all()
    if count is not None:
        assert len(measured) == n_scenarios * count
    # Results carry no path of the machine that made them.
    assert "/" not in runs["campaign_file_name"].iloc[0]

    def cli(*args):
        out = main(*args)
        assert out.returncode == 0, out.stderr
        return out

    cli("export", str(store), "--format", "csv", "--out", str(tmp_path / "csv"))
    assert (tmp_path / "csv" / "samples.csv").stat().st_size > 0
    cli("report", str(store), "--out", str(tmp_path / "report"))
    html = (tmp_path / "report" / "index.html").read_text()
    # The page breaks long ids with <wbr> where they may wrap.
    assert shown in html.replace("<wbr>", "")
    md = (tmp_path / "report" / "report.md").read_text()
    if int(path.name.split("-")[0][1:]) >= 3:  # stores from version 3 keep their primitives
        assert "Server CPU per handshake: predicted vs measured" in md
    else:
        assert "holds no measured primitives" in md


def test_a_kept_rollout_store_keeps_each_attempts_kind_and_chain(tmp_path):
    """Schema 8's staged rollout: each attempt's kind of client and the chain it was sent,
    and the report's section splitting the figures by kind."""
    (path,) = [p for p in STORES if p.name == "v8-rollout.duckdb"]
    store = tmp_path / path.name
    shutil.copy(path, store)
    with chainlab.open(store) as s:
        samples = s.table("samples")
    rollout = samples[samples["scenario_id"].str.contains("__pop_") & ~samples["warmup"]]
    assert set(rollout["client_kind"]) == {"classical", "pq"}
    chains = rollout.groupby("client_kind")["chain_index"].unique()
    assert list(chains["classical"]) == [0] and list(chains["pq"]) == [1]
    a = analyze(store)
    assert sorted(a.rollout_shares["pq_share"]) == [0.0, 0.5]
    assert len(a.rollout_rule) == 1  # one at a time: the 50 % population on its baseline


def test_a_kept_instruction_store_keeps_each_sides_counts(tmp_path):
    """Schema 9: instructions per connection and side under callgrind, with their source,
    and the steal time around each scenario."""
    (path,) = [p for p in STORES if p.name == "v9-instructions.duckdb"]
    store = tmp_path / path.name
    shutil.copy(path, store)
    with chainlab.open(store) as s:
        rows, ref = s.instruction_samples, s.host_reference
    counted = rows[~rows["warmup"]]
    assert len(counted) == 3 * 3 and (counted["outcome"] == "ok").all()
    assert counted["source"].str.startswith("callgrind (valgrind-").all()
    assert ref["steal_ns"].notna().all()
    a = analyze(store)
    assert a.summary["instr_source"].str.startswith("callgrind").all()
    # The SLH-DSA-SHAKE-128f leaf signs in ~600 M instructions, ML-DSA-44 in millions.
    s = a.summary.set_index("scenario_id")
    slh, ml = (
        s.at["x25519mlkem768__ml_root__slhf_leaf", "server_instr"],
        s.at["x25519mlkem768__ml_root__ml_leaf", "server_instr"],
    )
    assert slh > 20 * ml
    # Read as it is, a version-9 store's counts drew the system's random bytes.
    assert not a.summary["instr_source"].str.contains("seeded").any()


def test_a_kept_seeded_instruction_store_says_so_and_shows_the_spread(tmp_path):
    """Schema 10: each count's random bytes ([measure] random = "seeded"), in the source the
    report names, with the per-scenario instructions table and its spread."""
    (path,) = [p for p in STORES if p.name == "v10-instructions.duckdb"]
    store = tmp_path / path.name
    shutil.copy(path, store)
    with chainlab.open(store) as s:
        rows = s.instruction_samples
    assert (rows["random"] == "seeded").all()
    a = analyze(store)
    assert a.summary["instr_source"].str.endswith(", seeded random bytes").all()
    out = build_report(store, tmp_path / "report", analysis=a)
    md = (out / "report.md").read_text()
    table = md[md.index("**Instructions per handshake**") :].split("CSV:")[0]
    lines = [x for x in table.splitlines() if x.startswith("| `")]
    assert len(lines) == 3 and all("seeded random bytes" in x for x in lines), table
    # The SLH-DSA leaf's signing repeats to well under 1 % per handshake.
    slh = next(x for x in lines if "slhf_leaf" in x)
    assert float(slh.split("|")[4].strip().rstrip(" %")) < 1, slh
    # No hardware counter here: the line says where the instructions shown come from.
    hw = next(x for x in md.splitlines() if x.startswith("Hardware counters"))
    assert "come from callgrind" in hw, hw
    # The paper's split question again in instructions: the SLH-DSA-128f leaf's server does
    # ~15x the client's work, overwhelmingly server-bound on loopback whatever the wall clock.
    (row,) = [f for f in a.findings if f["topic"] == "client/server instructions"]
    assert row["holds"] == "yes", row


def test_a_kept_mtc_store_reads_as_the_early_experiments_encoding(tmp_path):
    """Schema 7's MTCs were written in the early experiments' encoding, the only one chainlab
    wrote then: read as it is and once upgraded, its MTC scenarios say so in mtc_encoding
    and its X.509 ones say 'n/a', so they stay apart from -07's in a comparison."""
    from chainlab.store import Store

    (path,) = [p for p in STORES if p.name == "v7-mtc.duckdb"]
    store = tmp_path / path.name
    shutil.copy(path, store)

    def encodings(scenarios):
        return dict(zip(scenarios["certificate"], scenarios["mtc_encoding"], strict=True))

    with Store.open(store) as s:  # read as it is
        as_is = encodings(s.analysis_frames().scenarios)
    with Store.open(store, read_only=False) as s:  # upgraded in place
        upgraded = encodings(s.table("scenarios"))
    assert as_is == upgraded
    assert upgraded.pop("x509") == "n/a"
    assert set(upgraded.values()) == {"experimental"} and upgraded, upgraded


def test_a_kept_trust_anchor_store_keeps_what_was_requested_matched_and_retried(tmp_path):
    """Schema 11's trust_anchors extension (BoringSSL): a client holding the landmark that
    requested its ID and was matched, and one that requested 28 other IDs, got the default
    certificate and retried for the CA's; the report's section reads them."""
    (path,) = [p for p in STORES if p.name == "v11-anchors.duckdb"]
    store = tmp_path / path.name
    shutil.copy(path, store)
    with chainlab.open(store) as s:
        samples = s.samples
    m = samples[~samples["warmup"] & samples["scenario_id"].str.contains("__tai")]
    by = m.groupby("scenario_id")
    held = "x25519mlkem768__ml_root__ml_leaf__mtcl4096__stack_boring__tai1"
    retry = "x25519mlkem768__ml_root__ml_leaf__mtcl4096_nolm_retry__stack_boring__tai28"
    assert set(by.groups) == {held, retry}
    assert (by.get_group(held)["trust_anchor_matched"]).all()
    assert not by.get_group(held)["retried"].any()
    assert (by.get_group(held)["mtc_kind"] == "landmark").all()
    r = by.get_group(retry)
    assert r["retried"].all() and (r["mtc_kind"] == "standalone").all()
    # The record is the retry's connection: it requested the one ID it trusts, the CA's.
    assert (r["trust_anchors_requested"] == 1).all() and r["trust_anchor_matched"].all()
    assert (m["trust_anchors_available"] == 2).all()
    t = analyze(store).trust_anchors.set_index("scenario_id")
    assert t.loc[retry, "retried_share"] == 1.0 and t.loc[held, "matched_share"] == 1.0


def test_a_kept_store_of_16_prices_each_scenario_at_its_hosts_speed(tmp_path):
    """Schema 16: each primitive keeps the host reading around its measurement and each
    unpinned reading its CPUs' times, so the cost model's comparison scales every prediction
    to the host's speed during its scenario and says how far apart the CPUs were."""
    (path,) = [p for p in STORES if p.name == "v16-tiny.duckdb"]
    store = tmp_path / path.name
    shutil.copy(path, store)
    with chainlab.open(store) as s:
        prims = s.table("primitive_samples")
    assert prims["host_cpu_ns"].notna().all() and (prims["host_cpu_ns"] > 0).all()
    a = analyze(store)
    m = a.cost_model
    assert len(m) == 3 and m["host_factor"].notna().all()
    assert a.host_speed["uneven"].notna().all()
    for side in ("server", "client"):
        assert (m[f"{side}_error"] != m[f"{side}_error_unscaled"]).all()
    out = build_report(store, tmp_path / "report", analysis=a)
    assert "at the host's speed during its scenario" in (out / "report.md").read_text()
