"""Every seed a run derives from its own seed, from one function.

A run has one seed (the campaign's `seed`, or `chainlab run --seed`). The server hierarchies
are generated under it as it is (`chainlab-engine pki --seed <run seed>`); everything else
that draws at random gets a seed of its own from `derive(seed, purpose, *keys)`:

| purpose            | keys               | what it seeds                                       |
|--------------------|--------------------|-----------------------------------------------------|
| `client-hierarchy` |                    | a mutual-TLS client hierarchy (`--purpose client`)  |
| `second-chain`     |                    | a dual-chain server's second hierarchy              |
| `order`            |                    | the shuffle of `order = "random"`                   |
| `batch`            | scenario id, batch | a batch's resumption-mix and population draws       |
| `load-step`        | scenario id, step  | a load step's arrival process (`load --seed`)       |
| `link`             | profile name       | an emulated link's loss and jitter (unless declared) |
| `random`           | scenario id        | counted handshakes' random bytes (`--random-seed`)  |
| `path-reference`   | stack, profile, ... | a path reference's half and its twin's bytes        |

The derivation is SHA-256 over `chainlab <purpose> <seed> <key> ...` (single spaces), its
first eight bytes read big-endian: an unsigned 64-bit integer, what every engine's seed flag
takes. Distinct purposes and keys give independent seeds, so no two hierarchies share a key
because their algorithms coincide, and no two scenarios or steps share a stream. The same
(seed, purpose, keys) always gives the same value, so a rerun repeats every draw.
"""

from __future__ import annotations

import hashlib

# The purposes `derive` knows (the table above): a typo is an error, not a new stream.
PURPOSES = (
    "client-hierarchy",
    "second-chain",
    "order",
    "batch",
    "load-step",
    "link",
    "random",
    "path-reference",
)


def derive(seed: int, purpose: str, *keys: object) -> int:
    """The seed for `purpose` (and `keys`: a scenario id, a batch or step number, ...) of a
    run whose seed is `seed`: an unsigned 64-bit integer (see the module's table)."""
    if purpose not in PURPOSES:
        raise ValueError(f"unknown seed purpose {purpose!r}; allowed: {', '.join(PURPOSES)}")
    text = " ".join(["chainlab", purpose, str(seed), *map(str, keys)])
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")
