# Assay: `make run` starts everything on this machine; `make test` runs every test.
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
ASSAY := $(VENV)/bin/assay
NPM := npm --prefix frontend
POSTGRES_TEST_URL ?= postgresql://postgres@127.0.0.1:5432/test
PYTEST := $(PY) -m pytest -p no:cacheprovider -q

export ASSAY_PORT ?= 8000
export ASSAY_WEB_PORT ?= 5173
export ASSAY_FAKE_PORT ?= 8100

.PHONY: run install api-types check-api lint typecheck test test-python test-sqlite \
	test-postgres test-web e2e test-all bench clean report-assets

run: install ## Build, migrate, seed, and start fake provider, API, worker and SPA
	$(ASSAY) up

install: $(VENV)/.installed frontend/node_modules/.installed

$(VENV)/.installed: pyproject.toml requirements.lock
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip uv
	$(VENV)/bin/uv pip sync -q --python $(PY) requirements.lock
	$(VENV)/bin/uv pip install -q --python $(PY) --no-deps -e .
	touch $@

frontend/node_modules/.installed: frontend/package-lock.json
	cd frontend && npm ci --no-audit --no-fund
	touch $@

api-types: install ## Regenerate the OpenAPI document and the SPA's TypeScript types
	$(ASSAY) openapi write --format=json frontend/src/api/openapi.json
	$(NPM) run gen:api

check-api: install ## Fail when the committed OpenAPI document or TS types are stale
	@tmp=$$(mktemp) && $(ASSAY) openapi write --format=json $$tmp && \
	if ! diff -q $$tmp frontend/src/api/openapi.json >/dev/null; then \
	  echo "frontend/src/api/openapi.json is stale: run 'make api-types' and commit."; \
	  diff -u frontend/src/api/openapi.json $$tmp | head -40; rm -f $$tmp; exit 1; fi; rm -f $$tmp
	$(NPM) run check:api

report-assets: install ## Vendor chart.js (node_modules) into the HTML report's package data
	$(NPM) run vendor:report

lint: install
	$(VENV)/bin/ruff check backend tests

typecheck: install
	$(VENV)/bin/mypy
	$(NPM) run typecheck

test-sqlite: install
	$(PYTEST) tests

test-postgres: install
	ASSAY_TEST_DATABASE_URL=$(POSTGRES_TEST_URL) $(PYTEST) tests/api tests/engine tests/faults

test-python: install ## Both Python suites side by side, each on its own Redis database
	MAKE="$(MAKE)" $(PY) -m tests.parallel test-sqlite test-postgres

test-web: install
	$(NPM) test

e2e: install ## Playwright in Debian's Chromium against the whole stack
	$(NPM) run build
	$(NPM) run e2e

test: install ## Everything CI runs, on throwaway PostgreSQL/Redis where none is running
	$(PY) -m tests.services -- $(MAKE) --no-print-directory test-all

# The longest suite first; the browser tests, then the web tests, take the place of whichever
# Python suite ends first (two at a time: this machine has two cores; the web tests last, since
# Vitest alone takes a minute and five beside a Python suite).
test-all: lint typecheck check-api
	MAKE="$(MAKE)" $(PY) -m tests.parallel --jobs 2 test-postgres test-sqlite e2e test-web

bench: install ## Speed figures of DESIGN.md section 9, as ratios
	$(PY) -m tests.bench

clean:
	rm -rf $(VENV) frontend/node_modules frontend/dist instance
