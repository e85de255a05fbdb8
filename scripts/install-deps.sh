#!/usr/bin/env bash
# Installs the Debian packages a part of chainlab needs, only those missing. Idempotent.
#   install-deps.sh [GROUP ...]   (default: core)
#
#   core:        the OpenSSL 3.5 engine and a first run: perl/make/gcc for OpenSSL (3.5 and
#                4.0) and aws-lc (the rustls stack, built by its crate with gcc, no cmake);
#                zlib, brotli, zstd headers for certificate compression; iproute2 for
#                network namespaces; util-linux's setpriv (engines' parent-death signal,
#                chainlab.processes; Debian always has it); valgrind for callgrind instruction counts ([measure] in
#                campaigns, `chainlab bench instructions`)
#   liboqs:      cmake and libclang (the `oqs-sys` crate builds liboqs with cmake and
#                generates its bindings with bindgen, which loads libclang): the rustls
#                engine and liboqs' algorithms in `pki`
#   boringssl:   cmake, git and libclang (the `boring-sys` crate patches BoringSSL with git,
#                builds it with cmake and generates its bindings with bindgen)
#   chromium:    the report's rendering test and the chrome client profile's comparison
#   all:         every group (`make engines`, `make test`)
set -euo pipefail
declare -A group=(
    [core]="build-essential perl pkg-config zlib1g-dev libbrotli-dev libzstd-dev iproute2 util-linux valgrind"
    [liboqs]="cmake libclang-dev"
    [boringssl]="cmake git libclang-dev"
    [chromium]="chromium"
)
wanted=("$@")
[ ${#wanted[@]} -eq 0 ] && wanted=(core)
pkgs=()
for g in "${wanted[@]}"; do
    if [ "$g" = all ]; then
        for k in core liboqs boringssl chromium; do pkgs+=(${group[$k]}); done
    elif [ -n "${group[$g]:-}" ]; then
        pkgs+=(${group[$g]})
    else
        echo "install-deps.sh: unknown group '$g'; allowed: ${!group[*]} all" >&2
        exit 2
    fi
done
missing=()
for p in $(printf '%s\n' "${pkgs[@]}" | sort -u); do
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
# The engine links the project-built, patched, static OpenSSL (engine/openssl/build.sh links
# engine/.openssl to it). Never the system OpenSSL 3.0, which has no ML-DSA/SLH-DSA/ML-KEM.
