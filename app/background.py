"""Builds that run in a background thread, once per process per key, with progress anyone can read.

The Label page uses this so a big corpus can be labelled with BM25 candidates while its dense
index is still being embedded: the page reads the build's progress on each rerun and adds dense
candidates when the build is done. A build that failed keeps its error, raised to whoever asks
for the result, and is started again by the next `start` (a fixed corpus or config may succeed).

`BackgroundCalls` is the same idea for many short calls, on a bounded thread pool: the Label page
pools candidates from a saved system per question, and a call to it may take up to its deadline.
`get` starts the call, waits at most `wait` seconds, else returns a `Pending` at once: the page
judges what it has and asks again on its next rerun. Results are kept `ttl` seconds (`max_entries`
at most); a failure for `failed_ttl` seconds, so a page that reruns on every click does not ask a
failing system again each time.
"""
from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as wait_futures
from dataclasses import dataclass
from typing import Any

from labeler.progress import Progress


@dataclass(frozen=True)
class BuildStatus:
    """Where a background build stands."""

    done: int
    total: int
    stage: str
    elapsed: float  # seconds in the current stage
    ready: bool
    failed: bool

    @property
    def text(self) -> str:
        """`embed: 1,200 / 5,183 · about 3 min left`."""
        if not self.total:
            return self.stage or "starting"
        return f"{self.stage}: {self.done:,} / {self.total:,}{time_left(self.done, self.total, self.elapsed)}"


def time_left(done: int, total: int, elapsed: float) -> str:
    """" · about 2 min left", from the pace so far (nothing until there is a pace to go by)."""
    if done <= 0 or done >= total or elapsed < 1:
        return ""
    left = elapsed / done * (total - done)
    return f" · about {left:.0f} s left" if left < 90 else f" · about {left / 60:.0f} min left"


class Build:
    """One background build: `fn(progress)` runs in a daemon thread."""

    def __init__(self, fn: Callable[[Progress], Any]) -> None:
        self._lock = threading.Lock()
        self._progress = (0, 0, "starting", time.monotonic())
        self._done = threading.Event()
        self._result: Any = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(fn,), daemon=True, name="labeler-build")
        self._thread.start()

    def _report(self, done: int, total: int, stage: str) -> None:
        with self._lock:
            started = self._progress[3] if self._progress[2] == stage else time.monotonic()
            self._progress = (done, total, stage, started)

    def _run(self, fn: Callable[[Progress], Any]) -> None:
        try:
            self._result = fn(self._report)
        except BaseException as exc:  # noqa: BLE001 - kept and raised to whoever asks for the result
            self._error = exc
        finally:
            self._done.set()

    def status(self) -> BuildStatus:
        """Progress so far (never blocks)."""
        with self._lock:
            done, total, stage, started = self._progress
        return BuildStatus(done, total, stage, time.monotonic() - started, self._done.is_set() and self._error is None,
                           self._done.is_set() and self._error is not None)

    def wait(self, timeout: float | None = None) -> bool:
        """True once the build has finished (or failed), waiting up to `timeout` seconds."""
        return self._done.wait(timeout)

    def result(self) -> Any:
        """The built object (blocks until done); the build's own error if it failed."""
        self._done.wait()
        if self._error is not None:
            raise self._error
        return self._result


_builds: dict[Any, Build] = {}
_registry_lock = threading.Lock()


def start(key: Any, fn: Callable[[Progress], Any]) -> Build:
    """The build for `key`, started now if there is none yet (or the last one failed)."""
    with _registry_lock:
        build = _builds.get(key)
        if build is None or build.status().failed:
            build = _builds[key] = Build(fn)
        return build


def wait_all() -> None:
    """Wait for every build started so far (a test, or a shutdown that lets them finish)."""
    with _registry_lock:
        builds = list(_builds.values())
    for build in builds:
        build.result()


def forget(key: Any) -> None:
    """Drop a finished build (its result is cached elsewhere)."""
    with _registry_lock:
        _builds.pop(key, None)


@dataclass(frozen=True)
class Pending:
    """A call still running: its result joins when ready (`seconds`: how long it has run)."""

    seconds: float


class BackgroundCalls:
    """Results of keyed calls, each run once on a thread pool and kept for `ttl` seconds."""

    def __init__(self, *, workers: int = 4, ttl: float = 600.0, failed_ttl: float = 60.0, max_entries: int = 512,
                 name: str = "background") -> None:
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix=name)
        self._calls: OrderedDict[Hashable, tuple[float, Future]] = OrderedDict()
        self._lock = threading.Lock()
        self.ttl, self.failed_ttl, self.max_entries = ttl, failed_ttl, max_entries

    def get(self, key: Hashable, call: Callable[[], Any], *, wait: float = 0.0) -> Any:
        """The result of `call()` for `key` (its exception re-raised), or `Pending` when it has not
        finished within `wait` seconds."""
        now = time.monotonic()
        with self._lock:
            started, future = self._calls.get(key, (None, None))
            if future is None or (future.done() and now - started > (
                    self.failed_ttl if future.exception() is not None else self.ttl)):
                started, future = now, self._pool.submit(call)
                self._calls[key] = (started, future)
                while len(self._calls) > self.max_entries:
                    self._calls.popitem(last=False)
            self._calls.move_to_end(key)
        if not wait_futures([future], timeout=wait).done:
            return Pending(time.monotonic() - started)
        return future.result()  # a TimeoutError the call raised is its own, not "still running"

    def done(self, key: Hashable) -> bool:
        """Whether the call for `key` has finished (False when there is none)."""
        with self._lock:
            entry = self._calls.get(key)
        return entry is not None and entry[1].done()
