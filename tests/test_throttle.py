"""Sign-in throttling per client (app.throttle) and how the app's sign-in uses it on top of the
address's own (storage.accounts): a client that failed too often is refused before any password is
checked, while another client, and the address itself from elsewhere, still get in."""
from __future__ import annotations

import pytest

import app.accounts as acc
from app.throttle import FREE_FAILURES, MAX_CLIENTS, MAX_WAIT, WINDOW, ClientThrottle, client_key
from labeler.errors import SignInError
from storage import open_store

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
    monkeypatch.setattr("storage.accounts.verify_password", lambda *a: checked.append(a) or True)
    with pytest.raises(SignInError, match="too many failed sign-ins from your network address") as info:
        acc.sign_in(store, "ann@example.org", PASSWORD, client="203.0.113.7")
    assert checked == [] and "Hint: wait 1 s" in str(info.value)
    monkeypatch.undo()
    # Ann, from her own client, is not slowed by the sprayer.
    assert acc.sign_in(store, "ann@example.org", PASSWORD, client="198.51.100.1").actor.name == "ann@example.org"
    store.close()
