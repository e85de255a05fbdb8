#!/usr/bin/env bash
# Builds BoringSSL as the pinned `boring-sys` crate builds it (its vendored source with the
# crate's post-quantum patch, by the crate's own build script: git apply, cmake), once, into a
# cache outside the work tree, and points engine/.boringssl at it. engine/.cargo/config.toml
# hands that build to boring-sys (BORING_BSSL_PATH), so no engine build compiles BoringSSL
# again. A second call with the same pin is a no-op.
#
#   CHAINLAB_CACHE   cache root (default: $XDG_CACHE_HOME/chainlab or ~/.cache/chainlab)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
engine=$(dirname "$here")

# The pin is engine/Cargo.lock's: the version chainlab-boring links is the one built here.
version=$(awk '/^name = "boring-sys"$/ { getline; gsub(/"/, "", $3); print $3 }' "$engine/Cargo.lock")
if [ -z "$version" ]; then
    echo "boringssl: engine/Cargo.lock has no boring-sys" >&2
    exit 1
fi
cache=${CHAINLAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/chainlab}
# The key: the crate's version and this script (how it is built).
key=$(cat "$0" | sha256sum | cut -c1-16)
prefix="$cache/boringssl/$version-$key"

link_build() {
    ln -sfn "$prefix" "$engine/.boringssl"
    echo "boringssl: boring-sys $version at $prefix"
}

if [ -f "$prefix/.complete" ]; then
    link_build
    exit 0
fi
for tool in cmake git; do
    if ! command -v "$tool" >/dev/null; then
        echo "boringssl: $tool is missing (make deps installs it)" >&2
        exit 1
    fi
done

# A throwaway crate outside the engine's workspace (so engine/.cargo/config.toml, which
# points boring-sys at this very build, does not apply), whose build of boring-sys installs
# the libraries and headers it built into an empty directory.
work="$cache/build-boringssl-$version"
rm -rf "$work" "$prefix"
mkdir -p "$work/src" "$work/install"
cat >"$work/Cargo.toml" <<TOML
[package]
name = "chainlab-boringssl-build"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
boring-sys = "=$version"
TOML
: >"$work/src/lib.rs"
(cd "$work" && BORING_BSSL_INSTALL_DIR="$work/install" cargo build --release --quiet \
    >"$work/build.log" 2>&1) || { tail -40 "$work/build.log"; exit 1; }
mkdir -p "$(dirname "$prefix")"
mv "$work/install" "$prefix"
cat >"$prefix/chainlab-boringssl.json" <<JSON
{"boring_sys_crate": "$version", "build_sha256_16": "$key"}
JSON
touch "$prefix/.complete"
rm -rf "$work"
link_build
