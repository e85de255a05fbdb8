# chainlab: two commands.
#   make run    the main job: the bundled campaign into results/, then its report
#   make test   every check CI runs: formatting, lints, engine tests, Python tests, a tiny
#               end-to-end campaign
# Everything they need is installed by the targets below (Debian packages, the patched
# OpenSSL into ~/.cache/chainlab, the engine, a Python venv in .venv).

SHELL := /bin/bash
PY := .venv/bin/python
CARGO := engine/cargo.sh
CAMPAIGN ?= campaigns/signature-placement.toml
STORE ?= results/$(basename $(notdir $(CAMPAIGN))).duckdb
# The Go engine (engine/go, chainlab-go) needs Go 1.27 (crypto/mldsa): the machine's own go
# fetches it as a module when this is exported (engine/go/build.sh). Every shell that builds
# or vets engine/go needs it too.
export GOTOOLCHAIN := go1.27.3
# The Rust tests and lints see liboqs' algorithms (as `make engines` builds them).
CARGO_FEATURES := --workspace --features chainlab-engine/liboqs

# Python packages are installed exactly as requirements.lock pins them (hashes checked);
# `make lock` re-resolves it after pyproject.toml's dependencies change (existing pins are
# kept where they still fit; `make lock LOCK_FLAGS=--upgrade` moves every pin to the newest).
PIP_TOOLS := pip-tools==7.6.2
LOCK_FLAGS ?=

.PHONY: run test check setup deps engine engines python lint lint-python bench clean lock

# The main job: the default campaign needs the OpenSSL 3.5 engine alone; any other part a
# campaign asks for (a stack, liboqs, the emulated link) chainlab builds the first time
# (engine/build.sh, chainlab.engine.ensure).
run: setup
	$(PY) -m chainlab run $(CAMPAIGN) --store $(STORE) --resume
	$(PY) -m chainlab report $(STORE)

# The engine tests whose assertions hold only on a host nothing else loads (an open-loop
# generator far below capacity starts every attempt on time; a QUIC server keeps up with 150
# attempts a second; quic-go under load resends nothing, so each side's datagrams are the
# other's: one resent beside the Python tests on 2026-11-30, and so did the OpenSSL QUIC
# server in the quic tests' mixed chains the same day): they run alone, at the end. A name
# is matched in every test binary (handshake.rs has a mixed_chain_... over TCP too).
ENGINE_TIMED_TESTS := past_capacity_throughput_stops_growing_and_failures_are_recorded \
	the_load_generator_runs_over_quic_and_the_server_serves_connections_at_once \
	go_quic_failures_are_recorded_by_category \
	go_loads_its_own_quic_server \
	mixed_chain_under_each_served_chain_policy

# Everything CI runs: every engine, the lints and type checks, every test.
# The engines' tests are built and run beside the Python tests that time nothing
# (docs/testing.md; building them leaves the engines' binaries as they are), the emulated
# link's before them: its tests time round trips through the link.
test: engines python lint
	cd engine/go && go test ./...
	$(CARGO) test --release -p chainlab-link -- --test-threads=1
	scripts/beside.py build/cargo-test.log \
		'$(CARGO) test --release $(CARGO_FEATURES) --no-run && engine/build.sh seed && $(CARGO) test --release $(CARGO_FEATURES) --exclude chainlab-link -- --test-threads=1 $(foreach t,$(ENGINE_TIMED_TESTS),--skip $(t))' \
		$(PY) -m pytest -m "not serial" -n 2 --durations=25
	$(PY) -m pytest -m serial --durations=25
	$(CARGO) test --release $(CARGO_FEATURES) --exclude chainlab-link -- --test-threads=1 --exact $(ENGINE_TIMED_TESTS)

# The fast tier (docs/testing.md): units, store, analysis, report text without figures,
# the engines' unit tests; no engine process, namespace or chainlab subprocess.
check: engines python lint-python
	$(CARGO) test --release $(CARGO_FEATURES) --lib --bins
	$(PY) -m pytest -m "not engine and not netns and not cli and not serial" -n 2 --durations=25
	$(PY) -m pytest -m "serial and not engine and not netns and not cli" --durations=25

setup: deps python engine

deps:
	@scripts/install-deps.sh core

# The OpenSSL 3.5 engine (its OpenSSL built once into ~/.cache/chainlab).
engine:
	@engine/build.sh openssl-3.5

# Every TLS stack's engine (docs/stacks.md), liboqs and the emulated link.
engines:
	@engine/build.sh all

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

lint: engines lint-python
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --release $(CARGO_FEATURES) --all-targets -- -D warnings
	@test -z "$$(cd engine/go && gofmt -l .)" || { echo "engine/go: gofmt -l lists files to format" >&2; exit 1; }
	cd engine/go && go vet ./...

lint-python: python
	.venv/bin/ruff check chainlab tests
	.venv/bin/ruff format --check chainlab tests
	.venv/bin/mypy chainlab

bench: setup
	$(PY) -m chainlab bench engine

clean:
	rm -rf engine/target .venv results
