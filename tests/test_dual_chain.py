"""Dual-chain serving on every server stack, both orders (`serve --chain-order`): a client
offering a post-quantum scheme first is sent the post-quantum chain whatever the order; one
offering it after ECDSA gets the ECDSA chain by its own order and the post-quantum chain by
the server's; a classical-only client the classical chain by either. The classical client is
code chainlab did not write (Python's `ssl`, the machine's OpenSSL 3.0, which has no ML-DSA);
the others are the OpenSSL 3.5 engine's client. The server's records say which chain it sent
(`chain_index`), and the certificate each client received says the same."""

from __future__ import annotations

import json
import socket
import ssl
import subprocess

import pytest

from chainlab import engine
from chainlab.axes.stack import STACKS

ECDSA, MLDSA = "ecdsa_secp256r1_sha256", "mldsa65"
# The offers and the chain each order sends them (0: --pki's ECDSA chain, 1: ML-DSA).
OFFERS = (
    (f"{MLDSA}:{ECDSA}", {"client": 1, "server": 1}),
    (f"{ECDSA}:{MLDSA}", {"client": 0, "server": 1}),
)


@pytest.fixture(scope="module")
def chains(engine_bin, tmp_path_factory):
    d = tmp_path_factory.mktemp("dual")
    for name, chain in (("ec", "ECDSA-P256,ECDSA-P256"), ("ml", "ML-DSA-65,ML-DSA-65")):
        subprocess.run(
            [str(engine_bin), "pki", "--chain", chain, "--seed", "dual", "--out", str(d / name)],
            check=True, capture_output=True, timeout=120,
        )  # fmt: skip
    (d / "both.pem").write_bytes(
        (d / "ec" / "ca.pem").read_bytes() + (d / "ml" / "ca.pem").read_bytes()
    )
    return d


def python_ssl_leaf(port: int, ca) -> bytes:
    """The leaf certificate (DER) Python's ssl received from the server at `port`."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_3
    ctx.load_verify_locations(cafile=str(ca))
    raw = socket.create_connection(("127.0.0.1", port), timeout=10)
    with ctx.wrap_socket(raw, server_hostname="localhost") as tls:
        return tls.getpeercert(binary_form=True)


def engine_client(port: int, ca, sigalgs: str, records) -> dict:
    subprocess.run(
        [str(engine.path()), "handshake", "--connect", f"127.0.0.1:{port}", "--ca", str(ca),
         "--groups", "X25519", "--sigalgs", sigalgs, "--count", "1", "--warmup", "0",
         "--records", str(records)],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    return json.loads(records.read_text().splitlines()[-1])


@pytest.mark.parametrize("order", ["client", "server"])
@pytest.mark.parametrize("stack", STACKS)
def test_a_dual_chain_server_sends_each_client_the_chain_its_order_picks(
    chains, tmp_path, stack, order
):
    records = tmp_path / "server.jsonl"
    server = subprocess.Popen(
        [str(engine.stack_path(stack)), "serve", "--pki", str(chains / "ec"), "--second-pki",
         str(chains / "ml"), "--chain-order", order, "--listen", "127.0.0.1:0", "--groups",
         "X25519", "--max-connections", str(1 + len(OFFERS)), "--records", str(records)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        ready = json.loads(server.stdout.readline())
        port = int(ready["addr"].rsplit(":", 1)[1])
        leaf = python_ssl_leaf(port, chains / "both.pem")
        got = [
            engine_client(port, chains / "both.pem", offer, tmp_path / f"c{i}.jsonl")
            for i, (offer, _) in enumerate(OFFERS)
        ]
        assert server.wait(30) == 0, server.stderr.read()
    finally:
        server.kill()
        server.wait()
    ec_leaf = ssl.PEM_cert_to_DER_cert((chains / "ec" / "leaf.pem").read_text())
    assert leaf == ec_leaf, f"{stack} {order}: Python's classical client got another leaf"
    for (offer, want), c in zip(OFFERS, got, strict=True):
        assert c["outcome"] == "ok", c
        assert c["sigalg"] == (MLDSA if want[order] else ECDSA), (stack, order, offer, c)
    lines = [json.loads(line) for line in records.read_text().splitlines()]
    sent = [r["chain_index"] for r in lines if r["side"] == "server"]
    assert sent == [0] + [want[order] for _, want in OFFERS], (stack, order, sent)
