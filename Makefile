PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test test-fast check-migrations multihost-drill multihost-cluster-drill lint bench clean chromium nginx conformance-tools promtool amtool image image-tag lock clients

# Every dependency from the lock, checked by hash (the `dev` and `otel` extras; the image
# installs requirements.lock); then this project alone. `make lock` rewrites the locks.
$(STAMP): pyproject.toml requirements-dev.lock
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV) || python3 -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --require-hashes -r requirements-dev.lock
	$(BIN)/python -m pip install --quiet --no-deps -e .
	@touch $(STAMP)

# Resolve pyproject.toml's ranges again from PyPI (uv reads no pip configuration) for
# Python 3.11 on every platform; upgrade one package with UPGRADE='-P name'
# (docs/CONTRIBUTING.md, "Upgrading dependencies").
LOCK_OPTIONS := --generate-hashes --universal --python-version 3.11 --quiet $(UPGRADE)
lock: $(STAMP)
	$(BIN)/uv pip compile pyproject.toml --extra otel $(LOCK_OPTIONS) -o requirements.lock
	$(BIN)/uv pip compile pyproject.toml --extra dev -c requirements.lock $(LOCK_OPTIONS) \
	  -o requirements-dev.lock

PORT ?= 8000

run: $(STAMP)
	$(BIN)/geosvc dev --port $(PORT)

# Four processes (pytest-xdist), a test file each at a time, the longest files handed out
# first (tests/support/schedule.py): much of a test's time is spent waiting on the servers
# and workers it starts (three processes kept two cores 40 % busy in a whole run).
# TEST_PROCESSES=0 runs in this process alone (pdb, -x).
# Bytecode is written even where the environment says not to (PYTHONDONTWRITEBYTECODE):
# each test process rewrites every test module's asserts when it collects, about half of
# its collection's CPU, unless pytest may keep the rewritten module in __pycache__.
# The indices are those `make run` and `make test-fast` use (.geosvc, built once: a build
# inside the run held every process for minutes); copied once into the run.
TEST_PROCESSES ?= 4
test: $(STAMP) chromium nginx conformance-tools promtool amtool
	$(BIN)/geosvc data build --data-dir .geosvc
	GEOSVC_TEST_DATA_DIR=.geosvc PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest \
	  -n $(TEST_PROCESSES) --dist loadfile --no-loadscope-reorder $(PYTEST_ARGS)

# The tests that start no process and need no service (tests/support/tiers.py decides),
# on fakeredis and the indices `make run` uses (.geosvc, built once); bytecode written as
# for `test`. Two processes: the tier is CPU-bound, one a core (FAST_PROCESSES=0: this
# process alone).
FAST_PROCESSES ?= 2
test-fast: $(STAMP)
	$(BIN)/geosvc data build --data-dir .geosvc
	GEOSVC_TEST_DATA_DIR=.geosvc GEOSVC_TEST_FAKE_REDIS=1 REQUIRE_SERVICES=0 \
	  PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -m 'not slow' -n $(FAST_PROCESSES) \
	  $(PYTEST_ARGS)

# The models against the migrations (alembic's autogenerate comparison, as `alembic
# check`): a fresh SQLite database, and PostgreSQL when reachable (REQUIRE_SERVICES=1: must be).
check-migrations: $(STAMP)
	$(BIN)/python -m pytest -q tests/test_migrations.py $(PYTEST_ARGS)

# The multi-host drill (tests/drills/test_multihost.py; root, ~4 min): opt-in, not in `make test`.
# Its hosts share the indices `make run` uses (GEOSVC_DATA_DIR, else .geosvc), built first;
# -rP prints the drill's tables (per phase, and the ledger per account).
multihost-drill: $(STAMP)
	$(BIN)/geosvc data build --data-dir $${GEOSVC_DATA_DIR:-.geosvc}
	GEOSVC_MULTIHOST_DRILL=1 $(BIN)/python -m pytest -rP tests/drills/test_multihost.py $(PYTEST_ARGS)

# The same on a 3-master Redis Cluster, each node on a host of its own (~2 min): opt-in.
multihost-cluster-drill: $(STAMP)
	$(BIN)/geosvc data build --data-dir $${GEOSVC_DATA_DIR:-.geosvc}
	GEOSVC_MULTIHOST_DRILL=1 $(BIN)/python -m pytest -rP tests/drills/test_multihost_cluster.py $(PYTEST_ARGS)

# Debian's chromium for the dashboard's browser tests (Playwright drives the system binary;
# no browser download). Without root it is left to you: those tests then skip, or fail
# under REQUIRE_SERVICES=1.
chromium:
	@test -x /usr/bin/chromium || { \
	  if [ "$$(id -u)" = 0 ]; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; \
	  else echo "/usr/bin/chromium missing: run 'apt-get install chromium' as root"; fi; }

# Debian's nginx for tests/test_proxy.py, which runs deploy/nginx.conf (the proxy compose
# puts in front of the api) against a real api. Without root: those tests skip, or fail
# under REQUIRE_SERVICES=1.
nginx:
	@test -x /usr/sbin/nginx || { \
	  if [ "$$(id -u)" = 0 ]; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx-light; \
	  else echo "/usr/sbin/nginx missing: run 'apt-get install nginx-light' as root"; fi; }

# Debian's prometheus package for promtool: tests/deployment/test_alerts.py checks and
# unit-tests deploy/alerts.yml offline. Without root: that test skips, or fails under
# REQUIRE_SERVICES=1.
promtool:
	@test -x /usr/bin/promtool || { \
	  if [ "$$(id -u)" = 0 ]; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus; \
	  else echo "/usr/bin/promtool missing: run 'apt-get install prometheus' as root"; fi; }

# Debian's prometheus-alertmanager package for amtool: tests/deployment/test_alerts.py
# checks deploy/alertmanager.yml and its routes offline. Without root: those tests skip,
# or fail under REQUIRE_SERVICES=1.
amtool:
	@test -x /usr/bin/amtool || { \
	  if [ "$$(id -u)" = 0 ]; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus-alertmanager; \
	  else echo "/usr/bin/amtool missing: run 'apt-get install prometheus-alertmanager' as root"; fi; }

# The release's image tag: the package version and the git commit (-dirty with local
# changes), e.g. 0.1.0-3c4b240a1f2e. `make image` builds geosvc:<tag> and prints the
# line for .env (docker-compose.yml runs geosvc:${GEOSVC_IMAGE_TAG}); docs/DEPLOYMENT.md.
IMAGE_TAG = $(shell sed -n 's/^version = "\(.*\)"/\1/p' pyproject.toml)-$(shell git rev-parse --short=12 HEAD)$(shell git diff --quiet HEAD || echo -dirty)

image-tag:
	@echo $(IMAGE_TAG)

image:
	docker build --build-arg GEOSVC_VERSION=$(IMAGE_TAG) -t geosvc:$(IMAGE_TAG) .
	@echo "GEOSVC_IMAGE_TAG=$(IMAGE_TAG)"

# The MCP conformance suite and the Node 22 it needs, both from the npm registry into
# .cache/conformance (Node as the node-linux-<arch> package, which carries the official
# binary; a node 22 on PATH is used instead). tests/mcp/test_conformance.py installs them
# too when missing. Without npm: that test skips, or fails under REQUIRE_SERVICES=1.
conformance-tools: $(STAMP)
	@command -v npm >/dev/null || { echo "npm missing: the MCP conformance test needs it"; exit 0; }; \
	  $(BIN)/python -m tests.support.conformance_suite

# The client libraries (clients/) regenerated from the API's OpenAPI document by the pinned
# generators (clients/generate.py; tests/clients/test_generated.py fails while they are stale).
clients: $(STAMP)
	$(BIN)/python clients/generate.py

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy app workers beat_schedule.py
	MYPYPATH=clients/python $(BIN)/mypy -p geosvc_client

bench: $(STAMP)
	$(BIN)/python bench/metering.py
	$(BIN)/python bench/geodata.py
	$(BIN)/python bench/mcp_e2e.py

clean:
	rm -rf $(VENV) .geosvc .pytest_cache .mypy_cache .ruff_cache
