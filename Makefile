# The two commands that matter: `make run` (the application on embedded defaults) and
# `make test` (the whole suite against real PostgreSQL, Redis and Chromium).
SHELL := /bin/bash
.DEFAULT_GOAL := help

VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | md5sum | cut -c1-12)
NODE_STAMP := node_modules/.installed-$(shell cat package.json package-lock.json contracts/*.sol | md5sum | cut -c1-12)
HOST ?= 127.0.0.1
PORT ?= 8000
# make run starts a local chain (anvil) with the test stablecoin and enables the local network.
# make pay and make send-withdrawal find that chain by themselves (the address its setup records
# in var/local-chain.json), unless ANVIL_PORT or RPC_URL_LOCAL is given to them.
ifneq ($(filter command line environment,$(origin ANVIL_PORT)),)
pay send-withdrawal: export RPC_URL_LOCAL ?= http://127.0.0.1:$(ANVIL_PORT)
endif
ANVIL_PORT ?= 8545
run: export RPC_URL_LOCAL ?= http://127.0.0.1:$(ANVIL_PORT)
# No process assumes its settings (config/startup.py): the developer's targets name theirs.
run pay send-withdrawal soak messages: export DJANGO_SETTINGS_MODULE ?= config.settings.dev
# Links in emails point where make run serves the site, unless SITE_URL says otherwise (honcho
# gives every process a PORT of its own, so the worker cannot take the web's from PORT).
SITE_URL ?= http://$(HOST):$(PORT)
# make test runs the suite on TEST_WORKERS pytest-xdist workers (one more than the cores: a third
# of the time the tests wait on ssh, the chain or a browser; 2 cores: 612 s on two, 556 s on three; 0: serially,
# in this process), each worker with its own test database and Redis databases, every run with
# a private redis-server (tests/isolation.py): two make test at once on one machine never
# meet.
TEST_WORKERS ?= $(shell echo $$(( $$(nproc) + 1 )))
TEST_DIST ?= load

.PHONY: help install run test lint bench messages clean pay send-withdrawal soak fault-run

help:
	@echo "make run    - install, migrate, load the demo catalogue and start web + worker + beat"
	@echo "make test   - install test needs, start PostgreSQL/Redis if missing, run the whole suite"
	@echo "              in parallel, a worker per core (TEST_WORKERS=0: serially; TEST_WORKERS=4;"
	@echo "              PYTEST_ARGS=\"-k journey -x\" for pytest's own options)"
	@echo "make lint   - ruff and lint-imports (which app and which payments room imports which)"
	@echo "make bench  - benchmarks (ratios against an in-process baseline)"
	@echo "make soak   - make run under a customer load for SOAK_MINUTES (30), then check it all"
	@echo "make fault-run - the production roles under load with faults (FAULT_MINUTES, 10), a verdict"
	@echo "make pay PAYMENT=PAY-000001 - pay a crypto payment (its reference) from the local chain"

$(PY):
	scripts/find-python -m venv $(VENV)

$(STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	rm -f $(VENV)/.installed-*
	touch $@

$(NODE_STAMP): package.json package-lock.json contracts/*.sol contracts/build.mjs
	npm ci --no-audit --no-fund --loglevel=error
	node contracts/build.mjs
	rm -f node_modules/.installed-*
	touch $@

install: $(STAMP) $(NODE_STAMP)

run: install
	$(PY) manage.py migrate --noinput
	$(PY) manage.py load_demo_catalogue
	$(PY) manage.py load_demo_accounts
	$(PY) manage.py load_demo_balance
	@echo ""
	@echo "  GPU rental is starting at http://$(HOST):$(PORT)/  (Ctrl-C stops web, worker, beat, chain and demo SSH server)"
	@echo ""
	HOST=$(HOST) PORT=$(PORT) ANVIL_PORT=$(ANVIL_PORT) SITE_URL="$(SITE_URL)" \
	  PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(VENV)/bin/honcho -f Procfile.dev start

# Not part of make test: the make run stack on free ports in a scratch VAR_DIR under a customer
# load for SOAK_MINUTES (default 30), then every process, payment and balance checked.
soak: install
	$(PY) scripts/soak.py

# Not part of make test: Procfile.production's roles as plain processes (two web servers) under a
# customer load for FAULT_MINUTES (10) with faults (slow webhook receivers, a broker cut, a worker
# SIGKILLed, a second beat), then what was lost and how long confirmations took.
fault-run: install
	scripts/ensure-test-services
	$(PY) -m scripts.fault_run

test: install
	scripts/ensure-test-services
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports
	DJANGO_SETTINGS_MODULE=config.settings.dev DATABASE_URL=sqlite:///:memory: \
	  $(PY) manage.py makemigrations --check --dry-run
	$(PY) -m pytest -n $(TEST_WORKERS) --dist $(TEST_DIST) $(PYTEST_ARGS)

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports

bench: install
	scripts/ensure-test-services
	DJANGO_SETTINGS_MODULE=config.settings.test $(PY) bench/run.py
	DJANGO_SETTINGS_MODULE=config.settings.test $(PY) bench/watcher.py
	DJANGO_SETTINGS_MODULE=config.settings.test $(PY) bench/settle.py
	DJANGO_SETTINGS_MODULE=config.settings.test $(PY) bench/payment_page.py
	$(PY) bench/http_pages.py
	$(PY) bench/http_floor.py
	$(PY) bench/plain_pages.py
	DJANGO_SETTINGS_MODULE=config.settings.test $(PY) bench/http_parts.py
	DJANGO_SETTINGS_MODULE=config.settings.test $(PY) bench/api_calls.py
	DJANGO_SETTINGS_MODULE=config.settings.test $(PY) bench/hosts.py
	$(PY) bench/table.py

messages: install
	$(PY) manage.py makemessages -l it --ignore '.venv/*' --ignore 'node_modules/*' --ignore 'var/*' --ignore 'tests/*' --ignore 'bench/*' --ignore 'pilot/kit/*/files/*' --ignore 'pilot/kit/kernodeck/*' --no-obsolete
	$(PY) manage.py compilemessages -l it --ignore '.venv/*' --ignore 'node_modules/*'

pay: install
	@test -n "$(PAYMENT)" || { echo "usage: make pay PAYMENT=<reference, e.g. PAY-000001> [UNITS=<token units>]"; exit 2; }
	$(PY) manage.py pay_local $(PAYMENT) $(if $(UNITS),--units $(UNITS),)

send-withdrawal: install
	@test -n "$(WITHDRAWAL)" || { echo "usage: make send-withdrawal WITHDRAWAL=<withdrawal id> [UNITS=<token units>]"; exit 2; }
	$(PY) manage.py send_withdrawal_local $(WITHDRAWAL) $(if $(UNITS),--units $(UNITS),)

clean:
	@# The demo hosts' accounts (grdemo-*) and their SSH servers, made by make run as root.
	-[ "$$(id -u)" != 0 ] || [ ! -x $(PY) ] || $(PY) -c "from rental.hosts.localhost import remove_accounts; print('removed demo accounts:', remove_accounts('grdemo-'))"
	-pkill -f "sshd -D -e -f $(CURDIR)/var/demo-hosts/" 2>/dev/null || true
	rm -rf $(VENV) node_modules var .pytest_cache .hypothesis
