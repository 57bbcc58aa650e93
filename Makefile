# One command for each job; every target creates the virtualenv it needs.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# mypy and import-linter resolve modules from folders, and the editable install maps each layer
# folder into the `factledger` namespace through an import hook they cannot read: they see the
# layers through this tree of symlinks, laid out as the installed package is. It is made by
# the two targets that need it (`typecheck`, `imports`), nothing else reads it.
TREE := .build/tree
# Where `make demo` leaves the story's ledger for `make console` to show.
DEMO_DIR := .factledger/demo
LAYERS := domain application adapters projections api client integrations testing bench
# The TypeScript client (its tests run under pytest, tests/e2e/test_typescript_client.py).
TS_CLIENT := clients/typescript
TS_CLIENT_STAMP := $(TS_CLIENT)/node_modules/.package-lock.json

# The official Node MCP SDK, from its lock file, for tests/e2e/test_mcp_transports.py (which
# skips, naming what is missing, on a machine without node and npm).
NODE_TEST := tests/mcp_node
NODE_STAMP := $(NODE_TEST)/node_modules/.package-lock.json

.PHONY: install demo console serve worker test lint typecheck imports unit bench browser clean node-deps openapi

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

$(TREE)/factledger: Makefile
	@mkdir -p $@
	@for layer in $(LAYERS); do ln -sfn ../../../$$layer $@/$$layer; done

$(NODE_STAMP): $(NODE_TEST)/package-lock.json
	@if command -v npm >/dev/null 2>&1; then \
		npm ci --prefix $(NODE_TEST) --no-audit --no-fund --silent; \
	else echo "npm not found: the Node MCP SDK test will be skipped" >&2; fi

# Fails, never skips, without npm: the TypeScript client's tests are part of the suite.
$(TS_CLIENT_STAMP): $(TS_CLIENT)/package-lock.json
	@command -v npm >/dev/null 2>&1 || { echo "npm is not installed: the TypeScript client ($(TS_CLIENT)) needs Node.js 20+ and npm" >&2; exit 1; }
	npm ci --prefix $(TS_CLIENT) --no-audit --no-fund --silent

node-deps: $(NODE_STAMP) $(TS_CLIENT_STAMP)

# After a change to the API: the OpenAPI document the TypeScript client is generated from, and
# its generated types (tests/e2e/test_typescript_client.py fails while either is stale).
openapi: $(STAMP) $(TS_CLIENT_STAMP)
	$(BIN)/factledger openapi --output $(TS_CLIENT)/openapi.json
	cd $(TS_CLIENT) && npm run generate

demo: $(STAMP)
	rm -rf $(DEMO_DIR)
	$(BIN)/factledger demo --data-dir $(DEMO_DIR)

# The reviewer's console on the demo's data: prints a sign-in link, then serves the API.
console: $(STAMP)
	@FACTLEDGER_DATA_DIR=$(DEMO_DIR) $(BIN)/factledger console-link --tenant acme
	FACTLEDGER_DATA_DIR=$(DEMO_DIR) $(BIN)/factledger serve

serve: $(STAMP)
	$(BIN)/factledger serve

worker: $(STAMP)
	$(BIN)/factledger worker

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP) $(TREE)/factledger
	cd $(TREE) && ../../$(BIN)/mypy --config-file ../../pyproject.toml -p factledger

imports: $(STAMP) $(TREE)/factledger
	PYTHONPATH=$(TREE) $(BIN)/lint-imports

unit: $(STAMP)
	$(BIN)/pytest -q tests/unit

# The browser tests (tests/browser) drive Debian's Chromium through Playwright, which never
# downloads a browser of its own. A missing one is installed where the package manager can be
# used (as root, or through sudo without a password); where it cannot, this says so, and the
# browser tests skip, each naming the missing browser in pytest's summary.
browser:
	@if ! command -v chromium >/dev/null 2>&1; then \
		as_root=""; \
		if [ "$$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1; then as_root="sudo -n"; fi; \
		if ! { $$as_root apt-get update -qq && \
			DEBIAN_FRONTEND=noninteractive $$as_root apt-get install -y -qq chromium; }; then \
			echo "chromium is missing and could not be installed:" \
				"the browser tests (tests/browser) will be skipped" >&2; \
		fi; \
	fi

# The suite in two parts: everything but the `serial` tests in three workers (a test file's
# tests stay together, in one of them; three on two cores, because the container test spends
# most of its minutes waiting on downloads and builds), then the `serial` ones alone: they
# bound a latency or kill a server, which a neighbouring worker's load would make a matter of
# luck. Both parts always run; the target fails if either does. pytest exits 5 when it
# collects nothing: a suite that tests nothing must not pass.
# Each part has a wall-clock budget: pytest-timeout's alarm cannot stop a test stuck inside
# native code, so past its budget a part is interrupted (SIGINT: pytest still prints what
# failed so far, and the faulthandler has printed where a stuck test stands) and fails with
# 124, rather than run until CI's own limit and say nothing. The parallel part lists its ten
# slowest tests, so that a run's time can be read from its output alone.
PYTEST_WORKERS ?= 3
PARALLEL_BUDGET_S ?= 2100
SERIAL_BUDGET_S ?= 900
BOUNDED := timeout --signal=INT --kill-after=60
test: lint typecheck imports browser node-deps
	@$(BOUNDED) $(PARALLEL_BUDGET_S) $(BIN)/pytest -q -n $(PYTEST_WORKERS) --dist loadfile \
		--durations=10 -m "not serial"; parallel=$$?; \
	$(BOUNDED) $(SERIAL_BUDGET_S) $(BIN)/pytest -q -m serial; serial=$$?; \
	for status in $$parallel $$serial; do \
		if [ $$status -eq 5 ]; then echo "no tests were collected" >&2; exit 1; fi; \
		if [ $$status -eq 124 ]; then echo "a part of the suite ran out of its budget" >&2; fi; \
	done; \
	if [ $$parallel -ne 0 ]; then exit $$parallel; fi; exit $$serial

# The lab's main benchmark (`factledger-lab --help` lists the others).
bench: $(STAMP)
	$(BIN)/factledger-lab bench

clean:
	rm -rf $(VENV) .build .mypy_cache .pytest_cache .ruff_cache $(NODE_TEST)/node_modules \
		$(TS_CLIENT)/node_modules $(TS_CLIENT)/dist
