"""Builds that run in a background thread, once per process per key, with progress anyone can read.

The Label page uses this so a big corpus can be labelled with BM25 candidates while its dense
index is still being embedded: the page reads the build's progress on each rerun and adds dense
candidates when the build is done. A build that failed keeps its error, raised to whoever asks
for the result, and is started again by the next `start` (a fixed corpus or config may succeed).
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Progress = Callable[[int, int, str], None]


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


def forget(key: Any) -> None:
    """Drop a finished build (its result is cached elsewhere)."""
    with _registry_lock:
        _builds.pop(key, None)
