#!/usr/bin/env bash
# Builds the pinned, patched, static OpenSSL that the engine links, into a cache outside the
# work tree, and points engine/.openssl at it. A second call with the same version and patches
# is a no-op (the cache key is the source version plus the hash of every applied patch).
#
#   OPENSSL_SRC_VERSION   openssl-src crate version (default: the 3.5 LTS pin below;
#                         400.0.2+4.0.3 builds OpenSSL 4.0 with the patches under patches/4.0)
#   CHAINLAB_CACHE        cache root (default: $XDG_CACHE_HOME/chainlab or ~/.cache/chainlab)
#   OPENSSL_LINK          the symlink to point at the build (default: engine/.openssl)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
engine=$(dirname "$here")

# 3.5 LTS: what Debian 13 / RHEL 10 ship; pinned exactly so results name one source tree.
version=${OPENSSL_SRC_VERSION:-300.5.5+3.5.5}
upstream=${version#*+}                  # 3.5.5
series=$(echo "$upstream" | cut -d. -f1,2) # 3.5
patchdir="$here/patches/$series"   # one folder of patches per OpenSSL series
if ! ls "$patchdir"/*.patch >/dev/null 2>&1; then
    echo "openssl: no patches for OpenSSL $series in $patchdir (have: $(ls "$here/patches" | tr '\n' ' '))" >&2
    exit 1
fi

cache=${CHAINLAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/chainlab}
patch_hash=$(cat "$patchdir"/*.patch | sha256sum | cut -c1-16)
prefix="$cache/openssl/$upstream-$patch_hash"

link_build() {
    ln -sfn "$prefix" "${OPENSSL_LINK:-$engine/.openssl}"
    echo "openssl: $upstream (patches $patch_hash) at $prefix"
}

if [ -f "$prefix/.complete" ]; then
    link_build
    exit 0
fi

# Fetch the crate's source through cargo (crates.io is the only source we reach) and find it.
fetch="$cache/fetch-$version"
mkdir -p "$fetch/src"
cat >"$fetch/Cargo.toml" <<EOF
[package]
name = "chainlab-openssl-fetch"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
openssl-src = "=$version"
EOF
: >"$fetch/src/lib.rs"
(cd "$fetch" && cargo fetch --quiet)
manifest=$(cd "$fetch" && cargo metadata --format-version 1 |
    python3 -c 'import json,sys; print(next(p["manifest_path"] for p in json.load(sys.stdin)["packages"] if p["name"] == "openssl-src"))')
src="$(dirname "$manifest")/openssl"

work="$cache/build-$upstream-$patch_hash"
rm -rf "$work" "$prefix"
cp -a "$src" "$work"
for p in "$patchdir"/*.patch; do
    patch -d "$work" -p1 --quiet --forward <"$p"
done

# Static, no shared objects, no loadable modules: the engine binary carries its whole TLS
# stack. zlib/brotli/zstd enable RFC 8879 certificate compression (openssl-src's own build
# forces no-comp, which is why we configure it ourselves).
cd "$work"
./Configure linux-x86_64 --prefix="$prefix" --libdir=lib \
    no-shared no-module no-legacy no-docs no-tests \
    enable-zlib enable-brotli enable-zstd >"$work/configure.log" 2>&1 ||
    { tail -20 "$work/configure.log"; exit 1; }
make -j"$(nproc)" >"$work/build.log" 2>&1 || { tail -40 "$work/build.log"; exit 1; }
make install_sw >/dev/null
# The CLI (used for `openssl verify` in tests and the s_server/s_time benchmark) wants a config.
mkdir -p "$prefix/ssl" && cp "$here/openssl.cnf" "$prefix/ssl/openssl.cnf"
cp "$patchdir"/*.patch "$prefix/"
cat >"$prefix/chainlab-openssl.json" <<EOF
{"openssl_src_crate": "$version", "openssl_version": "$upstream", "patch_sha256_16": "$patch_hash",
 "patches": [$(for p in "$patchdir"/*.patch; do printf '"%s",' "$(basename "$p")"; done | sed 's/,$//')]}
EOF
touch "$prefix/.complete"
rm -rf "$work"
link_build
