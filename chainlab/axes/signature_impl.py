"""The `signature_impl` axis: whose code signs and verifies ML-DSA, the stack's own or
liboqs."""

from __future__ import annotations

from chainlab.axes import stack as stacks
from chainlab.axes.axis import (
    NOT_MINE,
    Axis,
)

# Whose code signs and verifies ML-DSA (the engines' --signature-impl): the stack's own, or
# liboqs (the rustls stack): one algorithm across implementations. liboqs' own families
# (Falcon, MAYO, UOV, CROSS) are liboqs' whatever this says.
SIGNATURE_IMPLS = ("stack", "liboqs")
SIGNATURE_IMPL_PREFIX = "impl_"
SIGNATURE_IMPL = Axis(
    key="signature_impl",
    label="signature implementation",
    default="stack",
    read=SIGNATURE_IMPLS,
    order={"stack": 0},
    id_part=lambda v, _: SIGNATURE_IMPL_PREFIX + v,
    id_read=lambda p, _: (
        p[len(SIGNATURE_IMPL_PREFIX) :]
        if p.startswith(SIGNATURE_IMPL_PREFIX)
        and p[len(SIGNATURE_IMPL_PREFIX) :] in SIGNATURE_IMPLS[1:]
        else NOT_MINE
    ),
    id_help=", ".join(SIGNATURE_IMPL_PREFIX + v for v in SIGNATURE_IMPLS[1:]),
    flags=lambda v: ["--signature-impl", v] if v != "stack" else [],
    describe=lambda v: f"{v} signatures",
    needs=lambda v, _: [stacks.need("both", "signature_impl_liboqs")] if v == "liboqs" else [],
)
