"""Team accounts on real databases (SQLite and PostgreSQL): users and their argon2 hashes, sign-in with its throttling
(also under concurrent attempts), sessions, the last admin, invites, team settings. Time is moved
by replacing `store.accounts.clock`; users are hashed once per module (accounts_support)."""
from __future__ import annotations

import threading
from datetime import datetime, timedelta

import pytest
from accounts_support import (  # noqa: F401 - fixtures
    PASSWORD, SAME_REFUSAL, WRONG, clock, dump, refusal, rows, store, template,
)

from labeler.errors import InputError, SignInError
import labeler.passwords as passwords
from labeler_storage import open_store
from labeler_storage.accounts import FAILURE_WINDOW, INVITE_LIFETIME, MAX_DELAY, MAX_FAILURES, wait_after


# --------------------------------------------------------------------------- users


def test_add_user_normalizes_the_address_and_refuses_a_duplicate(store):
    user = store.accounts.add_user("  Carol@Example.ORG ", "viewer", name=" Carol ", by="boss@example.org")
    assert (user.email, user.name, user.role, user.created_by) == ("carol@example.org", "Carol", "viewer",
                                                                   "boss@example.org")
    assert not user.has_password and not user.disabled and not user.invite_pending
    assert store.accounts.get_user("CAROL@example.org") == user
    with pytest.raises(InputError, match="carol@example.org is already a user") as info:
        store.accounts.add_user("carol@EXAMPLE.org", "admin")
    assert "Hint:" in str(info.value) and "\n" not in str(info.value)
    assert [u.email for u in store.accounts.list_users()] == [
        "ann@example.org", "boss@example.org", "carol@example.org", "vic@example.org"]


@pytest.mark.parametrize("email", ["", "   ", "no-at-sign", "two@@example.org", "a b@example.org", "@example.org",
                                   "x@", None, 42])
def test_add_user_refuses_a_bad_address_with_one_clear_error(store, email):
    with pytest.raises(InputError) as info:
        store.accounts.add_user(email, "viewer")
    message = str(info.value)
    assert message.startswith("not an e-mail address") and "Hint:" in message and "\n" not in message
    assert len(store.accounts.list_users()) == 3


@pytest.mark.parametrize("role", ["", "Admin", "owner", None])
def test_add_user_refuses_an_unknown_role(store, role):
    with pytest.raises(InputError, match="unknown role") as info:
        store.accounts.add_user("dan@example.org", role)
    assert "admin, annotator, viewer" in str(info.value)
    assert store.accounts.get_user("dan@example.org") is None


def test_password_is_stored_as_an_argon2id_hash_never_in_clear(store):
    [(stored,)] = rows(store, "SELECT password_hash FROM users WHERE email = 'ann@example.org'")
    assert stored.startswith("$argon2id$") and PASSWORD not in stored
    assert PASSWORD not in dump(store)
    for bad, why in (("short", "at least 10 characters"), ("x" * 1025, "at most 1024"),
                     ("undecodable \udcff input", "not text")):
        with pytest.raises(InputError, match=why):  # refused before anything is written
            store.accounts.add_user("dan@example.org", "viewer", password=bad)
    assert store.accounts.get_user("dan@example.org") is None


# --------------------------------------------------------------------------- sign-in


def test_sign_in_with_the_right_password_gives_a_session(store):
    session = store.accounts.sign_in(" ANN@example.org", PASSWORD)
    assert session.user.email == "ann@example.org" and session.user.role == "annotator"
    # 12 hours (the default session_hours) after the clock's time
    assert session.expires_at == "2026-12-01T21:00:00Z"
    assert store.accounts.session_user(session.token) == session.user


def test_wrong_password_unknown_address_and_bad_address_give_the_same_message(store):
    messages = {refusal(store, "ann@example.org", WRONG), refusal(store, "nobody@example.org", PASSWORD),
                refusal(store, "not an address", PASSWORD), refusal(store, "ann@example.org", ""),
                refusal(store, "ann@example.org", "undecodable \udcff input")}
    assert messages == {SAME_REFUSAL}


def test_a_user_without_a_password_or_disabled_gets_the_same_message(store):
    store.accounts.add_user("oidc@example.org", "viewer")
    assert refusal(store, "oidc@example.org", PASSWORD) == SAME_REFUSAL
    store.accounts.update_user("vic@example.org", disabled=True)
    assert refusal(store, "vic@example.org", PASSWORD) == SAME_REFUSAL


def test_after_five_failures_the_address_waits_even_for_the_right_password(store):
    for _ in range(MAX_FAILURES):
        assert refusal(store, "ann@example.org", WRONG) == SAME_REFUSAL
    message = refusal(store, "ann@example.org", PASSWORD)
    # the fifth failure, at 09:00:00, makes the address wait 1 s (2 ** 0)
    assert message.startswith("too many failed sign-ins for this address")
    assert "2026-12-01 09:00:01 UTC" in message and "labeler users unlock EMAIL" in message
    assert store.accounts.sign_in("boss@example.org", PASSWORD)  # other addresses are not affected
    clock(store).advance(timedelta(seconds=1))
    assert store.accounts.sign_in("ann@example.org", PASSWORD).user.email == "ann@example.org"


def test_each_further_failure_doubles_the_wait_up_to_a_minute(store):
    for _ in range(MAX_FAILURES - 1):
        refusal(store, "ann@example.org", WRONG)
    waits = []
    for _ in range(9):  # failures 5..13, each made as soon as the last wait ended
        refusal(store, "ann@example.org", WRONG)
        until = rows(store, "SELECT locked_until FROM login_failures")[0][0]
        wait = (datetime.fromisoformat(until.replace("Z", "+00:00")) - clock(store).now).total_seconds()
        waits.append(wait)
        clock(store).advance(timedelta(seconds=wait))
    assert waits == [1, 2, 4, 8, 16, 32, 60, 60, 60]  # 2 ** (n - 5) s, at most MAX_DELAY
    assert MAX_DELAY == timedelta(minutes=1) and wait_after(50) == MAX_DELAY


def test_four_failures_do_not_delay_and_a_success_resets_the_count(store):
    for _ in range(MAX_FAILURES - 1):
        refusal(store, "ann@example.org", WRONG)
    assert store.accounts.sign_in("ann@example.org", PASSWORD)
    assert rows(store, "SELECT * FROM login_failures") == []
    for _ in range(MAX_FAILURES - 1):  # four more after the reset: still no wait
        refusal(store, "ann@example.org", WRONG)
    assert store.accounts.sign_in("ann@example.org", PASSWORD)


def test_an_unknown_address_waits_the_same_way(store):
    for _ in range(MAX_FAILURES):
        assert refusal(store, "Nobody@example.org", WRONG) == SAME_REFUSAL
    assert refusal(store, "nobody@example.org", WRONG).startswith("too many failed sign-ins")


def test_while_waiting_no_password_is_checked(store, monkeypatch):
    for _ in range(MAX_FAILURES):
        refusal(store, "ann@example.org", WRONG)
    checked = []
    monkeypatch.setattr("labeler_storage.accounts.verify_password", lambda *a: checked.append(a) or True)
    refusal(store, "ann@example.org", PASSWORD)
    assert checked == []


def test_failures_older_than_the_window_do_not_count(store):
    for _ in range(MAX_FAILURES - 1):
        refusal(store, "ann@example.org", WRONG)
    clock(store).advance(FAILURE_WINDOW + timedelta(seconds=1))
    refusal(store, "ann@example.org", WRONG)  # the first of a new window, not the fifth
    refusal(store, "ann@example.org", WRONG)  # and no wait after it
    assert store.accounts.sign_in("ann@example.org", PASSWORD)


def test_attempts_while_waiting_are_not_counted(store):
    for _ in range(MAX_FAILURES + 2):  # seven failures 4 s apart (09:00:00 ... 09:00:24): each wait over
        refusal(store, "ann@example.org", WRONG)
        clock(store).advance(timedelta(seconds=4))
    refusal(store, "ann@example.org", WRONG)  # the 8th failure, at 09:00:28: wait 2 ** 3 = 8 s
    for _ in range(20):  # refused unchecked, uncounted: the wait still ends at 09:00:36
        refusal(store, "ann@example.org", WRONG)
    assert rows(store, "SELECT failures, locked_until FROM login_failures") == [(8, "2026-12-01T09:00:36Z")]
    clock(store).advance(timedelta(seconds=8))
    assert store.accounts.sign_in("ann@example.org", PASSWORD)


def test_unlock_and_a_new_password_end_the_wait(store):
    for _ in range(MAX_FAILURES):
        refusal(store, "ann@example.org", WRONG)
    assert store.accounts.unlock("ANN@example.org") is True
    assert store.accounts.unlock("ann@example.org") is False  # nothing left to lift
    assert store.accounts.sign_in("ann@example.org", PASSWORD)
    for _ in range(MAX_FAILURES):
        refusal(store, "ann@example.org", WRONG)
    store.accounts.set_password("ann@example.org", "reset by the admin")
    assert store.accounts.sign_in("ann@example.org", "reset by the admin")
    for _ in range(MAX_FAILURES):
        refusal(store, "ann@example.org", WRONG)
    token = store.accounts.invite("ann@example.org")
    assert store.accounts.accept_invite(token, "set through an invite").user.email == "ann@example.org"
    assert rows(store, "SELECT * FROM login_failures") == []


def test_old_failures_of_other_addresses_are_tidied_away(store):
    for address in ("a@example.org", "b@example.org", "c@example.org"):
        refusal(store, address, WRONG)
    clock(store).advance(timedelta(minutes=14))
    refusal(store, "e@example.org", WRONG)
    clock(store).advance(timedelta(minutes=1, seconds=1))  # 09:15:01, a window after 09:00
    refusal(store, "d@example.org", WRONG)
    # the three old single failures are gone
    assert rows(store, "SELECT email FROM login_failures ORDER BY email") == [("d@example.org",), ("e@example.org",)]


def test_a_password_reset_while_the_password_is_checked_refuses_the_old_one(store, monkeypatch):
    real = passwords.verify_password

    def verify_then_reset(password_hash, password):
        ok = real(password_hash, password)
        monkeypatch.setattr("labeler_storage.accounts.verify_password", real)
        store.accounts.set_password("ann@example.org", "reset by the admin meanwhile")
        return ok

    monkeypatch.setattr("labeler_storage.accounts.verify_password", verify_then_reset)
    assert refusal(store, "ann@example.org", PASSWORD) == SAME_REFUSAL
    assert rows(store, "SELECT count(*) FROM sessions") == [(0,)]


def _burst(store, n: int, password: str) -> list[str]:
    """n sign-ins of ann@ started together from n threads; the refusal messages."""
    barrier, out = threading.Barrier(n), []

    def attempt():
        barrier.wait()
        try:
            store.accounts.sign_in("ann@example.org", password)
            out.append("signed in")
        except SignInError as exc:
            out.append(str(exc))

    threads = [threading.Thread(target=attempt) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    return out


def test_concurrent_failures_are_all_counted_and_the_lock_engages(store):
    refusal(store, "ann@example.org", WRONG)  # one earlier failure; the burst of four makes five
    assert _burst(store, 4, WRONG) == [SAME_REFUSAL] * 4
    assert rows(store, "SELECT failures FROM login_failures") == [(MAX_FAILURES,)]
    assert refusal(store, "ann@example.org", PASSWORD).startswith("too many")


def test_a_concurrent_burst_checks_no_more_than_max_failures_passwords(store, monkeypatch):
    # Throttling is only worth something if parallel requests cannot each get a guess checked.
    checked = []
    real = passwords.verify_password
    monkeypatch.setattr("labeler_storage.accounts.verify_password", lambda h, p: checked.append(p) or real(h, p))
    out = _burst(store, 8, WRONG)
    assert len(checked) <= MAX_FAILURES
    assert out.count(SAME_REFUSAL) == len(checked) and len(out) == 8
    assert refusal(store, "ann@example.org", PASSWORD).startswith("too many")


# --------------------------------------------------------------------------- sessions


def test_the_token_is_not_stored_in_clear(store):
    session = store.accounts.sign_in("ann@example.org", PASSWORD)
    [(token_hash,)] = rows(store, "SELECT token_hash FROM sessions")
    assert token_hash == passwords.token_digest(session.token) and session.token not in token_hash
    assert session.token not in dump(store) and len(session.token) >= 40  # 256 random bits, URL-safe
    assert store.accounts.session_user(None) is None and store.accounts.session_user("") is None
    assert store.accounts.session_user(passwords.new_token()) is None


def test_a_session_expires_after_session_hours(store):
    store.accounts.set_setting("session_hours", 2)
    session = store.accounts.sign_in("ann@example.org", PASSWORD)
    assert session.expires_at == "2026-12-01T11:00:00Z"
    clock(store).advance(timedelta(hours=2) - timedelta(seconds=1))
    assert store.accounts.session_user(session.token) is not None
    clock(store).advance(timedelta(seconds=1))
    assert store.accounts.session_user(session.token) is None


def test_sign_out_ends_only_that_session(store):
    first = store.accounts.sign_in("ann@example.org", PASSWORD)
    second = store.accounts.sign_in("ann@example.org", PASSWORD)
    store.accounts.sign_out(first.token)
    store.accounts.sign_out(first.token)  # twice: nothing happens
    store.accounts.sign_out(None)
    assert store.accounts.session_user(first.token) is None
    assert store.accounts.session_user(second.token).email == "ann@example.org"


def test_disabling_a_user_ends_their_sessions_and_sign_in(store):
    session = store.accounts.sign_in("ann@example.org", PASSWORD)
    user = store.accounts.update_user("ann@example.org", disabled=True, by="boss@example.org")
    assert user.disabled
    assert store.accounts.session_user(session.token) is None
    assert refusal(store, "ann@example.org", PASSWORD) == SAME_REFUSAL
    store.accounts.update_user("ann@example.org", disabled=False)
    assert store.accounts.sign_in("ann@example.org", PASSWORD)  # the refusal above was not a fifth failure


def test_a_role_change_ends_sessions_and_the_next_session_has_the_new_role(store):
    session = store.accounts.sign_in("ann@example.org", PASSWORD)
    other = store.accounts.sign_in("vic@example.org", PASSWORD)
    store.accounts.update_user("ann@example.org", role="viewer", by="boss@example.org")
    assert store.accounts.session_user(session.token) is None
    assert store.accounts.session_user(other.token).role == "viewer"  # someone else's session stays
    assert store.accounts.sign_in("ann@example.org", PASSWORD).user.role == "viewer"
    assert store.accounts.get_user("ann@example.org").role == "viewer"


def test_a_change_that_changes_nothing_keeps_sessions(store):
    session = store.accounts.sign_in("ann@example.org", PASSWORD)
    store.accounts.update_user("ann@example.org", role="annotator", disabled=False)
    store.accounts.update_user("ann@example.org")
    assert store.accounts.session_user(session.token).role == "annotator"


def test_session_user_rereads_the_user(store):
    session = store.accounts.sign_in("ann@example.org", PASSWORD)
    rows(store, "UPDATE users SET role = 'admin' WHERE email = 'ann@example.org'")  # another process
    assert store.accounts.session_user(session.token).role == "admin"


def test_set_password_ends_sessions_and_the_old_password(store):
    session = store.accounts.sign_in("ann@example.org", PASSWORD)
    store.accounts.set_password("ann@example.org", "another long password", by="(cli)")
    assert store.accounts.session_user(session.token) is None
    assert refusal(store, "ann@example.org", PASSWORD) == SAME_REFUSAL
    assert store.accounts.sign_in("ann@example.org", "another long password")


# --------------------------------------------------------------------------- the last admin


def test_the_last_admin_cannot_be_demoted_or_disabled(store):
    for change in ({"role": "annotator"}, {"role": "viewer"}, {"disabled": True}):
        with pytest.raises(InputError, match="boss@example.org is the last admin"):
            store.accounts.update_user("boss@example.org", **change)
    assert store.accounts.get_user("boss@example.org").role == "admin"
    with pytest.raises(InputError, match="no user nobody@example.org"):
        store.accounts.update_user("nobody@example.org", role="admin")


def test_with_a_second_admin_one_may_step_down_but_not_both(store):
    store.accounts.update_user("ann@example.org", role="admin")
    store.accounts.update_user("boss@example.org", role="viewer")
    with pytest.raises(InputError, match="ann@example.org is the last admin"):
        store.accounts.update_user("ann@example.org", disabled=True)


def test_a_disabled_admin_does_not_count_as_another_admin(store):
    store.accounts.update_user("ann@example.org", role="admin")
    store.accounts.update_user("ann@example.org", disabled=True)
    with pytest.raises(InputError, match="last admin"):
        store.accounts.update_user("boss@example.org", role="annotator")


# --------------------------------------------------------------------------- invites


def test_an_invite_sets_the_password_and_signs_in_once(store):
    store.accounts.add_user("new@example.org", "annotator")
    token = store.accounts.invite("new@example.org", by="boss@example.org")
    assert store.accounts.get_user("new@example.org").invite_pending
    session = store.accounts.accept_invite(token, "my new long password")
    assert session.user.email == "new@example.org" and store.accounts.session_user(session.token) is not None
    user = store.accounts.get_user("new@example.org")
    assert user.has_password and not user.invite_pending
    assert store.accounts.sign_in("new@example.org", "my new long password")
    with pytest.raises(SignInError, match="not valid"):
        store.accounts.accept_invite(token, "someone else's password")
    [(stored,)] = rows(store, "SELECT password_hash FROM users WHERE email = 'new@example.org'")
    assert stored.startswith("$argon2id$")


def test_an_invite_expires_after_seven_days(store):
    store.accounts.add_user("new@example.org", "viewer")
    store.accounts.add_user("old@example.org", "viewer")
    token, old = store.accounts.invite("new@example.org"), store.accounts.invite("old@example.org")
    clock(store).advance(INVITE_LIFETIME - timedelta(seconds=1))
    assert store.accounts.accept_invite(token, "my new long password").user.role == "viewer"
    clock(store).advance(timedelta(seconds=2))
    with pytest.raises(SignInError, match="not valid") as info:
        store.accounts.accept_invite(old, "my new long password")
    assert "labeler users invite" in str(info.value)
    assert not store.accounts.get_user("old@example.org").has_password


def test_a_new_invite_replaces_the_old_one(store):
    store.accounts.add_user("new@example.org", "viewer")
    old = store.accounts.invite("new@example.org")
    new = store.accounts.invite("new@example.org")
    assert old != new
    with pytest.raises(SignInError):
        store.accounts.accept_invite(old, "my new long password")
    assert store.accounts.accept_invite(new, "my new long password")


def test_an_invite_of_a_disabled_user_or_with_a_short_password_is_refused(store):
    store.accounts.add_user("new@example.org", "viewer")
    token = store.accounts.invite("new@example.org")
    with pytest.raises(InputError, match="at least 10"):
        store.accounts.accept_invite(token, "short")
    store.accounts.update_user("new@example.org", disabled=True)
    with pytest.raises(SignInError):
        store.accounts.accept_invite(token, "my new long password")
    for made_up in ("", passwords.new_token()):
        with pytest.raises(SignInError):
            store.accounts.accept_invite(made_up, "my new long password")


def test_the_invite_token_is_not_stored_in_clear(store):
    store.accounts.add_user("new@example.org", "viewer")
    token = store.accounts.invite("new@example.org")
    [(invite_hash, expires)] = rows(store, "SELECT invite_hash, invite_expires_at FROM users "
                                           "WHERE email = 'new@example.org'")
    assert invite_hash == passwords.token_digest(token) and expires == "2026-12-08T09:00:00Z"
    assert token not in dump(store)


def test_setting_a_password_ends_a_pending_invite(store):
    store.accounts.add_user("new@example.org", "viewer")
    token = store.accounts.invite("new@example.org")
    store.accounts.set_password("new@example.org", "set by the admin")
    with pytest.raises(SignInError):
        store.accounts.accept_invite(token, "my new long password")


# --------------------------------------------------------------------------- settings


def test_settings_have_defaults_and_are_validated(store):
    assert store.accounts.settings() == {"session_hours": 12, "oidc_default_role": "none", "systems": {},
                                       "overlap": 1, "blind": None, "judge_bars": {"min_pairs": 100, "kappa_binary": 0.4, "tau": 0.9, "min_runs": 4},
                                       "suggestions": "after", "queue_order": "seats"}
    for key, value in (("session_hours", 0), ("session_hours", -1), ("session_hours", "soon"),
                       ("session_hours", 24 * 91), ("session_hours", float("nan")), ("session_hours", None),
                       ("session_hours", True), ("oidc_default_role", "owner"), ("oidc_default_role", None),
                       ("colour", "blue"), ("judge_bars", {"min_pairs": 100}),
                       ("judge_bars", {"min_pairs": True, "kappa_binary": 0.4, "tau": 0.9, "min_runs": 4}),
                       ("suggestions", "always"), ("suggestions", None), ("queue_order", "random")):
        with pytest.raises(InputError) as info:
            store.accounts.set_setting(key, value)
        assert "Hint:" in str(info.value)
    assert store.accounts.settings() == {"session_hours": 12, "oidc_default_role": "none", "systems": {},
                                       "overlap": 1, "blind": None, "judge_bars": {"min_pairs": 100, "kappa_binary": 0.4, "tau": 0.9, "min_runs": 4},
                                       "suggestions": "after", "queue_order": "seats"}


def test_settings_persist_across_stores(store):
    store.accounts.set_setting("session_hours", "8", by="boss@example.org")
    store.accounts.set_setting("oidc_default_role", "viewer")
    store.accounts.set_setting("oidc_default_role", "annotator")  # a second change replaces the first
    with open_store(store.url) as again:
        assert again.accounts.settings() == {"session_hours": 8.0, "oidc_default_role": "annotator", "systems": {},
                                                 "overlap": 1, "blind": None, "judge_bars": {"min_pairs": 100, "kappa_binary": 0.4, "tau": 0.9, "min_runs": 4},
                                       "suggestions": "after", "queue_order": "seats"}
    assert rows(store, "SELECT key, updated_by FROM team_settings ORDER BY key") == [
        ("oidc_default_role", ""), ("session_hours", "boss@example.org")]
