"""gunicorn settings for `make run` and production (`gunicorn -c memory_project/gunicorn.conf.py`).

Only what differs from gunicorn's defaults; the bind address and worker
counts come from the command line or `GUNICORN_CMD_ARGS`.
"""

# gunicorn answers a request line over its limit (4094 bytes by default) with
# an HTML 414 page before the application sees it. Lifted here (0: up to its
# 1 MB read buffer) so that the service's own middleware enforces the limit
# (memory_project.middleware.MAX_REQUEST_LINE_BYTES) and answers in the API's
# JSON error shape.
limit_request_line = 0

# Header lines may carry long Idempotency-Keys and cursors; keep gunicorn's
# ceiling for them explicit.
limit_request_field_size = 8190

# gunicorn's threaded worker: agents keep connections alive between calls,
# and a thread pool serves them without a process per connection.
worker_class = "gthread"

# Import the application once in the master and fork the workers from it:
# the web server answers a second or so sooner, and the workers share pages.
preload_app = True


def pre_fork(server, worker):
    """Move everything the master has loaded (the whole application) out of
    the garbage collector's sight before a worker is forked from it, as
    `gc.freeze` is meant for: a worker's collections then skip those objects
    and, no longer writing their headers, leave the pages it shares with the
    master shared."""
    import gc

    gc.freeze()


def post_worker_init(worker):
    """Open the worker's connection to the Celery broker as it starts (not
    before the fork: a connection must not be shared), so the request that
    first queues a memory job does not pay for it. A broker
    that is down fails nothing now: the first job's request retries as it
    always would."""
    # Imported in the worker, after the fork: gunicorn reads this file in the
    # master, which loads no Django settings and opens no broker connection.
    from memory_project.celery import app

    try:
        with app.producer_or_acquire() as producer:
            producer.connection.ensure_connection(max_retries=0)
    except Exception as exc:  # noqa: BLE001 - a warm-up; the service runs without it
        worker.log.warning("Celery broker not reachable at worker start: %s", exc)

    # The query model, loaded beside the first requests rather than inside
    # one: a worker's first context call waited for it (3.9 s at a load of
    # 17 on 2 cores, bench/README.md). Not before the fork: the engine's
    # OpenMP threads do not survive one.
    import threading

    from memories.recall.embeddings import warm_up

    threading.Thread(target=warm_up, name="embedding-warm-up", daemon=True).start()
