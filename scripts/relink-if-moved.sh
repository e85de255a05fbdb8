#!/usr/bin/env bash
# Forgets what a cargo target directory linked against an OpenSSL build once the symlink to
# that build moved (new patches, a new pin): cargo does not notice a changed OPENSSL_DIR tree.
#   relink-if-moved.sh LINK TARGET_DIR   (both relative to the repository root)
set -euo pipefail
link=$1 target=$2
now=$(readlink -f "$link")
was=$(cat "$target/.openssl-linked" 2>/dev/null || true)
if [ -n "$was" ] && [ "$was" != "$now" ]; then
    echo "OpenSSL changed ($was -> $now): relinking the engine in $target"
    (cd engine && cargo clean --release --target-dir "${target#engine/}" \
        -p openssl-sys -p openssl -p chainlab-engine)
fi
mkdir -p "$target" && echo "$now" >"$target/.openssl-linked"
