"""A password sign-in kept in a cookie, on real databases (SQLite and PostgreSQL): the one-time code a
page mints and the team server's route trades for the session (once, within a minute, from the client
that signed in only), the cookie's token read back for that client only, and the two routes' answers
(Set-Cookie flags, requests from another site refused, nothing of the code in the log). Users are hashed
once per module (accounts_support); time moves with `store.accounts.clock`."""
from __future__ import annotations

import logging
import threading
from datetime import timedelta

import pytest
from accounts_support import PASSWORD, clock, dump, rows, store, template  # noqa: F401 - fixtures
from starlette.applications import Starlette
from starlette.testclient import TestClient

import labeler.passwords as passwords
from labeler_app import accounts as acc
from labeler_pages._session_cookie import COOKIE, SESSION_ROUTE, SIGN_OUT_ROUTE, routes
from labeler_storage.accounts import CODE_LIFETIME

HERE = "203.0.113.7 Mozilla/5.0 (X11; Linux x86_64) Chrome/156"  # the client that signed in
ELSEWHERE = "198.51.100.9 Mozilla/5.0 (X11; Linux x86_64) Chrome/156"  # the same browser, another address


def _signed_in(store, client: str = HERE):
    return store.accounts.sign_in("ann@example.org", PASSWORD, client=client)


# --------------------------------------------------------------------------- codes


def test_a_code_is_traded_once_for_a_second_token_of_the_session(store):
    signed = _signed_in(store)
    code = store.accounts.new_code(signed.token)
    assert code and code not in dump(store)  # only its digest is stored
    [(code_hash, expires)] = rows(store, "SELECT code_hash, code_expires_at FROM sessions")
    assert code_hash == passwords.token_digest(code) and expires == "2026-12-01T09:01:00Z"  # a minute from 09:00

    traded = store.accounts.exchange_code(code, HERE)
    assert traded.user.email == "ann@example.org" and traded.expires_at == signed.expires_at
    assert traded.token != signed.token and traded.token not in dump(store)
    assert store.accounts.session_user(signed.token).email == "ann@example.org"  # the tab that signed in goes on
    assert store.accounts.session_user(traded.token, HERE).email == "ann@example.org"
    assert store.accounts.session_user(signed.token, HERE) is None  # the tab's token is no cookie
    assert rows(store, "SELECT count(*), max(code_hash) FROM sessions") == [(1, None)]  # one session row, code used
    assert store.accounts.exchange_code(code, HERE) is None  # replayed


def test_a_code_expires_after_a_minute(store):
    assert CODE_LIFETIME == timedelta(seconds=60)
    fresh = store.accounts.new_code(_signed_in(store).token)
    clock(store).advance(CODE_LIFETIME)
    assert store.accounts.exchange_code(fresh, HERE) is not None  # 60 s: still valid
    stale = store.accounts.new_code(_signed_in(store).token)
    clock(store).advance(CODE_LIFETIME + timedelta(seconds=1))
    assert store.accounts.exchange_code(stale, HERE) is None


def test_a_code_from_another_client_is_refused_and_used_up(store):
    code = store.accounts.new_code(_signed_in(store).token)
    assert store.accounts.exchange_code(code, ELSEWHERE) is None
    assert store.accounts.exchange_code(code, HERE) is None  # a stolen code tried elsewhere is burnt
    unbound = store.accounts.sign_in("ann@example.org", PASSWORD)  # a session with no client (the CLI's)
    assert store.accounts.exchange_code(store.accounts.new_code(unbound.token), "loopback ") is None


def test_no_code_for_an_ended_session_and_none_traded_after_it_ends(store):
    ended = _signed_in(store)
    store.accounts.sign_out(ended.token)
    assert store.accounts.new_code(ended.token) is None and store.accounts.new_code(passwords.new_token()) is None
    code = store.accounts.new_code(_signed_in(store).token)
    store.accounts.update_user("ann@example.org", disabled=True)  # ends her sessions
    assert store.accounts.exchange_code(code, HERE) is None
    assert store.accounts.exchange_code("", HERE) is None and store.accounts.exchange_code("nonsense", HERE) is None


def test_a_new_code_replaces_the_last_one(store):
    signed = _signed_in(store)
    first, second = store.accounts.new_code(signed.token), store.accounts.new_code(signed.token)
    assert store.accounts.exchange_code(first, HERE) is None
    assert store.accounts.exchange_code(second, HERE) is not None


def test_concurrent_exchanges_of_one_code_give_one_session(store):
    code = store.accounts.new_code(_signed_in(store).token)
    got, start = [], threading.Barrier(4)

    def trade() -> None:
        start.wait()
        got.append(store.accounts.exchange_code(code, HERE))

    threads = [threading.Thread(target=trade) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(s is not None for s in got) == [False, False, False, True]


# --------------------------------------------------------------------------- the cookie's token


def test_the_cookies_token_works_only_for_its_client_and_ends_with_the_session(store):
    traded = store.accounts.exchange_code(store.accounts.new_code(_signed_in(store).token), HERE)
    assert acc.resume(store, traded.token, HERE).name == "ann@example.org"
    assert acc.resume(store, traded.token, ELSEWHERE) is None  # a stolen cookie, from another address
    assert acc.resume(store, traded.token, "203.0.113.7 curl/8.5") is None  # or another browser
    clock(store).advance(timedelta(hours=12))  # session_hours (12 by default) later
    assert acc.resume(store, traded.token, HERE) is None
    for ended_by in ("tab", "cookie"):  # signing out with either token ends both
        tab = _signed_in(store)
        cookie = store.accounts.exchange_code(store.accounts.new_code(tab.token), HERE)
        acc.sign_out(store, tab.token if ended_by == "tab" else cookie.token)
        assert acc.resume(store, cookie.token, HERE) is None and acc.resume(store, tab.token) is None


def test_client_fingerprint_is_the_throttles_client_and_the_browser():
    agent = {"User-Agent": "Chrome/156", "X-Forwarded-For": "198.51.100.9"}
    assert acc.client_fingerprint("203.0.113.7", agent) == "203.0.113.7 Chrome/156"
    assert acc.client_fingerprint("127.0.0.1", agent) == "198.51.100.9 Chrome/156"  # behind a proxy on this machine
    assert acc.client_fingerprint(None, {"user-agent": "x"}) == "loopback x"


# --------------------------------------------------------------------------- the routes


def _client(store, base_url: str = "http://testserver") -> TestClient:
    # TestClient's peer is "testclient", its User-Agent "testclient".
    return TestClient(Starlette(routes=routes(store=lambda: store)), base_url=base_url)


THIS_CLIENT = acc.client_fingerprint("testclient", {"user-agent": "testclient"})
SAME_SITE = {"Origin": "http://testserver"}  # what a browser sends with the page's POST


def test_the_session_route_sets_an_httponly_strict_cookie(store, caplog):
    code = store.accounts.new_code(_signed_in(store, THIS_CLIENT).token)
    with caplog.at_level(logging.DEBUG), _client(store) as http:
        answer = http.post(SESSION_ROUTE, content=code, headers=SAME_SITE)
        replay = http.post(SESSION_ROUTE, content=code, headers=SAME_SITE)
    assert answer.status_code == 204 and answer.headers["cache-control"] == "no-store"
    cookie = answer.headers["set-cookie"]
    token = cookie.split(";")[0].removeprefix(f"{COOKIE}=")
    flags = {f.strip().lower() for f in cookie.split(";")[1:]}
    assert {"httponly", "path=/", "samesite=strict", "max-age=43200"} <= flags and "secure" not in flags  # http
    assert store.accounts.session_user(token, THIS_CLIENT).email == "ann@example.org"
    assert replay.status_code == 403 and "set-cookie" not in replay.headers  # replayed: no cookie
    server_log = "\n".join(r.getMessage() for r in caplog.records if not r.name.startswith("httpx"))  # not the client's
    assert "session cookie refused" in server_log  # the replay is logged, without its code
    assert code not in server_log and token not in server_log


def test_the_session_route_over_https_sets_a_secure_cookie(store):
    code = store.accounts.new_code(_signed_in(store, THIS_CLIENT).token)
    with _client(store, "https://testserver") as http:
        answer = http.post(SESSION_ROUTE, content=code, headers={"Origin": "https://testserver"})
    assert answer.status_code == 204 and "secure" in answer.headers["set-cookie"].lower()


@pytest.mark.parametrize("origin", [None, "http://evil.example", "null", "http://testserver.evil.example"])
def test_the_routes_refuse_a_request_another_site_started(store, origin):
    code = store.accounts.new_code(_signed_in(store, THIS_CLIENT).token)
    with _client(store) as http:
        for route in (SESSION_ROUTE, SIGN_OUT_ROUTE):
            answer = http.post(route, content=code, headers={"Origin": origin} if origin else {})
            assert answer.status_code == 403 and "set-cookie" not in answer.headers
        assert http.get(SESSION_ROUTE, params={"code": code}).status_code == 405  # a link or an <img> cannot
        assert http.post(SESSION_ROUTE, content=code, headers=SAME_SITE).status_code == 204  # the code is intact


def test_the_session_route_reads_no_more_than_a_small_body(store):
    with _client(store) as http:
        answer = http.post(SESSION_ROUTE, content=b"x" * 100_000, headers=SAME_SITE)
    assert answer.status_code == 413


def test_the_sign_out_route_ends_the_cookies_session_and_clears_it(store):
    traded = store.accounts.exchange_code(store.accounts.new_code(_signed_in(store, THIS_CLIENT).token), THIS_CLIENT)
    with _client(store) as http:
        http.cookies.set(COOKIE, traded.token)
        answer = http.post(SIGN_OUT_ROUTE, headers=SAME_SITE)
    assert answer.status_code == 204
    cookie = answer.headers["set-cookie"].lower()
    assert cookie.startswith(f'{COOKIE}=""') and "max-age=0" in cookie and "httponly" in cookie
    assert store.accounts.session_user(traded.token) is None
