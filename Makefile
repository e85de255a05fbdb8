# chainlab: two commands.
#   make run    the main job: the bundled campaign into results/, then its report
#   make test   every check CI runs: formatting, lints, engine tests, Python tests, a tiny
#               end-to-end campaign
# Everything they need is installed by the targets below (Debian packages, the patched
# OpenSSL into ~/.cache/chainlab, the engine, a Python venv in .venv).

SHELL := /bin/bash
PY := .venv/bin/python
CARGO := cd engine && cargo
# The OpenSSL 4.0 engine: the environment's OPENSSL_DIR wins over engine/.cargo/config.toml's.
CARGO_40 := cd engine && OPENSSL_DIR=$(CURDIR)/engine/.openssl-4.0 cargo
ENGINE := engine/target/release/chainlab-engine
CAMPAIGN ?= campaigns/signature-placement.toml
STORE ?= results/$(basename $(notdir $(CAMPAIGN))).duckdb
# The five TLS stacks (docs/stacks.md): the engine linked against OpenSSL 3.5 (the default,
# engine/.openssl) and against OpenSSL 4.0 (engine/.openssl-4.0, its own target directory:
# two OpenSSLs' symbols cannot share one binary), the rustls engine (chainlab-rustls), the
# BoringSSL engine (chainlab-boring, its BoringSSL behind engine/.boringssl) and the Go engine
# (chainlab-go, engine/go). The OpenSSL and BoringSSL builds are cached side by side in
# ~/.cache/chainlab; Go 1.27 in Go's module cache.
OPENSSL_40_SRC := 400.0.2+4.0.3
# The Go engine (engine/go, chainlab-go) needs Go 1.27 (crypto/mldsa): the machine's own go
# fetches it as a module when this is exported (engine/go/build.sh). Every shell that builds
# or vets engine/go needs it too.
export GOTOOLCHAIN := go1.27.3
ENGINE_40_TARGET := target/openssl-4.0

# Python packages are installed exactly as requirements.lock pins them (hashes checked);
# `make lock` re-resolves it after pyproject.toml's dependencies change (existing pins are
# kept where they still fit; `make lock LOCK_FLAGS=--upgrade` moves every pin to the newest).
PIP_TOOLS := pip-tools==7.6.2
LOCK_FLAGS ?=

.PHONY: run test setup deps openssl boringssl engine python lint bench clean lock

run: setup
	$(PY) -m chainlab run $(CAMPAIGN) --store $(STORE) --resume
	$(PY) -m chainlab report $(STORE)

test: setup lint
	$(CARGO) test --release --workspace -- --test-threads=1
	cd engine/go && go test ./...
	$(PY) -m pytest -q

setup: deps openssl boringssl engine python

deps:
	@scripts/install-deps.sh

openssl: deps
	@engine/openssl/build.sh
	@OPENSSL_SRC_VERSION=$(OPENSSL_40_SRC) OPENSSL_LINK=$(CURDIR)/engine/.openssl-4.0 engine/openssl/build.sh

# BoringSSL as the pinned boring-sys crate builds it, once, into ~/.cache/chainlab.
boringssl: deps
	@engine/boringssl/build.sh

# engine/.cargo/config.toml points cargo at engine/.openssl and engine/.boringssl; when a link
# moves to another build (new patches, a new pin), forget what was linked to the old.
engine: openssl boringssl
	@scripts/relink-if-moved.sh engine/.openssl engine/target
	@scripts/relink-if-moved.sh engine/.openssl-4.0 engine/$(ENGINE_40_TARGET)
	@scripts/relink-if-moved.sh engine/.boringssl engine/target boringssl
	$(CARGO) build --release --workspace
	$(CARGO_40) build --release -p chainlab-engine --target-dir $(ENGINE_40_TARGET)
	@engine/go/build.sh

python: .venv/.installed

.venv/.installed: pyproject.toml requirements.lock
	python3 -m venv .venv
	.venv/bin/pip install -q --require-hashes --no-deps -r requirements.lock
	.venv/bin/pip install -q --no-deps --no-build-isolation -e .
	touch $@

lock:
	rm -rf build/lock-venv && python3 -m venv build/lock-venv
	build/lock-venv/bin/pip install -q $(PIP_TOOLS)
	build/lock-venv/bin/pip-compile -q --extra dev --all-build-deps --generate-hashes \
		--allow-unsafe --strip-extras --no-emit-find-links $(LOCK_FLAGS) \
		-o requirements.lock pyproject.toml
	rm -rf build/lock-venv

lint: python engine
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --release --workspace --all-targets -- -D warnings
	@test -z "$$(cd engine/go && gofmt -l .)" || { echo "engine/go: gofmt -l lists files to format" >&2; exit 1; }
	cd engine/go && go vet ./...
	.venv/bin/ruff check chainlab tests
	.venv/bin/ruff format --check chainlab tests

bench: setup
	$(PY) -m chainlab bench engine

clean:
	rm -rf engine/target .venv results
