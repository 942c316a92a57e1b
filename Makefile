# Two commands do all set-up on a fresh machine: `make run` and `make test`.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
HOST ?= 127.0.0.1
PORT ?= 8000
PG_URL ?= postgres://postgres@127.0.0.1:5432/memory_service
REDIS_URL ?= redis://127.0.0.1:6379
PYTEST_WORKERS ?= 2

.PHONY: run test test-sqlite test-postgres venv migrate browser-deps bench lint clean

$(STAMP): requirements.txt requirements-dev.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements-dev.txt
	touch $(STAMP)

venv: $(STAMP)

migrate: venv
	$(PY) manage.py migrate --noinput

# The embedded service: SQLite and a file-system Celery broker under var/, a real
# worker with beat beside the web server. Ctrl-C stops all of it.
run: migrate
	@mkdir -p var/log
	@$(PY) manage.py bootstrap_demo --base-url http://$(HOST):$(PORT) --output var/demo-credentials.txt
	@echo "Starting the Celery worker + beat (log: var/log/celery.log) and the web server on http://$(HOST):$(PORT)"
	@trap 'kill 0' EXIT INT TERM; \
	$(VENV)/bin/celery -A memory_project worker -B --concurrency 1 --loglevel INFO >var/log/celery.log 2>&1 & \
	$(VENV)/bin/gunicorn memory_project.wsgi --bind $(HOST):$(PORT) --workers 2 --threads 4 --access-logfile - ; \
	wait

# Chromium for the admin's browser tests, from Debian's packages (with a CJK
# font, so screenshots of Chinese memories show text rather than boxes).
browser-deps:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-wqy-zenhei >/dev/null) || echo "chromium could not be installed: browser tests will be skipped"; \
	  else echo "chromium not installed and not root: browser tests will be skipped"; fi; }

# The whole suite twice: on SQLite (the embedded default), then on PostgreSQL
# with a real Celery worker on Redis (production behaviour).
test: venv browser-deps lint test-sqlite test-postgres

test-sqlite: venv
	$(PY) -m pytest -n $(PYTEST_WORKERS) -p no:cacheprovider $(PYTEST_ARGS)

test-postgres: venv
	DATABASE_URL=$(PG_URL) SECRET_KEY=test-only-secret-key-not-for-production \
	CELERY_BROKER_URL=$(REDIS_URL)/15 CACHE_URL=$(REDIS_URL)/0 \
	$(PY) -m pytest -n $(PYTEST_WORKERS) -p no:cacheprovider $(PYTEST_ARGS)

bench: venv
	for b in bench/*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

lint: venv
	$(VENV)/bin/ruff check .

clean:
	rm -rf var/ .pytest_cache
