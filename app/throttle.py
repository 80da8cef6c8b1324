"""Sign-in attempts per client, in this process: what one browser (or one script) can cost the server.

The database throttles each address (storage.accounts); this throttles each client, so one client
spraying sign-ins at many addresses checks few passwords (argon2 costs 64 MiB and ~0.1 s of a core
each) and cannot slow everyone else's sign-in. A client's first FREE_FAILURES failures cost
nothing; after them it waits 1 s, then 2, 4, ... up to MAX_WAIT (a minute) before its next attempt,
and its attempts are refused before any password is checked. Its count is forgotten after WINDOW
without a failure. Each replica counts its own clients
(a client is pinned to one by the proxy's `ip_hash`); a restart forgets them.
"""
from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

FREE_FAILURES = 10
WINDOW = 15 * 60.0  # seconds without a failure after which a client's count is forgotten
MAX_WAIT = 60.0  # short: people behind one NAT (or a proxy that sends no X-Forwarded-For) share a client
MAX_CLIENTS = 10_000  # the oldest are forgotten first: a flood of addresses cannot grow memory


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


def client_key(peer: str | None, headers: dict[str, str]) -> str:
    """Who a sign-in comes from: the connection's address; from a loopback peer (a reverse proxy on
    this machine, or a local browser), the address the proxy appended to X-Forwarded-For (the last
    one: the earlier ones are the client's own say), else "loopback"."""
    if peer and peer not in ("127.0.0.1", "::1"):
        return peer
    forwarded = {k.lower(): v for k, v in headers.items()}.get("x-forwarded-for", "")
    return forwarded.rsplit(",", 1)[-1].strip() or "loopback"
