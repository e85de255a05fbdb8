#!/usr/bin/env bash
# Installs the Debian packages chainlab needs, only those missing. Idempotent.
#   build: perl/make/gcc for OpenSSL (3.5 and 4.0) and aws-lc (the rustls stack, built by its
#          crate with gcc, no cmake); zlib, brotli, zstd headers for certificate compression;
#          cmake and libclang for liboqs (the `oqs-sys` crate builds it with cmake and
#          generates its bindings with bindgen, which loads libclang); cmake, git and
#          libclang for BoringSSL (the `boring-sys` crate patches it with git, builds it with
#          cmake, and generates its bindings with bindgen: engine/boringssl/build.sh)
#   run:   iproute2 for network namespaces; chromium for the report's rendering test
#   valgrind: callgrind instruction counts ([measure] in campaigns, `chainlab bench engine`,
#     `chainlab bench instructions`)
set -euo pipefail
pkgs=(build-essential perl pkg-config cmake git libclang-dev zlib1g-dev libbrotli-dev libzstd-dev iproute2 chromium valgrind)
missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
    echo "chainlab needs these Debian packages: ${missing[*]}" >&2
    echo "install them with: sudo apt-get install -y ${missing[*]}" >&2
    exit 1
fi
echo "installing Debian packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
