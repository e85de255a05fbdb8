"""Hierarchies for scenarios: generated once by `chainlab-engine pki`, cached, reused.

`pki` output is deterministic in (algorithms, seed, purpose, engine build), so the cache key
is exactly that: the algorithms root to leaf, the seed, what the leaf authenticates (a
server, or a client for mutual TLS) and the SHA-256 of the engine binary (a rebuilt engine
may encode certificates differently). A client hierarchy and a dual-chain server's second
hierarchy are generated under seeds of their own (chainlab.runner.seeds), so each is a CA of
its own: keys depend on (seed, role, algorithm) only, and a root of the same algorithm as the
server's would otherwise be the server's root, key and name.
Cache: `$CHAINLAB_PKI_CACHE`, else `$XDG_CACHE_HOME/chainlab/pki`, else
`~/.cache/chainlab/pki`. A hierarchy is generated into a temporary directory and renamed
into place, so a killed run never leaves a half one.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from chainlab import engine as chainlab_engine
from chainlab import environment
from chainlab.axes.algorithms import token
from chainlab.campaign.model import Scenario
from chainlab.runner import seeds

CHAIN_FILES = {
    "leaf": "chain-leaf.pem",
    "leaf+intermediates": "chain-leaf+intermediates.pem",
    "full": "chain-full.pem",
    "intermediate-anchor": "chain-leaf.pem",
}
PEM_RE = re.compile(rb"-----BEGIN CERTIFICATE-----(.+?)-----END CERTIFICATE-----", re.S)


class PkiError(Exception):
    pass


def cache_root() -> Path:
    return environment.cache_dir("pki")


def location(
    engine: Path,
    hierarchy: tuple[str, ...],
    seed: int,
    purpose: str = "server",
    mtc: list[str] | None = None,
) -> Path:
    """Where the cache keeps this hierarchy (whether or not it is there yet): keyed by what
    determines its files (the algorithms, seed, purpose and MTC options; `pki`'s revision and
    the OpenSSL and liboqs builds that issue it), not by the engine binary, so a rebuilt
    engine over unchanged libraries keeps its hierarchies."""
    spec = {"hierarchy": list(hierarchy), "seed": str(seed), "issuer": issuer(engine)}
    if purpose != "server":
        spec["purpose"] = purpose  # server keys stay as they were before purposes existed
    if mtc:
        spec["mtc"] = mtc  # likewise the keys of hierarchies without MTCs
    key = hashlib.sha256(json.dumps(spec).encode()).hexdigest()[:16]
    kind = ("" if purpose == "server" else f"{purpose}-") + ("mtc-" if mtc else "")
    return cache_root() / f"{kind}{'-'.join(token(a) for a in hierarchy)}-s{seed}-{key}"


def issuer(engine: Path) -> dict:
    """What of the issuing engine's `info` determines `pki`'s files (chainlab_engine::pki::
    REVISION: a test there fails when they change without it)."""
    info = chainlab_engine.binary_info(engine)
    return {
        "pki_revision": info.get("pki_revision"),
        "openssl": info.get("openssl_build"),
        "liboqs": info.get("liboqs"),
    }


def cached(final: Path) -> bool:
    return (final / "manifest.json").is_file()


def needed(s: Scenario, seed: int) -> list[tuple[tuple[str, ...], int, str, list[str] | None]]:
    """The hierarchies scenario `s` runs with, as `ensure`'s (hierarchy, seed, purpose, mtc):
    the server's; a mutual-TLS client's (its own CA); a dual-chain server's second."""
    out: list[tuple[tuple[str, ...], int, str, list[str] | None]] = [
        (s.hierarchy, seed, "server", s.handshake.credential.pki_flags())
    ]
    if s.handshake.client_hierarchy:
        out.append((s.handshake.client_hierarchy, client_seed(seed), "client", None))
    if s.handshake.second_hierarchy:
        out.append((s.handshake.second_hierarchy, second_seed(seed), "server", None))
    return out


def client_seed(seed: int) -> int:
    """A mutual-TLS client hierarchy's seed: its own CA."""
    return seeds.derive(seed, "client-hierarchy")


def second_seed(seed: int) -> int:
    """A dual-chain server's second hierarchy's seed (staged rollout): its own CA, whatever
    algorithms it shares with the first."""
    return seeds.derive(seed, "second-chain")


def ensure(
    engine: Path,
    hierarchy: tuple[str, ...],
    seed: int,
    purpose: str = "server",
    mtc: list[str] | None = None,
) -> Path:
    """The directory of the hierarchy (root first), generating it on a cache miss; `mtc`:
    the `pki` flags that also issue Merkle Tree Certificates for its leaf (`mtc/`)."""
    final = location(engine, hierarchy, seed, purpose, mtc)
    root = final.parent
    if cached(final):
        return final
    root.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".gen-", dir=root))
    try:
        out = subprocess.run(
            [
                str(engine),
                "pki",
                "--chain",
                ",".join(hierarchy),
                "--out",
                str(tmp / "pki"),
                "--seed",
                str(seed),
                "--purpose",
                purpose,
                *(mtc or []),
            ],
            capture_output=True,
            text=True,
            timeout=3600,  # a depth-4 SLH-DSA-256s hierarchy signs 4 times at ~1 s each
            check=False,
        )
        if out.returncode != 0:
            last = (out.stderr.strip().splitlines() or [f"exit {out.returncode}"])[-1]
            raise PkiError(f"pki --chain {','.join(hierarchy)} failed: {last}")
        try:
            os.rename(tmp / "pki", final)
        except OSError:
            if not (final / "manifest.json").is_file():  # not a concurrent run's copy
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return final


def ensure_client(engine: Path, hierarchy: tuple[str, ...], seed: int) -> Path:
    """The client certificate hierarchy of a mutual-TLS scenario."""
    return ensure(engine, hierarchy, client_seed(seed), purpose="client")


def ensure_second(engine: Path, hierarchy: tuple[str, ...], seed: int) -> Path:
    """A dual-chain server's second hierarchy."""
    return ensure(engine, hierarchy, second_seed(seed))


def pem_certs(path: Path) -> list[bytes]:
    """DER of every certificate in a PEM file, in file order."""
    return [base64.b64decode(b"".join(m.split())) for m in PEM_RE.findall(path.read_bytes())]


@dataclass
class ServedChain:
    file: Path
    sha256: str  # of the chain file
    der_bytes: int
    length: int


def sent_chain(pki_dir: Path, policy: str) -> ServedChain:
    """The chain file `serve --chain <policy>` sends (an MTC policy: its certificate)."""
    f = pki_dir / CHAIN_FILES.get(policy, f"mtc/{policy.removeprefix('mtc-')}.pem")
    if not f.is_file():
        raise PkiError(f"hierarchy has no {f.name}")
    ders = pem_certs(f)
    return ServedChain(
        f, hashlib.sha256(f.read_bytes()).hexdigest(), sum(map(len, ders)), len(ders)
    )


def certificate_rows(pki_dir: Path, s: Scenario) -> list[dict]:
    """`certificates` rows (position 0 = leaf) from the hierarchy's full chain file, with the
    algorithms of the scenario and whether the served chain carries each certificate."""
    full = pem_certs(pki_dir / CHAIN_FILES["full"])
    if len(full) != s.depth:
        raise PkiError(f"{CHAIN_FILES['full']} holds {len(full)} certificates, expected {s.depth}")
    sent = sent_chain(pki_dir, s.handshake.engine_chain).file
    served = {hashlib.sha256(d).hexdigest() for d in pem_certs(sent)}
    if s.handshake.credential.is_mtc:
        # The MTC takes the leaf's place: the X.509 certificates stay, none of them sent.
        full[0] = pem_certs(sent)[0]
    leaf_first_algs = list(reversed(s.hierarchy))
    leaf_first_roles = s.certificate_roles
    rows = []
    for pos, der in enumerate(full):
        digest = hashlib.sha256(der).hexdigest()
        role = leaf_first_roles[pos]
        rows.append(
            {
                "scenario_id": s.scenario_id,
                "position": pos,
                "role": role,
                "algorithm": leaf_first_algs[pos],
                "der_bytes": len(der),
                "sha256": digest,
                "served": digest in served,
            }
        )
    return rows
