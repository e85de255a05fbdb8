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
# aws-lc (the rustls stack's crypto) seeded from the kernel's getrandom, as OpenSSL and
# BoringSSL are, without its CPU jitter entropy source: that source's start-up took 58 ms of
# CPU in every rustls process (its server ready 66 ms after start against OpenSSL's 9 and
# BoringSSL's 4, 2026-11-30), paid by each scenario visit's server and each client batch.
AWS_LC_SYS_NO_JITTER_ENTROPY=1
export OPENSSL_DIR BORING_BSSL_PATH BORING_BSSL_INCLUDE_PATH AWS_LC_SYS_NO_JITTER_ENTROPY
cd "$here"
exec cargo "$@"
