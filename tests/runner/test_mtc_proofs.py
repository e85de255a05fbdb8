"""The engine's Merkle Tree Certificates checked by an implementation written here from the
draft (draft-ietf-plants-merkle-tree-certs-07) with hashlib alone: the log entry rebuilt
from the certificate's own fields, the inclusion proof evaluated, the result compared with
the landmark subtree the relying party holds; serial, sizes and the landmark list format;
for several batch sizes and entry positions."""

import base64
import hashlib
import json
import subprocess

import pytest

# id-alg-mtcProof's DER, and the bytes of MTCProof's signatures length, per encoding.
MTC_PROOF_OID = {
    "plants-07": bytes.fromhex("06082b06010505070643"),  # 1.3.6.1.5.5.7.6.67
    "experimental": bytes.fromhex("060a2b0601040182da4b2f00"),  # 1.3.6.1.4.1.44363.47.0
}
SIGNATURES_LENGTH = {"plants-07": 3, "experimental": 2}


def relative_oid(dotted: str) -> bytes:
    """A trust anchor ID's RELATIVE-OID contents (base 128, high bit on all but the last
    byte of each component)."""
    out = b""
    for arc in map(int, dotted.split(".")):
        chunk = [arc & 0x7F]
        while arc > 0x7F:
            arc >>= 7
            chunk.append(0x80 | arc & 0x7F)
        out += bytes(reversed(chunk))
    return out


def ca_id_value(ca_id: str, encoding: str) -> bytes:
    """The CA ID as the issuer's attribute value: a RELATIVE-OID in -07, a UTF8String in the
    early experiments' encoding."""
    if encoding == "plants-07":
        rel = relative_oid(ca_id)
        return b"\x0d" + bytes([len(rel)]) + rel
    return b"\x0c" + bytes([len(ca_id)]) + ca_id.encode()


def tlv(data: bytes, at: int = 0) -> tuple[int, int, int, int]:
    """(tag, start of contents, end of contents, end of element) of the element at `at`."""
    tag, first = data[at], data[at + 1]
    if first < 0x80:
        length, start = first, at + 2
    else:
        n = first & 0x7F
        length, start = int.from_bytes(data[at + 2 : at + 2 + n], "big"), at + 2 + n
    return tag, start, start + length, start + length


def children(data: bytes, start: int, end: int) -> list[tuple[int, int, int, int]]:
    out, at = [], start
    while at < end:
        e = tlv(data, at)
        out.append((at, *e))
        at = e[3]
    return out


def node(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def evaluate(proof: list[bytes], index: int, entry: bytes, start: int, end: int) -> bytes:
    """The draft's "Evaluating a Subtree Inclusion Proof"."""
    size = end - start
    assert start % (1 << (size - 1).bit_length()) == 0 and start <= index < end
    fn, sn, r = index - start, size - 1, entry
    for p in proof:
        assert sn != 0, "proof too long"
        if fn & 1 or fn == sn:
            r = node(p, r)
            while not fn & 1:
                fn, sn = fn >> 1, sn >> 1
        else:
            r = node(r, p)
        fn, sn = fn >> 1, sn >> 1
    assert sn == 0, "proof too short"
    return r


def parse(der: bytes, encoding: str = "plants-07") -> dict:
    """The parts of an MTC this test needs, found by walking the DER itself."""
    _, cs, ce, _ = tlv(der)
    tbs, alg, sig = children(der, cs, ce)
    (_, _, ts, te, _), (alg_at, *_, alg_end), (_, _, ss, se, _) = tbs, alg, sig
    fields = children(der, ts, te)
    raw = [der[a:e] for a, _, _, _, e in fields]
    version, serial, sigalg, issuer, validity, subject, spki = raw[:7]
    spki_alg = der[fields[6][2] : tlv(der, fields[6][2])[3]]
    rest = b"".join(raw[7:])
    oid = MTC_PROOF_OID[encoding]
    assert der[alg_at:alg_end] == sigalg == bytes([0x30, len(oid)]) + oid
    value = der[ss + 1 : se]  # BIT STRING, 0 unused bits
    assert der[ss] == 0
    ext_len = int.from_bytes(value[:2], "big")
    extensions, at = value[: 2 + ext_len], 2 + ext_len
    start = int.from_bytes(value[at : at + 6], "big")
    end = int.from_bytes(value[at + 6 : at + 12], "big")
    at += 12
    plen = int.from_bytes(value[at : at + 2], "big")
    proof = [value[at + 2 + i : at + 34 + i] for i in range(0, plen, 32)]
    at += 2 + plen
    width = SIGNATURES_LENGTH[encoding]
    slen = int.from_bytes(value[at : at + width], "big")
    assert at + width + slen == len(value), "nothing after the MTCProof"
    entry = (
        extensions + b"\x00\x01" + version + issuer + validity + subject + spki_alg
        + b"\x04\x20" + hashlib.sha256(spki).digest() + rest
    )  # fmt: skip
    return {
        "serial": int.from_bytes(serial[2:], "big"),
        "entry_hash": hashlib.sha256(b"\x00" + entry).digest(),
        "start": start,
        "end": end,
        "proof": proof,
        "signatures_bytes": slen,
        "issuer": issuer,
    }


def pem_der(path) -> bytes:
    body = "".join(ln for ln in path.read_text().splitlines() if not ln.startswith("-----"))
    return base64.b64decode(body)


@pytest.mark.parametrize(
    "batch,seed,encoding",
    [
        (2, "a", "plants-07"), (3, "b", "plants-07"), (13, "c", "plants-07"),
        (4096, "d", "plants-07"), (4096, "e", "experimental"), (5000, "f", "plants-07"),
        (1 << 16, "g", "plants-07"), (13, "h", "experimental"),
    ],
)  # fmt: skip
def test_engine_proofs_verify_independently(tmp_path, engine_bin, batch, seed, encoding):
    out = tmp_path / "pki"
    subprocess.run(
        [str(engine_bin), "pki", "--chain", "ML-DSA-44", "--seed", seed, "--out", str(out),
         "--mtc-batch", str(batch), "--mtc-encoding", encoding],
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    manifest = json.loads((out / "mtc" / "manifest.json").read_text())
    trust = json.loads((out / "mtc" / "trust.json").read_text())
    for kind in ("landmark", "standalone"):
        cert = parse(pem_der(out / "mtc" / f"{kind}.pem"), encoding)
        index = cert["serial"] & ((1 << 48) - 1)
        assert cert["serial"] >> 48 == 1 and index == manifest["index"]
        assert [cert["start"], cert["end"]] == manifest["subtree"]
        # The issuer is the CA ID: a RELATIVE-OID (-07) or a UTF8String (experimental).
        assert cert["issuer"].endswith(ca_id_value(trust["ca_id"], encoding))
        root = evaluate(cert["proof"], index, cert["entry_hash"], cert["start"], cert["end"])
        held = [t for t in trust["trusted_subtrees"]
                if (t["start"], t["end"]) == (cert["start"], cert["end"])]  # fmt: skip
        assert len(held) == 1 and held[0]["hash"] == root.hex(), (kind, batch, seed)
        # A proof of a subtree of n entries has at most ceil(log2 n) hashes; 32 bytes each.
        size = cert["end"] - cert["start"]
        assert len(cert["proof"]) <= (size - 1).bit_length()
        assert manifest["proof_bytes"] == 32 * len(cert["proof"])
        tampered = list(cert["proof"])
        if tampered:
            tampered[0] = bytes([tampered[0][0] ^ 1]) + tampered[0][1:]
            got = evaluate(tampered, index, cert["entry_hash"], cert["start"], cert["end"])
            assert got != root
    assert parse(pem_der(out / "mtc" / "landmark.pem"), encoding)["signatures_bytes"] == 0
    assert manifest["encoding"] == encoding
    assert (out / "mtc" / "ca-cert.pem").exists() == (encoding == "plants-07")
    # The landmark list: "<last> <active>", then tree sizes newest first, ending with 0.
    lines = (out / "mtc" / "landmarks.txt").read_text().splitlines()
    last, active = map(int, lines[0].split())
    sizes = [int(x) for x in lines[1:]]
    assert len(sizes) == active + 1 and active <= last and sizes[-1] == 0
    assert sizes == sorted(sizes, reverse=True) and sizes[0] - sizes[1] == batch


def test_a_power_of_two_batch_gives_the_drafts_proof_length(tmp_path, engine_bin):
    """The draft's size rule: a subtree of 2^k entries takes k hashes (its hourly landmark of
    ~4.4 M entries, 23 hashes = 736 bytes). A batch of 2^k is covered by two subtrees of
    2^(k-1), so an entry's proof has k-1 hashes."""
    out, again = tmp_path / "pki", tmp_path / "again"
    for d in (out, again):
        subprocess.run(
            [str(engine_bin), "pki", "--chain", "ML-DSA-44", "--out", str(d),
             "--mtc-batch", "4096"],
            check=True, capture_output=True, timeout=120,
        )  # fmt: skip
    manifest = json.loads((out / "mtc" / "manifest.json").read_text())
    assert manifest["proof_hashes"] == 11 and manifest["proof_bytes"] == 352
    files = ("standalone.pem", "landmark.pem", "trust.json", "manifest.json", "landmarks.txt")
    for f in (*files, "ca-cert.pem"):
        assert (out / "mtc" / f).read_bytes() == (again / "mtc" / f).read_bytes(), f


@pytest.mark.parametrize("encoding", ["plants-07", "experimental"])
@pytest.mark.parametrize("leaf", ["ML-DSA-44", "ML-DSA-65", "ECDSA-P256"])
def test_the_size_estimate_is_the_issued_certificates(tmp_path, engine_bin, leaf, encoding):
    """`validate`'s estimate of an MTC's bytes (chainlab.axes.credential.der_bytes)
    against what `pki` issues, within the slack of a subject name's length."""
    from chainlab.axes import credential as c
    from chainlab.axes.algorithm_sizes import KEY_SIG_BYTES

    out = tmp_path / "pki"
    subprocess.run(
        [str(engine_bin), "pki", "--chain", f"ML-DSA-44,{leaf}", "--out", str(out),
         "--mtc-batch", "4096", "--mtc-cosigners", "ML-DSA-44,ECDSA-P256",
         "--mtc-encoding", encoding],
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    m = json.loads((out / "mtc" / "manifest.json").read_text())
    key = KEY_SIG_BYTES[leaf][0]
    sig = lambda a: KEY_SIG_BYTES[a][1]  # noqa: E731
    standalone = c.Certificate(
        c.STANDALONE, 4096, "ML-DSA-44", ("ML-DSA-44", "ECDSA-P256"), encoding=encoding
    )
    landmark = c.Certificate(c.LANDMARK, 4096, encoding=encoding)
    for cert, issued in ((standalone, m["standalone"]), (landmark, m["landmark"])):
        assert abs(c.der_bytes(cert, key, sig) - issued["der_bytes"]) <= 40, (leaf, issued)


@pytest.mark.parametrize("batch", [13, 4096])
def test_renewals_verify_independently_each_against_its_own_landmark(tmp_path, engine_bin, batch):
    """`pki --mtc-renewals 3`: the landmark-relative MTC of each landmark (2, 3, 4) proves
    inclusion in a subtree of that landmark's interval, which the trust file holds under
    that landmark's number and no other; the intervals follow each other by the batch in the
    landmark list; landmark.pem is the newest's, standalone.pem the newest interval's."""
    out = tmp_path / "pki"
    subprocess.run(
        [str(engine_bin), "pki", "--chain", "ML-DSA-44", "--seed", "r", "--out", str(out),
         "--mtc-batch", str(batch), "--mtc-renewals", "3"],
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    manifest = json.loads((out / "mtc" / "manifest.json").read_text())
    trust = json.loads((out / "mtc" / "trust.json").read_text())
    held = {(t["start"], t["end"]): t for t in trust["trusted_subtrees"]}
    lines = (out / "mtc" / "landmarks.txt").read_text().splitlines()
    assert lines[0] == "4 4"
    sizes = [int(x) for x in lines[1:]]  # landmarks 4, 3, 2, 1, 0
    assert [sizes[i] - sizes[i + 1] for i in range(3)] == [batch] * 3
    assert [m["landmark"] for m in manifest["landmarks"]] == [2, 3, 4]
    indices = set()
    for m in manifest["landmarks"]:
        n = m["landmark"]
        cert = parse(pem_der(out / "mtc" / m["cert"]["file"]))
        index = cert["serial"] & ((1 << 48) - 1)
        interval = (sizes[4 - n + 1], sizes[4 - n])  # [landmark n-1's size, landmark n's)
        assert interval[0] <= index < interval[1], (n, index, interval)
        indices.add(index)
        root = evaluate(cert["proof"], index, cert["entry_hash"], cert["start"], cert["end"])
        t = held[(cert["start"], cert["end"])]
        assert t["landmark"] == n and t["hash"] == root.hex(), n
        assert m["id"] == f"32473.1.0.1.{n}"
        assert cert["signatures_bytes"] == 0
    assert len(indices) == 3, "one renewal per interval"
    newest = manifest["landmarks"][-1]["cert"]["file"]
    assert (out / "mtc" / "landmark.pem").read_bytes() == (out / "mtc" / newest).read_bytes()
    standalone = parse(pem_der(out / "mtc" / "standalone.pem"))
    assert standalone["serial"] & ((1 << 48) - 1) == manifest["landmarks"][-1]["index"]
