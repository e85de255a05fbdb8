# chainlab: two commands.
#   make run    the main job: the bundled campaign into results/, then its report
#   make test   every check CI runs: formatting, lints, engine tests, Python tests, a tiny
#               end-to-end campaign
# Everything they need is installed by the targets below (Debian packages, the patched
# OpenSSL into ~/.cache/chainlab, the engine, a Python venv in .venv).

SHELL := /bin/bash
PY := .venv/bin/python
CARGO := cargo
ENGINE := engine/target/release/chainlab-engine
CAMPAIGN ?= campaigns/signature-placement.toml
STORE ?= results/$(basename $(notdir $(CAMPAIGN))).duckdb

.PHONY: run test setup deps openssl engine python lint bench clean

run: setup
	$(PY) -m chainlab run $(CAMPAIGN) --store $(STORE) --resume
	$(PY) -m chainlab report $(STORE)

test: setup lint
	cd engine && $(CARGO) test --release --workspace -- --test-threads=1
	$(PY) -m pytest -q

setup: deps openssl engine python

deps:
	@scripts/install-deps.sh

openssl: deps
	@engine/openssl/build.sh

engine: openssl
	cd engine && $(CARGO) build --release --workspace

python: .venv/.installed

.venv/.installed: pyproject.toml
	python3 -m venv .venv
	.venv/bin/pip install -q --upgrade pip
	.venv/bin/pip install -q -e '.[dev]'
	touch $@

lint: python engine
	cd engine && $(CARGO) fmt --all -- --check
	cd engine && $(CARGO) clippy --release --workspace --all-targets -- -D warnings
	.venv/bin/ruff check chainlab tests
	.venv/bin/ruff format --check chainlab tests

bench: setup
	$(PY) -m chainlab.bench engine

clean:
	rm -rf engine/target .venv results
