#!/usr/bin/env bash
# cargo in engine/, with the TLS libraries' paths resolved through engine/.openssl and
# engine/.boringssl to their builds in the cache (engine/.cargo/config.toml names the links
# themselves for a bare `cargo` in engine/). cargo keys a build script's run by these
# variables' values: resolved, they are the same in every checkout, so a new checkout's
# seeded build (engine/build.sh) keeps aws-lc-sys, openssl-sys and boring-sys as they are
# instead of running their builds again, and a new library build still gets a new value.
#   engine/cargo.sh ARGS...     (OPENSSL_DIR set by the caller is resolved too)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
OPENSSL_DIR=$(readlink -f "${OPENSSL_DIR:-$here/.openssl}")
BORING_BSSL_PATH=$(readlink -f "$here/.boringssl")
BORING_BSSL_INCLUDE_PATH=$BORING_BSSL_PATH/include
export OPENSSL_DIR BORING_BSSL_PATH BORING_BSSL_INCLUDE_PATH
cd "$here"
exec cargo "$@"
