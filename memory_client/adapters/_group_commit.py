"""Group commit: requests asked for at the same time travel as one.

A framework that saves from several threads (or tasks) at once, as LangGraph
does with a step's writes and the checkpoint put before them, would pay a
round trip per call. Here each caller still waits until its own request is
stored (no durability is traded), but the caller whose turn it is (see
`_Lanes`) sends everything queued in one batch; callers that arrive
meanwhile queue for the next one. A batch of one is sent as its plain request.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Generic, TypeVar

Op = TypeVar("Op")


class _Pending(Generic[Op]):
    __slots__ = ("op", "done", "result", "error", "waiter")

    def __init__(self, op: Op, waiter: asyncio.Future[None] | None = None):
        self.op = op
        self.done = False
        self.result: Any = None
        self.error: BaseException | None = None
        # Async callers await this; it is set as the op is settled.
        self.waiter = waiter

    def settle(self, result: Any = None, error: BaseException | None = None) -> None:
        self.result, self.error, self.done = result, error, True
        if self.waiter is not None and not self.waiter.done():  # a cancelled caller's is done already
            self.waiter.set_result(None)

    def outcome(self) -> Any:
        if self.error is not None:
            raise self.error
        return self.result


def _settle_all(batch: Sequence[_Pending[Op]], results: Sequence[Any] | None, error: BaseException | None) -> None:
    """A result that is an exception is that op's own error (`send` may
    answer some ops and refuse others)."""
    if results is not None and len(results) != len(batch):
        results, error = None, RuntimeError(f"{len(batch)} ops sent, {len(results)} answers received")
    for index, entry in enumerate(batch):
        result = None if results is None else results[index]
        if isinstance(result, BaseException):
            entry.settle(error=result)
        else:
            entry.settle(result, error)


# How long, after an urgent batch is stored, other ops wait for the urgent op
# that usually follows at once (LangGraph's next put), to ride with it; as
# PostgreSQL's commit_delay. Only ops queued behind an urgent batch wait.
LINGER_SECONDS = 0.002


class _Lanes(Generic[Op]):
    """Who may send next. A batch holding an urgent op (one that other work
    waits on, as LangGraph's next put waits on this one) may be in flight
    beside a batch of others, so it never waits behind them; other ops wait
    until nothing is in flight, and, just after an urgent batch, a moment
    longer for the next urgent op to take them along. A batch takes
    everything queued."""

    def __init__(self, urgent: Callable[[Op], bool]):
        self.urgent = urgent
        self.urgent_in_flight = False
        self.others_in_flight = False
        self.linger_until = 0.0

    def wait_for(self, queue: Sequence[_Pending[Op]]) -> float | None:
        """0 when a batch may be sent now; else the seconds to wait before
        asking again, None for "until a batch in flight is stored"."""
        if not queue or self.urgent_in_flight:
            return None
        if any(self.urgent(e.op) for e in queue):
            return 0.0
        if self.others_in_flight:
            return None
        return max(0.0, self.linger_until - time.monotonic())

    def take(self, batch: Sequence[_Pending[Op]]) -> bool:
        urgent = any(self.urgent(e.op) for e in batch)
        if urgent:
            self.urgent_in_flight = True
        else:
            self.others_in_flight = True
        return urgent

    def release(self, urgent: bool) -> None:
        if urgent:
            self.urgent_in_flight = False
            self.linger_until = time.monotonic() + LINGER_SECONDS
        else:
            self.others_in_flight = False


def _never(op: Any) -> bool:
    return False


class GroupCommit(Generic[Op]):
    """For threads. `send(ops)` returns one result (or exception) per op, in
    order, or raises: every op of that batch then raises the same error."""

    def __init__(self, send: Callable[[list[Op]], Sequence[Any]], *, urgent: Callable[[Op], bool] = _never):
        self._send = send
        self._changed = threading.Condition()
        self._queue: list[_Pending[Op]] = []
        self._lanes = _Lanes(urgent)

    def run(self, op: Op) -> Any:
        entry = _Pending(op)
        with self._changed:
            self._queue.append(entry)
            try:
                while not entry.done:
                    wait = self._lanes.wait_for(self._queue)
                    if wait == 0.0:
                        break
                    self._changed.wait(wait)
            except BaseException:
                # Interrupted while queued: the op is not sent after its caller gave up.
                if entry in self._queue:
                    self._queue.remove(entry)
                raise
            if entry.done:
                return entry.outcome()
            # This caller sends the queue, its own op included.
            batch, self._queue = self._queue, []
            urgent = self._lanes.take(batch)
        results, error = None, None
        try:
            results = self._send([e.op for e in batch])
        except BaseException as exc:  # every caller of the batch gets it
            error = exc
        with self._changed:
            _settle_all(batch, results, error)
            self._lanes.release(urgent)
            # Wakes the batch's callers, and the queued callers: one may send next.
            self._changed.notify_all()
        return entry.outcome()


class AsyncGroupCommit(Generic[Op]):
    """For the tasks of one event loop (make one per loop). Batches are sent
    by tasks of their own, so a caller cancelled while waiting cancels only
    its wait, never a batch that carries other callers' ops."""

    def __init__(self, send: Callable[[list[Op]], Awaitable[Sequence[Any]]], *, urgent: Callable[[Op], bool] = _never):
        self._send = send
        self._queue: list[_Pending[Op]] = []
        self._lanes = _Lanes(urgent)
        self._senders: set[asyncio.Task[None]] = set()
        self._lingering: asyncio.TimerHandle | None = None

    def _linger_over(self) -> None:
        self._lingering = None
        self._start_sending()

    async def run(self, op: Op) -> Any:
        entry = _Pending(op, asyncio.get_running_loop().create_future())
        self._queue.append(entry)
        self._start_sending()
        try:
            await entry.waiter
        except asyncio.CancelledError:
            # Cancelled while queued: the op is not sent after its caller gave up.
            if entry in self._queue:
                self._queue.remove(entry)
            raise
        return entry.outcome()

    def _start_sending(self) -> None:
        wait = self._lanes.wait_for(self._queue)
        if wait is None:
            return  # a batch in flight starts the next one when stored
        if wait > 0.0:
            if self._lingering is None:
                self._lingering = asyncio.get_running_loop().call_later(wait, self._linger_over)
            return
        if self._lingering is not None:
            # The batch takes the lingering ops now: the timer would only keep the loop alive.
            self._lingering.cancel()
            self._lingering = None
        batch, self._queue = self._queue, []
        urgent = self._lanes.take(batch)
        sender = asyncio.get_running_loop().create_task(self._send_batch(batch, urgent))
        self._senders.add(sender)  # the loop holds tasks weakly
        sender.add_done_callback(self._senders.discard)

    async def _send_batch(self, batch: list[_Pending[Op]], urgent: bool) -> None:
        results, error = None, None
        try:
            results = await self._send([e.op for e in batch])
        except BaseException as exc:  # every caller of the batch gets it
            error = exc
        _settle_all(batch, results, error)
        self._lanes.release(urgent)
        if isinstance(error, asyncio.CancelledError):
            raise error  # the loop is stopping
        self._start_sending()
