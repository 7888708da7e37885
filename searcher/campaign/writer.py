"""A campaign's writes to its store, done in order on a thread of their own while the next batch is evaluated.

Against a target that answers in a millisecond an image, encoding a batch's rows and images and
committing them took as long as a sixth of the campaign (`benchmarks/scale.py`). The loop hands
each write (a batch's trials, then its row with the strategy's state) to a `Writer`, which runs
them one after another, each in its own transaction, as they were handed over, while the loop
proposes and evaluates the next batch (rendering, a model, an HTTP request or a Ray actor let the
thread run). Order keeps a resume exact: a batch's row is written only after its trials, so a
campaign killed at any moment holds whole batches and the trials of the one after, as before, and
loses at most the trials still waiting to be written, which a resume evaluates again (proposals
depend only on seed, step and history). At most `depth` writes wait, so what is held is bounded. A
write that fails (a full disk) stops the writes after it, and its error is raised in the loop by
the next `submit` or `drain`.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable

__all__ = ["Writer"]


class Writer:
    """Runs writes handed to `submit`, in order, on one thread; `drain` waits until all are done.

    Args:
        depth: writes that may wait before `submit` blocks (the loop's memory bound: a batch's
            trials and its row each count one).
    """

    def __init__(self, depth: int = 2) -> None:
        self._queue: queue.Queue[Callable[[], None] | None] = queue.Queue(maxsize=depth)
        self._error: BaseException | None = None  # raised once, in the loop's thread
        self._failed = False  # a write failed: none after it runs (the order would break)
        self._thread = threading.Thread(target=self._run, name="searcher-store-writer", daemon=True)
        self._thread.start()

    def submit(self, write: Callable[[], None]) -> None:
        """Queues `write`, after raising the error of a write that failed (nothing after it ran)."""
        self._raise()
        self._queue.put(write)

    def drain(self) -> None:
        """Waits for every write queued, then raises the error of one that failed."""
        self._queue.join()
        self._raise()

    def close(self) -> None:
        """Waits for every write queued and stops the thread; raises the error of one that failed."""
        self._queue.join()
        self._queue.put(None)
        self._thread.join()
        self._raise()

    def _raise(self) -> None:
        error, self._error = self._error, None
        if error is not None:
            raise error

    def _run(self) -> None:
        while True:
            write = self._queue.get()
            try:
                if write is None:
                    return
                if not self._failed:
                    write()
            except BaseException as exc:  # noqa: BLE001 - handed to the loop's thread, which raises it
                self._error, self._failed = exc, True
            finally:
                self._queue.task_done()
