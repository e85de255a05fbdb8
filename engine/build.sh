#!/usr/bin/env bash
# Builds the parts of chainlab's engines, each only when asked for: `make run` builds the
# OpenSSL 3.5 engine alone (what the default campaign runs), chainlab builds any other part
# the first time a campaign needs it (chainlab.engine.ensure), `make engines` builds them all.
# The libraries are cached by version outside the work tree (engine/openssl/build.sh,
# engine/boringssl/build.sh); cargo's own output is seeded from a cache too (below).
#
#   engine/build.sh PART [PART ...]
#
#   openssl-3.5  the engine on OpenSSL 3.5 (engine/target/release/chainlab-engine)
#   liboqs       the same engine with liboqs' algorithms (Falcon, MAYO, UOV, CROSS) in `pki`
#                and `primitives`
#   openssl-4.0  the engine on OpenSSL 4.0 (engine/target/openssl-4.0/release/chainlab-engine)
#   rustls       the rustls engine (aws-lc, liboqs)
#   boringssl    the BoringSSL engine (BoringSSL, then chainlab-boring)
#   go           the Go engine (Go 1.27 and quic-go, from the Go module proxy)
#   link         the emulated link's forwarder (chainlab-link)
#   all          every part, the whole cargo workspace (`make engines`)
#
#   CHAINLAB_CACHE  cache root (default: $XDG_CACHE_HOME/chainlab or ~/.cache/chainlab)
#
# A new checkout has no engine/target: it starts from the newest copy of one (a "seed") kept
# in the cache for this Cargo.lock, Rust toolchain and cargo.sh, so cargo rebuilds the
# workspace's own crates and not the libraries under them (aws-lc, liboqs: minutes each).
# `all` keeps a seed when the cache has none for this key. Copied binaries are removed from a
# restored seed: a binary is always one this checkout built. `seed` keeps the current build as the seed once
# it holds the tests' and lints' builds too (`make test` calls it after them).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
cache=${CHAINLAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/chainlab}
target="$here/target"
parts_file="$target/.chainlab-parts"
OPENSSL_40_SRC=400.0.2+4.0.3
export GOTOOLCHAIN=${GOTOOLCHAIN:-go1.27.3}
BINARIES=(release/chainlab-engine release/chainlab-rustls release/chainlab-boring
    release/chainlab-link release/chainlab-go openssl-4.0/release/chainlab-engine)

deps() { "$repo/scripts/install-deps.sh" "$@"; }

has_part() { grep -qx "$1" "$parts_file" 2>/dev/null; }
add_part() {
    mkdir -p "$target"
    has_part "$1" || echo "$1" >>"$parts_file"
}

seed_dir() {
    local key
    # cargo.sh sets the environment the crates' builds read (aws-lc's options): part of it.
    key=$( { cat "$here/Cargo.lock"; rustc -vV; cat "$here/cargo.sh"; } | sha256sum | cut -c1-16)
    echo "$cache/cargo-seed/$key"
}

seed_restore() {
    [ -d "$target" ] && return 0
    local seed
    seed=$(seed_dir)
    [ -f "$seed/.complete" ] || return 0
    echo "engine: starting from the cached build of this Cargo.lock ($seed)"
    cp -a "$seed/target" "$target.restoring"
    for b in "${BINARIES[@]}"; do rm -f "$target.restoring/$b"; done
    rm -f "$target.restoring/.chainlab-parts"
    mv "$target.restoring" "$target"
}

# seed_save LEVEL: keep this build as the seed where the cache has none for this key, or
# one of a lower level (engines < tested: a tested build holds the test and lint builds too).
seed_save() {
    local level=$1 seed
    seed=$(seed_dir)
    if [ -f "$seed/.complete" ]; then
        [ "$level" = tested ] && [ "$(cat "$seed/.complete")" = engines ] || return 0
    fi
    echo "engine: keeping this build as the cache's seed ($level)"
    local work="$seed.saving-$$"
    mkdir -p "$work"
    cp -a "$target" "$work/target"
    echo "$level" >"$work/.complete"
    rm -rf "$seed.old-$$"
    [ -d "$seed" ] && mv -T "$seed" "$seed.old-$$"
    mv -T "$work" "$seed" 2>/dev/null || rm -rf "$work" # another checkout saved it first
    rm -rf "$seed.old-$$"
    # One seed a toolchain and lock: older keys go.
    find "$cache/cargo-seed" -mindepth 1 -maxdepth 1 -type d ! -path "$seed" \
        ! -name '*.saving-*' -exec rm -rf {} +
}

relink() { (cd "$repo" && scripts/relink-if-moved.sh "$@"); }

cargo_release() { "$here/cargo.sh" build --release "$@"; }

# The OpenSSL 3.5 engine, with liboqs where it was asked for once, as the whole workspace
# where `all` built it (the same features every time, so cargo never flips between two
# builds of one binary).
build_openssl35() {
    "$here/openssl/build.sh"
    relink engine/.openssl engine/target
    if has_part all; then
        relink engine/.boringssl engine/target boringssl
        cargo_release --workspace --features chainlab-engine/liboqs
    elif has_part liboqs; then
        cargo_release -p chainlab-engine --features liboqs
    else
        cargo_release -p chainlab-engine
    fi
}

build_openssl40() {
    OPENSSL_SRC_VERSION=$OPENSSL_40_SRC OPENSSL_LINK="$here/.openssl-4.0" "$here/openssl/build.sh"
    relink engine/.openssl-4.0 engine/target/openssl-4.0
    # Its own target directory: two OpenSSLs' symbols cannot share one build of openssl-sys.
    OPENSSL_DIR="$here/.openssl-4.0" "$here/cargo.sh" build --release -p chainlab-engine \
        --target-dir target/openssl-4.0
}

build_part() {
    case $1 in
    openssl-3.5)
        deps core
        build_openssl35
        ;;
    liboqs)
        deps core liboqs
        add_part liboqs
        build_openssl35
        ;;
    openssl-4.0)
        deps core
        build_openssl40
        ;;
    rustls)
        deps core liboqs
        cargo_release -p chainlab-rustls
        ;;
    boringssl)
        deps core boringssl
        "$here/boringssl/build.sh"
        relink engine/.boringssl engine/target boringssl
        cargo_release -p chainlab-boring
        ;;
    go)
        "$here/go/build.sh"
        ;;
    link)
        deps core
        cargo_release -p chainlab-link
        ;;
    all)
        deps all
        "$here/boringssl/build.sh"
        add_part all
        build_openssl35
        build_openssl40
        "$here/go/build.sh"
        seed_save engines
        ;;
    seed)
        seed_save tested
        ;;
    esac
}

PARTS=" openssl-3.5 liboqs openssl-4.0 rustls boringssl go link all seed "
[ $# -gt 0 ] || { echo "usage: engine/build.sh PART [PART ...] (see its header)" >&2; exit 2; }
for part in "$@"; do
    case $PARTS in
    *" $part "*) ;;
    *) echo "engine/build.sh: unknown part '$part'; allowed:$(echo "$PARTS" | sed 's/ /, /g; s/^,//; s/, $//')" >&2; exit 2 ;;
    esac
done
seed_restore
for part in "$@"; do build_part "$part"; done
