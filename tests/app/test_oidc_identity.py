"""OpenID Connect sign-in: a listed user gets their role, an unlisted one the team's default or a
refusal. It rests on a verified identity (labeler_app.accounts.oidc_actor), on both engines: an
unverified `email` claim maps no one to an account, and an account is bound to the provider's subject
at its first sign-in, so another subject presenting the same address later is refused (and logged)."""
from __future__ import annotations

import logging

import pytest

from labeler.errors import AccessDenied, SignInError
from labeler_app.access import Actor, Role
import labeler_app.accounts as acc
from test_access import team  # noqa: F401 - the fixture: an admin and an annotator, on each engine

IDP = "https://idp.example.org"


def claims(email, *, sub=None, verified=True, iss=IDP, name=None):
    """An ID token's claims as st.user holds them: the subject defaults to the address."""
    return {"iss": iss, "sub": sub or email, "email": email, "email_verified": verified, "name": name}


def test_oidc_listed_user_gets_their_role(team):
    assert acc.oidc_actor(team, claims("Ann@Example.org", name="Ann")) == Actor("ann@example.org", Role.ANNOTATOR, team=True)
    assert acc.oidc_actor(team, claims("boss@example.org")).role == Role.ADMIN


def test_oidc_unlisted_user_is_refused_by_default(team):
    with pytest.raises(AccessDenied, match="carol@example.org is not on this team") as info:
        acc.oidc_actor(team, claims("Carol@example.org"))
    assert "labeler users add" in str(info.value)
    assert team.accounts.get_user("carol@example.org") is None


@pytest.mark.parametrize("role", ["viewer", "annotator"])
def test_oidc_unlisted_user_gets_the_default_role(team, role):
    team.accounts.set_setting("oidc_default_role", role)
    actor = acc.oidc_actor(team, claims("carol@example.org", name="Carol"))
    assert actor == Actor("carol@example.org", Role(role), team=True)
    user = team.accounts.get_user("carol@example.org")
    assert (user.role, user.name, user.created_by, user.has_password) == (role, "Carol", "(first sign-in)", False)
    assert acc.oidc_actor(team, claims("carol@example.org")) == actor  # the second sign-in finds them


def test_oidc_a_disabled_user_is_refused(team):
    team.accounts.update_user("ann@example.org", disabled=True)
    with pytest.raises(AccessDenied, match="ann@example.org is disabled"):
        acc.oidc_actor(team, claims("ann@example.org"))
    team.accounts.set_setting("oidc_default_role", "annotator")  # a default role does not re-admit them
    with pytest.raises(AccessDenied, match="disabled"):
        acc.oidc_actor(team, claims("ann@example.org"))


@pytest.mark.parametrize("email", [None, ""])
def test_oidc_without_an_email_is_refused(team, email):
    with pytest.raises(SignInError, match="sent no e-mail address"):
        acc.oidc_actor(team, claims(email) | {"sub": "someone"})


def test_oidc_two_first_sign_ins_at_once_both_get_in(team, monkeypatch):
    # Two first sign-ins of one new address at once: both looked the user up before either added
    # them; the one that adds second must find the user the other added, not fail.
    team.accounts.set_setting("oidc_default_role", "viewer")
    team.accounts.add_user("carol@example.org", "viewer", by="(first sign-in)")  # the other sign-in won
    real, lookups = team.accounts.get_user, []

    def get_user(email):
        lookups.append(email)
        return None if len(lookups) == 1 else real(email)  # the first lookup ran before that add

    monkeypatch.setattr(team.accounts, "get_user", get_user)
    assert acc.oidc_actor(team, claims("carol@example.org")) == Actor("carol@example.org", Role.VIEWER, team=True)


@pytest.mark.parametrize("verified", [False, None, "false", 1])
def test_oidc_actor_refuses_an_unverified_address_and_binds_nothing(team, verified, caplog):
    caplog.set_level(logging.WARNING, logger="labeler.accounts")
    with pytest.raises(SignInError, match="has not verified the address boss@example.org") as info:
        acc.oidc_actor(team, claims("boss@example.org", sub="mallory", verified=verified))
    assert "Hint: verify it with your provider" in str(info.value)
    assert team.accounts.get_user("boss@example.org").oidc_subject is None
    assert "boss@example.org is not verified" in caplog.text and "mallory" in caplog.text


def test_oidc_actor_refuses_an_unverified_address_even_with_a_default_role(team):
    team.accounts.set_setting("oidc_default_role", "annotator")
    with pytest.raises(SignInError, match="not verified"):
        acc.oidc_actor(team, claims("carol@example.org", verified=False))
    assert team.accounts.get_user("carol@example.org") is None


def test_oidc_actor_accepts_the_string_true(team):
    assert acc.oidc_actor(team, claims("ann@example.org", verified="true")).role == Role.ANNOTATOR


def test_oidc_actor_binds_the_first_subject_and_refuses_another(team, caplog):
    caplog.set_level(logging.WARNING, logger="labeler.accounts")
    assert acc.oidc_actor(team, claims("ann@example.org", sub="ann-1")) == Actor("ann@example.org", Role.ANNOTATOR,
                                                                                team=True)
    assert team.accounts.get_user("ann@example.org").oidc_subject == f"{IDP} ann-1"
    with pytest.raises(AccessDenied, match="ann@example.org already signs in with another account") as info:
        acc.oidc_actor(team, claims("ann@example.org", sub="someone-else"))
    assert "Hint:" in str(info.value)
    assert "bound to another identity than https://idp.example.org someone-else" in caplog.text
    # Another issuer with the same `sub` is another identity too.
    with pytest.raises(AccessDenied, match="another account"):
        acc.oidc_actor(team, claims("ann@example.org", sub="ann-1", iss="https://other.example.org"))
    assert team.accounts.get_user("ann@example.org").oidc_subject == f"{IDP} ann-1"


def test_oidc_actor_a_bound_subject_signs_in_whatever_its_address_claims(team):
    acc.oidc_actor(team, claims("ann@example.org", sub="ann-1"))
    # The provider changed her address and has not verified the new one yet: the subject is her account.
    assert acc.oidc_actor(team, claims("ann.new@example.org", sub="ann-1", verified=False)).name == "ann@example.org"


def test_oidc_actor_binds_a_first_sign_in_added_by_the_default_role(team):
    team.accounts.set_setting("oidc_default_role", "viewer")
    assert acc.oidc_actor(team, claims("carol@example.org", sub="c-1")).role == Role.VIEWER
    assert team.accounts.get_user("carol@example.org").oidc_subject == f"{IDP} c-1"
    with pytest.raises(AccessDenied, match="another account"):
        acc.oidc_actor(team, claims("carol@example.org", sub="c-2"))


def test_oidc_actor_without_a_subject_is_refused(team):
    with pytest.raises(SignInError, match="no subject"):
        acc.oidc_actor(team, claims("ann@example.org") | {"sub": None})


def test_bind_subject_never_replaces_a_bound_one(team):
    team.accounts.bind_subject("ann@example.org", "idp a")
    assert team.accounts.bind_subject("ann@example.org", "idp b").oidc_subject == "idp a"
    # One identity is one account: binding it to a second account leaves that one unbound.
    assert team.accounts.bind_subject("boss@example.org", "idp a").oidc_subject is None
    assert team.accounts.user_of_subject("idp a").email == "ann@example.org"
