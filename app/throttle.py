"""Sign-in attempts per client, in this process: what one browser (or one script) can cost the server.

The database throttles each address (labeler_storage.accounts); this throttles each client, so one client
spraying sign-ins at many addresses checks few passwords (argon2 costs 64 MiB and ~0.1 s of a core
each) and cannot slow everyone else's sign-in. A client's first FREE_FAILURES failures cost
nothing; after them it waits 1 s, then 2, 4, ... up to MAX_WAIT (a minute) before its next attempt,
and its attempts are refused before any password is checked. Its count is forgotten after WINDOW
without a failure. Each replica counts its own clients
(a client is pinned to one by the proxy's `ip_hash`); a restart forgets them.

Twenty clients of one botnet still get ten free failures each, and a made-up address costs a check
as dear as a real one (no timing oracle). So every password check also passes one `HashGate` per
process: at most SLOTS checks at once (argon2's memory and cores bounded whatever the number of
visitors), at most SUSPECT_SLOTS of them for clients that have failed recently, run on a thread of
the lowest CPU priority; among those who wait, the fewest recent failures first. A real user's first
try thus waits for no sprayer's queue and shares the cores with no sprayer's check. The wait is on a
condition in the session's own script thread (no sleep, no CPU, no other session held up), and ends
in a "busy" refusal, counted as no failure, after MAX_QUEUE_WAIT or when MAX_WAITING already wait.
"""
from __future__ import annotations

import itertools
import os
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TypeVar

from labeler.errors import SignInError

FREE_FAILURES = 10
WINDOW = 15 * 60.0  # seconds without a failure after which a client's count is forgotten
MAX_WAIT = 60.0  # short: people behind one NAT (or a proxy that sends no X-Forwarded-For) share a client
MAX_CLIENTS = 10_000  # the oldest are forgotten first: a flood of addresses cannot grow memory
SLOTS = 2  # password checks at once: argon2id takes 64 MiB and ~0.2 s of a core each
SUSPECT_SLOTS = 1  # of which clients with recent failures may hold this many
MAX_QUEUE_WAIT = 20.0  # seconds an attempt may wait for a slot before it is refused as "busy"
MAX_WAITING = 200  # attempts waiting at once; beyond, the worst-placed are refused as "busy" at once
T = TypeVar("T")


@dataclass
class _Count:
    failures: int
    last_at: float
    until: float = 0.0


class ClientThrottle:
    """Failed sign-ins per client key (see `client_key`); safe to share between sessions' threads."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._counts: OrderedDict[str, _Count] = OrderedDict()
        self._lock = threading.Lock()

    def wait(self, client: str) -> float:
        """Seconds `client` must still wait before its next sign-in attempt (0: it may try now)."""
        with self._lock:
            count = self._counts.get(client)
            return max(0.0, count.until - self.clock()) if count is not None else 0.0

    def failures(self, client: str) -> int:
        """Failed sign-ins of `client` in its current window (0: none, or forgotten)."""
        with self._lock:
            count = self._counts.get(client)
            return count.failures if count is not None and self.clock() - count.last_at <= WINDOW else 0

    def failed(self, client: str) -> None:
        """Count a failed (or refused) sign-in of `client`."""
        now = self.clock()
        with self._lock:
            count = self._counts.pop(client, None)
            if count is None or now - count.last_at > WINDOW:
                count = _Count(0, now)
            count.failures, count.last_at = count.failures + 1, now
            if count.failures >= FREE_FAILURES:
                count.until = now + min(2.0 ** min(count.failures - FREE_FAILURES, 20), MAX_WAIT)
            self._counts[client] = count  # the most recent last
            while len(self._counts) > MAX_CLIENTS:
                self._counts.popitem(last=False)


class HashGate:
    """Admission to a password check: at most `slots` at once, `suspect_slots` of them for attempts
    whose client has failed before; waiters served fewest failures first, then first come."""

    def __init__(self, slots: int = SLOTS, suspect_slots: int = SUSPECT_SLOTS, *, max_wait: float = MAX_QUEUE_WAIT,
                 max_waiting: int = MAX_WAITING) -> None:
        self.slots, self.suspect_slots, self.max_wait, self.max_waiting = slots, suspect_slots, max_wait, max_waiting
        self._cond = threading.Condition()
        self._busy = self._suspects_busy = 0
        self._waiting: set[tuple[int, int]] = set()  # (failures, arrival)
        self._arrivals = itertools.count()
        self._suspects = ThreadPoolExecutor(suspect_slots, "labeler-suspect-check", initializer=_lowest_priority)

    def check(self, failures: int, check: Callable[[], T]) -> T:
        """`check()` (one password check) once a slot is free for a client with `failures` recent failures;
        a suspect's check runs on a thread of the lowest CPU priority, so it takes a core only when nothing
        else wants it. A CheckBusy when no slot came within max_wait, or when too many wait and this one
        is placed last."""
        with self._slot(failures):
            if failures > 0:
                return self._suspects.submit(check).result()
            return check()

    @contextmanager
    def _slot(self, failures: int) -> Iterator[None]:
        ticket = (failures, next(self._arrivals))
        suspect = failures > 0
        with self._cond:
            self._waiting.add(ticket)
            try:
                if len(self._waiting) > self.max_waiting and ticket == max(self._waiting):
                    raise _busy()
                if not self._cond.wait_for(lambda: self._turn(ticket), timeout=self.max_wait):
                    raise _busy()
            finally:
                self._waiting.discard(ticket)
            self._busy += 1
            self._suspects_busy += suspect
        try:
            yield
        finally:
            with self._cond:
                self._busy -= 1
                self._suspects_busy -= suspect
                self._cond.notify_all()

    def _turn(self, ticket: tuple[int, int]) -> bool:
        """True when `ticket` may start: a slot it may use is free and no better-placed waiter may use it."""
        def may_start(t: tuple[int, int]) -> bool:
            return self._busy < self.slots and (t[0] == 0 or self._suspects_busy < self.suspect_slots)

        return may_start(ticket) and ticket == min(t for t in self._waiting if may_start(t))


def _lowest_priority() -> None:
    """Nice 19 for the calling thread alone (on Linux a thread id is a process id to setpriority; elsewhere
    it would be the whole process, so nothing is done)."""
    if sys.platform.startswith("linux"):
        try:
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
        except OSError:  # not allowed here: the slot bound still holds
            pass


class CheckBusy(SignInError):
    """No slot came to check the password in time: the attempt was not checked (and is no client failure)."""


def _busy() -> CheckBusy:
    return CheckBusy("the server is busy checking other sign-ins", hint="try again in a few seconds.")


def client_key(peer: str | None, headers: dict[str, str]) -> str:
    """Who a sign-in comes from: the connection's address; from a loopback peer (a reverse proxy on
    this machine, or a local browser), the address the proxy appended to X-Forwarded-For (the last
    one: the earlier ones are the client's own say), else "loopback"."""
    if peer and peer not in ("127.0.0.1", "::1"):
        return peer
    forwarded = {k.lower(): v for k, v in headers.items()}.get("x-forwarded-for", "")
    return forwarded.rsplit(",", 1)[-1].strip() or "loopback"


RUNS_PER_SECOND = 1.0  # script runs a signed-out client may ask for, sustained (a sign-in needs two or three)
RUN_BURST = 5.0


class RunBudget:
    """Script runs per client for sessions not signed in (a token bucket per client key): what a visitor
    on the sign-in screen may make the server do, however fast it sends. Safe to share between threads."""

    def __init__(self, rate: float = RUNS_PER_SECOND, burst: float = RUN_BURST,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.rate, self.burst, self.clock = rate, burst, clock
        self._tokens: OrderedDict[str, tuple[float, float]] = OrderedDict()  # client -> (tokens, at)
        self._lock = threading.Lock()

    def take(self, client: str) -> float:
        """Take one run for `client`; the seconds it must wait before that run (0: at once)."""
        now = self.clock()
        with self._lock:
            tokens, at = self._tokens.pop(client, (self.burst, now))
            tokens = min(self.burst, tokens + (now - at) * self.rate) - 1
            self._tokens[client] = (tokens, now)  # the most recent last; below zero: runs owed
            while len(self._tokens) > MAX_CLIENTS:
                self._tokens.popitem(last=False)
        return max(0.0, -tokens / self.rate)
