"""The interop matrix: one cell per scenario with its outcome, the category of most of its
failed handshakes, and the capability tables' prediction (chainlab.analysis.interop)."""

from synthetic import SyntheticScenario

from chainlab.analysis.analyze import analyze

ML, SLHF = "ML-DSA-65", "SLH-DSA-SHAKE-128f"


def cell(client: str, server: str, **kw) -> SyntheticScenario:
    kw.setdefault("n", 10)
    kw.setdefault("depth", 2)
    return SyntheticScenario(axis_values={"stack": (client, server)}, **kw)


def test_cells_carry_outcomes_categories_and_predictions(make_store):
    stacks = ("openssl-3.5", "boringssl")
    scenarios = [cell(c, s) for c in stacks for s in stacks]
    slh = dict(root_alg=SLHF, leaf_alg=ML)
    # An SLH-DSA root: OpenSSL verifies it; BoringSSL cannot (predicted), and here one
    # OpenSSL cell fails too (not predicted: flagged).
    scenarios += [
        cell("openssl-3.5", "openssl-3.5", **slh),
        cell("openssl-3.5", "boringssl", n=8, n_failed=2, error_category="tls_alert", **slh),
        cell("boringssl", "openssl-3.5", n=0, n_failed=10, error_category="verify_failed",
             status="failed", failure_cause="verify_failed", **slh),
        cell("boringssl", "boringssl", n=0, n_failed=10, error_category="verify_failed",
             status="failed", failure_cause="verify_failed", **slh),
    ]  # fmt: skip
    a = analyze(make_store(scenarios))
    c = a.interop.set_index(["context", "client_stack", "server_stack"])
    assert len(c) == 8
    plain = "ML-DSA-65 → ML-DSA-65"
    assert set(c.loc[plain, "outcome"]) == {"ok"}
    assert c.loc[plain, "as_predicted"].all()
    root = "SLH-DSA-SHAKE-128f → ML-DSA-65"
    row = c.loc[(root, "boringssl", "openssl-3.5")]
    assert (row["outcome"], row["predicted"], row["as_predicted"]) == (
        "verify_failed",
        "verify_failed",
        True,
    )
    assert (row["n_ok"], row["n_failed"]) == (0, 10)
    assert "synthetic verify_failed" in row["example_detail"]
    odd = c.loc[(root, "openssl-3.5", "boringssl")]
    assert (odd["outcome"], odd["predicted"], odd["as_predicted"]) == ("tls_alert", "ok", False)


def test_one_stack_pair_is_no_matrix(make_store):
    same = [cell("openssl-3.5", "openssl-3.5"), cell("openssl-3.5", "openssl-3.5", leaf_alg=SLHF)]
    a = analyze(make_store(same))
    assert a.interop.empty


def test_a_chain_the_client_cannot_receive_is_predicted_to_fail_in_some_category(make_store):
    # Two UOV-Ip-pkc keys make a Certificate message longer than rustls receives.
    big = dict(depth=3, root_alg=ML, int1_alg="UOV-Ip-pkc", leaf_alg="UOV-Ip-pkc")
    scenarios = [
        cell("openssl-3.5", "openssl-3.5"),
        cell("rustls", "openssl-3.5", n=0, n_failed=10, error_category="tls_error",
             status="failed", failure_cause="tls_error", **big),
        cell("openssl-3.5", "rustls", **big),
    ]  # fmt: skip
    c = analyze(make_store(scenarios)).interop.set_index(["client_stack", "server_stack"])
    refused = c.loc[("rustls", "openssl-3.5")]
    assert (refused["predicted"], refused["outcome"], refused["as_predicted"]) == (
        "failed",
        "tls_error",
        True,
    )
    # OpenSSL verifies no UOV at all, the leaf's neither: it does not offer the leaf's scheme,
    # so the handshake fails before a certificate arrives (each client names the alert its
    # own way): some failure.
    assert c.loc[("openssl-3.5", "rustls"), "predicted"] == "failed"
    assert c.loc[("openssl-3.5", "openssl-3.5"), "predicted"] == "ok"


def test_an_issuer_the_client_cannot_verify_is_verify_failed_a_leaf_some_failure(make_store):
    # A composite ML-DSA certificate (rustls alone verifies composites), at the root or leaf.
    comp = "MLDSA44-ECDSA-P256-SHA256"
    root = dict(depth=2, root_alg=comp, leaf_alg="ML-DSA-44")
    leaf = dict(depth=2, root_alg="ML-DSA-44", leaf_alg=comp)
    scenarios = [
        cell("rustls", "rustls", **root),
        cell("go", "rustls", **root),
        cell("boringssl", "rustls", **leaf),
    ]
    c = analyze(make_store(scenarios)).interop.set_index(["client_stack", "server_stack"])
    assert c.loc[("go", "rustls"), "predicted"] == "verify_failed"
    assert c.loc[("boringssl", "rustls"), "predicted"] == "failed"
    assert c.loc[("rustls", "rustls"), "predicted"] == "ok"


def test_a_cell_names_what_sets_it_apart_and_not_the_defaults(make_store):
    """Over TCP and QUIC: the QUIC cells say so, the TCP ones (the default) say nothing."""
    stacks = ("openssl-3.5", "go")
    scenarios = [
        SyntheticScenario(axis_values={"stack": (c, s), "transport": t}, n=10, depth=2)
        for t in ("tcp", "quic")
        for c in stacks
        for s in stacks
    ]
    contexts = set(analyze(make_store(scenarios)).interop["context"])
    assert contexts == {"ML-DSA-65 → ML-DSA-65", "ML-DSA-65 → ML-DSA-65 · quic"}
