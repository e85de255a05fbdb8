#!/usr/bin/env bash
# Builds the Go engine (chainlab-go) with Go 1.27 into engine/target/release/, beside the
# Rust engines. The machine's own `go` fetches Go 1.27.3 as a module from the Go module proxy
# the first time (GOTOOLCHAIN=go1.27.3, about 76 MB, cached in the module cache under
# $(go env GOMODCACHE) like any module). Its one dependency, quic-go v0.65.0 (QUIC, with
# what it needs), is pinned in go.mod and go.sum and fetched into the same module cache the
# first time. `go build` itself is incremental (Go's build cache).
#
#   GOTOOLCHAIN   the Go release that builds the engine (default go1.27.3: crypto/mldsa)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
out="$(dirname "$here")/target/release/chainlab-go"
export GOTOOLCHAIN=${GOTOOLCHAIN:-go1.27.3}

if ! command -v go >/dev/null 2>&1; then
    echo "chainlab-go: no \`go\` command on PATH: install Go 1.21 or later, which then fetches GOTOOLCHAIN=$GOTOOLCHAIN itself" >&2
    exit 1
fi
# Fetch (or find) the toolchain first, so a failure says which and why in one line rather
# than as a compiler's trace.
if ! said=$(cd "$here" && go version 2>&1); then
    reason=$(printf '%s\n' "$said" | grep -v '^go: downloading' | head -n 1)
    echo "chainlab-go: cannot get the Go toolchain GOTOOLCHAIN=$GOTOOLCHAIN: $reason (the engine needs Go 1.27: crypto/mldsa, ML-DSA in crypto/tls)" >&2
    exit 1
fi
mkdir -p "$(dirname "$out")"
cd "$here"
if ! said=$(go mod download 2>&1); then
    reason=$(printf '%s\n' "$said" | grep -v '^go: downloading' | head -n 1)
    echo "chainlab-go: cannot get the modules go.mod pins (quic-go): $reason" >&2
    exit 1
fi
go build -trimpath -o "$out" .
