"""The web server's worker class (`worker_class` in `gunicorn.conf.py`).

Agents call the service in chains: a LangGraph run's checkpoint puts, each
sent when the one before is answered; an OpenAI session's add, then its
get; a turn's append, then its context. gunicorn's threaded worker
(`gthread`) hands every answered keep-alive connection back to its poller
thread, which wakes when the next request arrives and passes it on to a pool
thread: two thread wake-ups per request besides the database's, each up to
a millisecond on a busy machine. Here, a pool thread that has answered a
request watches that connection for LINGER_SECONDS and serves the next
request itself when it comes in time (a 10-step LangGraph run: 19.4 -> 23.0
runs/s, median of 8 alternating rounds, `bench/floor.py`'s measurement).

It lingers only while another pool thread is idle and no connection waits
for one, so a new client is never queued behind a lingering thread and a
loaded server works exactly as `gthread` does. Everything else (keep-alive
limits, slow-client deferral, graceful stop, max_requests) is gthread's.
"""

from __future__ import annotations

import select
import threading

from gunicorn.workers.gthread import ThreadWorker

# Long enough for a client that sends its next call as soon as the answer
# arrives (a framework's bookkeeping between two calls takes 0.1-2 ms here),
# short enough that a connection that went quiet returns to the poller at
# once in human terms.
LINGER_SECONDS = 0.005


class LingeringThreadWorker(ThreadWorker):
    def init_process(self) -> None:
        self._load_lock = threading.Lock()
        self._queued = 0  # connections handed to the pool, not yet picked up
        self._handling = 0  # pool threads serving (or lingering on) a connection
        super().init_process()

    def enqueue_req(self, conn) -> None:
        with self._load_lock:
            self._queued += 1
        try:
            super().enqueue_req(conn)
        except BaseException:
            with self._load_lock:
                self._queued -= 1
            raise

    def handle(self, conn):
        with self._load_lock:
            self._queued -= 1
            self._handling += 1
        try:
            result = super().handle(conn)
            # True: the answer kept the connection open (gthread's "keep alive").
            while result is True and self.next_request_in_time(conn):
                result = super().handle(conn)
            return result
        finally:
            with self._load_lock:
                self._handling -= 1

    def next_request_in_time(self, conn) -> bool:
        """Whether to serve the connection's next request on this thread: it
        is already buffered, or arrives within LINGER_SECONDS while the pool
        has a thread to spare. False hands the connection back to gthread's
        poller, as after any request."""
        if not self.alive:
            return False
        # Bytes read past the last request (a client that pipelines): the next one is here.
        if conn.parser.unreader.buf.getvalue():
            return True
        with self._load_lock:
            if self._queued or self._handling >= self.cfg.threads:
                return False
        watch = select.poll()  # not select.select: a descriptor may exceed FD_SETSIZE
        watch.register(conn.sock, select.POLLIN)
        # Readable is also what a closed connection is: the next read finds
        # no request and gthread closes it, as it would from the poller.
        return bool(watch.poll(LINGER_SECONDS * 1000))
