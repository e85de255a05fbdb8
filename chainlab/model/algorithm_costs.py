"""What each signature algorithm costs before this machine's primitives are measured: the
built-in sign and verify times (the sizes are the algorithms' facts:
chainlab.axes.algorithm_sizes). `chainlab.model.estimate` reads them;
`tests/campaign/test_algorithms.py` checks every algorithm has them.
"""

from __future__ import annotations

from chainlab.axes.algorithm_sizes import composite_sum
from chainlab.axes.algorithms import COMPOSITE_COMPONENTS

# Milliseconds per operation: `openssl speed -seconds 1 -mr <alg>` with the project's
# OpenSSL 3.5.5 on this machine kind (2 shared cores), one run per algorithm. The fallback
# of an estimate made before this machine's primitives are measured (`chainlab bench
# primitives`, or any campaign run); with them, the cost model replaces this table.
SIGN_VERIFY_MS: dict[str, tuple[float, float]] = {
    "ML-DSA-44": (0.645, 0.128),
    "ML-DSA-65": (1.004, 0.159),
    "ML-DSA-87": (0.905, 0.253),
    "SLH-DSA-SHA2-128s": (310.0, 0.285),
    "SLH-DSA-SHA2-128f": (12.5, 0.740),
    "SLH-DSA-SHA2-192s": (500.0, 0.402),
    "SLH-DSA-SHA2-192f": (21.1, 1.148),
    "SLH-DSA-SHA2-256s": (453.0, 0.785),
    "SLH-DSA-SHA2-256f": (58.8, 1.445),
    "SLH-DSA-SHAKE-128s": (720.0, 0.740),
    "SLH-DSA-SHAKE-128f": (42.3, 2.555),
    "SLH-DSA-SHAKE-192s": (1430.0, 1.017),
    "SLH-DSA-SHAKE-192f": (67.9, 4.076),
    "SLH-DSA-SHAKE-256s": (1060.0, 1.618),
    "SLH-DSA-SHAKE-256f": (108.3, 2.910),
    "ECDSA-P256": (0.0153, 0.0452),
    "ECDSA-P384": (0.565, 0.476),
    "Ed25519": (0.0205, 0.0622),
    "RSA-2048": (0.233, 0.0140),
    "RSA-3072": (0.666, 0.0306),
    # liboqs 0.13 (the rustls stack's, and `chainlab-engine primitives`): median of 100
    # `primitives --op sign|verify --count 100` on this machine kind, CertificateVerify message.
    "Falcon-512": (0.195, 0.0343),
    "Falcon-1024": (0.379, 0.0674),
    "MAYO-1": (0.161, 0.0772),
    "MAYO-2": (0.0656, 0.0301),
    "UOV-Is": (0.0200, 0.0130),
    "UOV-Ip": (0.0253, 0.0151),
    "UOV-Ip-pkc": (0.0195, 0.0509),
    "CROSS-RSDPG-128-fast": (0.353, 0.216),
    "CROSS-RSDPG-128-small": (1.174, 0.898),
}

# Composite ML-DSA: both components sign and verify (the pre-hash of M' is priced once
# this machine's primitives are measured: the cost model's `prehash` operation).
SIGN_VERIFY_MS.update({name: composite_sum(SIGN_VERIFY_MS, name) for name in COMPOSITE_COMPONENTS})
