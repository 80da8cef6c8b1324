"""Sign-in throttling per client (labeler_app.throttle) and how the app's sign-in uses it on top of the
address's own (labeler_storage.accounts): a client that failed too often is refused before any password is
checked, while another client, and the address itself from elsewhere, still get in; the gate every
password check passes (bounded, fewest failures first); the run budget of a signed-out client."""
from __future__ import annotations

import threading
import time

import pytest

from labeler.errors import SignInError
import labeler_app.accounts as acc
from labeler_app.throttle import (FREE_FAILURES, MAX_CLIENTS, MAX_WAIT, WINDOW, CheckBusy, ClientThrottle, HashGate, RunBudget,
                          client_key)
from labeler_storage import open_store

PASSWORD = "correct horse battery"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_client_throttle_waits_after_the_free_failures_doubling_up_to_max_wait():
    clock = Clock()
    throttle = ClientThrottle(clock)
    for _ in range(FREE_FAILURES - 1):
        throttle.failed("203.0.113.7")
    assert throttle.wait("203.0.113.7") == 0
    waits = []
    for _ in range(10):  # failures 10..19, each as soon as the last wait ended
        throttle.failed("203.0.113.7")
        waits.append(throttle.wait("203.0.113.7"))
        clock.now += waits[-1]
    assert waits == [1, 2, 4, 8, 16, 32, 60, 60, 60, 60] and MAX_WAIT == 60  # 2 ** (n - 10) s, at most a minute
    assert throttle.wait("198.51.100.1") == 0  # another client


def test_client_throttle_forgets_after_the_window_and_bounds_its_memory():
    clock = Clock()
    throttle = ClientThrottle(clock)
    for _ in range(FREE_FAILURES):
        throttle.failed("a")
    clock.now += WINDOW + 1
    throttle.failed("a")  # the first of a new window
    assert throttle.wait("a") == 0
    for i in range(MAX_CLIENTS + 5):
        throttle.failed(f"c{i}")
    assert len(throttle._counts) == MAX_CLIENTS and "a" not in throttle._counts  # the oldest went first


@pytest.mark.parametrize("peer, headers, key", [
    ("203.0.113.7", {"X-Forwarded-For": "10.0.0.1"}, "203.0.113.7"),  # a remote peer's own say is ignored
    (None, {"X-Forwarded-For": "10.9.9.9, 203.0.113.7"}, "203.0.113.7"),  # what the local proxy appended
    (None, {"x-forwarded-for": "198.51.100.2"}, "198.51.100.2"),
    (None, {}, "loopback"), ("::1", {}, "loopback")])
def test_client_key_trusts_forwarded_for_only_from_a_loopback_proxy(peer, headers, key):
    assert client_key(peer, headers) == key


def test_sign_in_refuses_a_throttled_client_before_checking_any_password(tmp_path, monkeypatch):
    store = open_store(f"sqlite:///{tmp_path / 'l.db'}")
    store.accounts.add_user("ann@example.org", "annotator", password=PASSWORD)
    for i in range(FREE_FAILURES):  # a spray: one failure at each of ten addresses, none waits itself
        with pytest.raises(SignInError, match="wrong e-mail address or password"):
            acc.sign_in(store, f"someone{i}@example.org", PASSWORD, client="203.0.113.7")
    checked = []
    monkeypatch.setattr("labeler_storage.accounts.verify_password", lambda *a: checked.append(a) or True)
    with pytest.raises(SignInError, match="too many failed sign-ins from your network address") as info:
        acc.sign_in(store, "ann@example.org", PASSWORD, client="203.0.113.7")
    assert checked == [] and "Hint: wait 1 s" in str(info.value)
    monkeypatch.undo()
    # Ann, from her own client, is not slowed by the sprayer.
    assert acc.sign_in(store, "ann@example.org", PASSWORD, client="198.51.100.1").actor.name == "ann@example.org"
    store.close()


# --------------------------------------------------------------------------- the password-check gate


def _hold(gate: HashGate, failures: int, order: list, release: threading.Event, started: threading.Event | None = None):
    """A thread whose check, once admitted, records `failures` in `order` and holds its slot until `release`."""
    def check():
        order.append(failures)
        if started is not None:
            started.set()
        release.wait(10)
        return True

    thread = threading.Thread(target=gate.check, args=(failures, check))
    thread.start()
    return thread


def _wait_for(condition, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_hash_gate_serves_fewest_failures_first_and_keeps_a_slot_from_suspects():
    gate = HashGate(slots=2, suspect_slots=1)
    order, release = [], threading.Event()
    first = _hold(gate, 7, order, release)  # a sprayer holds the one suspect slot
    _wait_for(lambda: order == [7])
    queued = _hold(gate, 3, order, release)  # another sprayer waits for it...
    time.sleep(0.1)
    assert order == [7]
    # ...while a client with no failure gets the other slot at once (and on the caller's thread).
    assert gate.check(0, lambda: threading.current_thread() is threading.main_thread()) is True
    assert order == [7]
    release.set()  # the suspect slot frees: the waiting sprayer goes next
    first.join(5)
    _wait_for(lambda: order == [7, 3])
    queued.join(15)


def test_hash_gate_admits_the_fewest_failures_first_when_a_slot_frees():
    gate = HashGate(slots=1, suspect_slots=1)
    order, release, held = [], threading.Event(), threading.Event()
    threads = [_hold(gate, 9, order, release, held)]
    held.wait(5)
    for failures in (5, 2, 0, 4):  # arrive in this order while the one slot is held
        threads.append(_hold(gate, failures, order, release))
        _wait_for(lambda n=len(threads) - 1: len(gate._waiting) == n)
    release.set()
    for thread in threads:
        thread.join(5)
    assert order == [9, 0, 2, 4, 5]


def test_hash_gate_never_runs_more_checks_at_once_than_its_slots():
    gate = HashGate(slots=2, suspect_slots=1)
    lock, running, peaks = threading.Lock(), {"all": 0, "suspect": 0}, {"all": 0, "suspect": 0}

    def check(suspect: bool):
        with lock:
            running["all"] += 1
            running["suspect"] += suspect
            peaks.update({k: max(peaks[k], running[k]) for k in running})
        time.sleep(0.02)
        with lock:
            running["all"] -= 1
            running["suspect"] -= suspect
        return True

    threads = [threading.Thread(target=gate.check, args=(i % 3, lambda s=i % 3 > 0: check(s))) for i in range(24)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert peaks == {"all": 2, "suspect": 1}


def test_sign_in_refused_as_busy_checks_nothing_and_counts_no_failure(tmp_path, monkeypatch):
    store = open_store(f"sqlite:///{tmp_path / 'l.db'}")
    store.accounts.add_user("ann@example.org", "annotator", password=PASSWORD)
    gate = HashGate(slots=1, suspect_slots=1, max_wait=0.2)
    monkeypatch.setattr(acc, "CHECKS", gate)
    release = threading.Event()
    holder = _hold(gate, 0, [], release)
    _wait_for(lambda: gate._busy == 1)
    with pytest.raises(CheckBusy, match="busy"):
        acc.sign_in(store, "ann@example.org", PASSWORD, client="192.0.2.44")
    assert acc.CLIENTS.failures("192.0.2.44") == 0
    release.set()
    holder.join(5)
    assert acc.sign_in(store, "ann@example.org", PASSWORD, client="192.0.2.44").actor.name == "ann@example.org"
    store.close()


def test_run_budget_allows_a_burst_then_one_run_a_second_per_client():
    clock = Clock()
    budget = RunBudget(rate=1.0, burst=5.0, clock=clock)
    assert [budget.take("203.0.113.7") for _ in range(5)] == [0] * 5  # a page load and a few tries: at once
    assert [budget.take("203.0.113.7") for _ in range(3)] == [1, 2, 3]  # then a second each, queued
    assert budget.take("198.51.100.1") == 0  # another client has its own budget
    clock.now += 10  # idle: the owed runs are paid, and the budget refills up to the burst, no further
    assert [budget.take("203.0.113.7") for _ in range(6)] == [0, 0, 0, 0, 0, 1]
