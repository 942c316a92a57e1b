# Two commands do all set-up on a fresh machine: `make run` and `make test`.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
# Two install stamps: `make run` installs what the service needs, `make test`
# adds the test tools; each reinstalls only when its requirements change.
RUN_STAMP := $(VENV)/.installed-run
DEV_STAMP := $(VENV)/.installed-dev
HOST ?= 127.0.0.1
PORT ?= 8000
PG_URL ?= postgres://postgres@127.0.0.1:5432/memory_service
REDIS_URL ?= redis://127.0.0.1:6379
# The suite's Redis databases (broker, cache); a second checkout running its
# suite at the same time picks others.
REDIS_BROKER_DB ?= 15
REDIS_CACHE_DB ?= 0
PYTEST_WORKERS ?= 2
# Where the embedded mode keeps its files (the settings read MEMORY_VAR_DIR too).
VAR ?= $(or $(MEMORY_VAR_DIR),var)

.PHONY: run test test-quick test-sqlite test-postgres venv node-deps crewai-deps migrate browser-deps bench lint clean

$(RUN_STAMP): requirements.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	touch $(RUN_STAMP)

$(DEV_STAMP): $(RUN_STAMP) requirements-dev.txt
	$(PY) -m pip install --quiet -r requirements-dev.txt
	touch $(DEV_STAMP)

venv: $(DEV_STAMP)

# The Node package's dependencies, from its committed lock file (`npm ci`
# builds the package too, through its `prepare` script); again only when the
# lock file changes. The suite runs its tests (tests/memory_client_node/).
NODE_PACKAGE := memory-client-node
NODE_STAMP := $(NODE_PACKAGE)/node_modules/.installed

$(NODE_STAMP): $(NODE_PACKAGE)/package-lock.json
	cd $(NODE_PACKAGE) && npm ci --no-audit --no-fund --loglevel=error
	touch $(NODE_STAMP)

node-deps: $(NODE_STAMP)

# CrewAI's environment, apart from .venv: crewai pins openai<3, pydantic<2.13
# and mcp<2, older than the service's. It holds crewai (requirements-crewai.txt)
# and the Django-free client; the suite runs a crew in it against a live test
# server (tests/adapters/test_crewai_memory.py). Measured: about 1 GB (lancedb,
# pyarrow, chromadb, onnxruntime come with crewai) and 2-3 minutes to install
# on the 2-core machine, once: again only when its pins change.
CREWAI_VENV := .venv-crewai
CREWAI_STAMP := $(CREWAI_VENV)/.installed

$(CREWAI_STAMP): requirements-crewai.txt memory_client/pyproject.toml
	test -x $(CREWAI_VENV)/bin/python || $(PYTHON) -m venv $(CREWAI_VENV)
	$(CREWAI_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(CREWAI_VENV)/bin/python -m pip install --quiet -r requirements-crewai.txt "./memory_client[crewai]"
	touch $(CREWAI_STAMP)

crewai-deps: $(CREWAI_STAMP)

migrate: $(RUN_STAMP)
	@$(PY) manage.py migrate --noinput

# The embedded service: SQLite and a file-system Celery broker under var/, a real
# worker with beat beside the web server, on http://$(HOST):$(PORT).
# - A busy port stops the run before anything starts: a second `make run`
#   must not touch the first one's log, broker or control socket.
# - gunicorn's control socket is this instance's own (by default every
#   gunicorn of the user shares ~/.gunicorn/gunicorn.ctl).
# - Ctrl-C stops both and waits for them: background jobs of a script ignore
#   SIGINT, so the trap passes a TERM to each (by pid: `kill 0` would signal
#   this shell too and re-enter the trap). A signal sent to make alone
#   (`kill -INT <make's pid>`) ends make but not this shell, so a watcher
#   stops the children once make is gone.
run: $(RUN_STAMP)
	@$(PY) -c 'import socket; s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("$(HOST)", $(PORT)))' 2>/dev/null \
	  || { echo "$(HOST):$(PORT) is in use: nothing was started. Choose another port, e.g. make run PORT=8001" >&2; exit 1; }
	@mkdir -p $(VAR)/log $(VAR)/run
	@$(PY) manage.py bootstrap_demo --migrate --base-url http://$(HOST):$(PORT) --output $(VAR)/demo-credentials.txt
	@echo "Starting the Celery worker + beat (log: $(VAR)/log/celery.log) and the web server on http://$(HOST):$(PORT)"
	@$(VENV)/bin/celery -A memory_project worker -B --concurrency 1 --loglevel INFO >>$(VAR)/log/celery.log 2>&1 & worker=$$!; \
	$(VENV)/bin/gunicorn -c memory_project/gunicorn.conf.py memory_project.wsgi --bind $(HOST):$(PORT) --workers 2 --threads 4 \
	  --control-socket $(VAR)/run/gunicorn-$(PORT).ctl --access-logfile - & web=$$!; \
	make_pid=$$PPID; (while kill -0 $$make_pid 2>/dev/null; do sleep 1; done; kill -TERM $$web $$worker 2>/dev/null) & watcher=$$!; \
	trap 'kill -TERM $$web $$worker 2>/dev/null' INT TERM; \
	wait $$web; kill -TERM $$worker 2>/dev/null; wait $$worker; wait $$web; kill $$watcher 2>/dev/null; echo "Stopped."

# Chromium for the admin's browser tests, from Debian's packages (with a CJK
# font, so screenshots of Chinese memories show text rather than boxes).
browser-deps:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-wqy-zenhei >/dev/null) || echo "chromium could not be installed: browser tests will be skipped"; \
	  else echo "chromium not installed and not root: browser tests will be skipped"; fi; }

# The whole suite twice: on SQLite (the embedded default), then on PostgreSQL
# with a real Celery worker on Redis (production behaviour).
test: venv browser-deps lint test-sqlite test-postgres

# The quick loop while working: SQLite, no server, worker or browser tests
# (marked `slow`); `make test` is what CI runs.
test-quick: venv
	$(PY) -m pytest -n $(PYTEST_WORKERS) -p no:cacheprovider -m "not slow" $(PYTEST_ARGS)

test-sqlite: venv node-deps crewai-deps
	$(PY) -m pytest -n $(PYTEST_WORKERS) -p no:cacheprovider $(PYTEST_ARGS)

test-postgres: venv node-deps crewai-deps
	DATABASE_URL=$(PG_URL) SECRET_KEY=test-only-secret-key-not-for-production \
	CELERY_BROKER_URL=$(REDIS_URL)/$(REDIS_BROKER_DB) CACHE_URL=$(REDIS_URL)/$(REDIS_CACHE_DB) \
	$(PY) -m pytest -n $(PYTEST_WORKERS) -p no:cacheprovider $(PYTEST_ARGS)

bench: venv node-deps
	for b in bench/*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

lint: venv
	$(VENV)/bin/ruff check .

clean:
	rm -rf var/ .pytest_cache
