#!/usr/bin/env bash
# Forgets what a cargo target directory linked against a TLS library build once the symlink
# to that build moved (new patches, a new pin): cargo does not notice a changed tree behind
# OPENSSL_DIR or BORING_BSSL_PATH.
#   relink-if-moved.sh LINK TARGET_DIR [openssl|boringssl]   (paths relative to the repository root)
set -euo pipefail
link=$1 target=$2 kind=${3:-openssl}
case $kind in
openssl) packages=(-p openssl-sys -p openssl -p chainlab-engine) ;;
boringssl) packages=(-p boring-sys -p boring -p chainlab-boring) ;;
*) echo "relink-if-moved.sh: unknown library $kind; allowed: openssl, boringssl" >&2; exit 2 ;;
esac
now=$(readlink -f "$link")
was=$(cat "$target/.$kind-linked" 2>/dev/null || true)
if [ -n "$was" ] && [ "$was" != "$now" ]; then
    echo "$kind changed ($was -> $now): relinking its engine in $target"
    (cd engine && cargo clean --release --target-dir "${target#engine/}" "${packages[@]}")
fi
mkdir -p "$target" && echo "$now" >"$target/.$kind-linked"
