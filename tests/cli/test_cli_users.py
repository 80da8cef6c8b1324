"""`labeler users` and `labeler app` through click's CliRunner, on the database in $LABELER_HOME:
passwords asked twice, invite links that work, bad input as one line with exit 2, the last
admin kept, and the Streamlit command line of a local and a team app (never started here)."""
from __future__ import annotations

import time
from datetime import datetime, timezone

import pytest
from click.testing import CliRunner

from labeler.errors import SignInError
from labeler_edge.cli import EXIT_BAD_INPUT, cli
from labeler_edge.cli.team import streamlit_argv
from labeler_storage import open_store

PASSWORD = "a long enough password"


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("LABELER_HOME", str(tmp_path))
    monkeypatch.delenv("LABELER_PUBLIC_URL", raising=False)
    return tmp_path


def run(*args: str, input: str | None = None):
    return CliRunner().invoke(cli, list(args), input=input)


def one_line_error(result, starts: str) -> str:
    """The single `Error: ...` line of a bad-input exit, with no traceback anywhere."""
    assert result.exit_code == EXIT_BAD_INPUT, (result.stdout, result.stderr)
    lines = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert len(lines) == 1 and lines[0].startswith(f"Error: {starts}"), result.stderr
    assert "Traceback" not in result.output and "Traceback" not in result.stderr
    return lines[0]


def test_users_add_asks_for_the_password_twice_and_it_signs_in(home):
    result = run("users", "add", " Boss@Example.org", "--role", "admin", "--name", "Boss",
                 input=f"{PASSWORD}\n{PASSWORD}\n")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "Added boss@example.org as admin.\n"
    assert "Password" in result.stderr and "Repeat for confirmation" in result.stderr
    assert PASSWORD not in result.output  # hidden input is not echoed
    store = open_store(home / "labeler.db")
    user = store.accounts.get_user("boss@example.org")
    assert (user.role, user.name, user.created_by, user.has_password) == ("admin", "Boss", "(cli)", True)
    assert store.accounts.sign_in("boss@example.org", PASSWORD).user.email == "boss@example.org"


def test_users_add_with_two_different_passwords_asks_again(home):
    result = run("users", "add", "boss@example.org", "--role", "admin",
                 input=f"{PASSWORD}\nsomething else entirely\n{PASSWORD}\n{PASSWORD}\n")
    assert result.exit_code == 0, result.stderr
    assert "do not match" in result.stderr
    assert open_store(home / "labeler.db").accounts.sign_in("boss@example.org", PASSWORD)


def test_users_add_with_invite_prints_a_link_whose_token_works(home, monkeypatch):
    monkeypatch.setenv("LABELER_PUBLIC_URL", "https://labels.example.org/")
    result = run("users", "add", "new@example.org", "--role", "annotator", "--invite")
    assert result.exit_code == 0, result.stderr
    added, link_line = result.stdout.splitlines()
    assert added == "Added new@example.org as annotator." and "Password" not in result.stderr
    prefix = "Invite link (one use, 7 days): https://labels.example.org/?invite="
    assert link_line.startswith(prefix)
    token = link_line[len(prefix):]
    store = open_store(home / "labeler.db")
    assert store.accounts.get_user("new@example.org").invite_pending
    session = store.accounts.accept_invite(token, "my own long password")
    assert session.user.email == "new@example.org" and session.user.role == "annotator"


def test_users_invite_replaces_the_earlier_link(home):
    run("users", "add", "new@example.org", "--role", "viewer", "--invite")
    first = run("users", "invite", "new@example.org").stdout.strip().split("?invite=")[1]
    second = run("users", "invite", "NEW@example.org").stdout.strip().split("?invite=")[1]
    assert first != second
    assert "http://127.0.0.1:8501/?invite=" in run("users", "invite", "new@example.org").stdout
    store = open_store(home / "labeler.db")
    from labeler.errors import SignInError

    with pytest.raises(SignInError):
        store.accounts.accept_invite(first, "my own long password")


def test_users_add_oidc_needs_no_password(home):
    result = run("users", "add", "sso@example.org", "--role", "viewer", "--oidc")
    assert result.exit_code == 0 and "Password" not in result.stderr
    assert run("users", "list").stdout == "sso@example.org\tviewer\toidc\n"
    one_line_error(run("users", "add", "x@example.org", "--role", "viewer", "--oidc", "--invite"),
                   "--invite and --oidc exclude each other")


def test_users_add_short_password_is_one_line_exit_2(home):
    result = run("users", "add", "boss@example.org", "--role", "admin", input="short\nshort\n")
    line = one_line_error(result, "a password needs at least 10 characters")
    assert "Hint:" in line
    assert open_store(home / "labeler.db").accounts.list_users() == []


@pytest.mark.parametrize("email", ["not-an-address", "two@@example.org", " "])
def test_users_add_bad_email_is_one_line_exit_2_before_asking_a_password(home, email):
    result = run("users", "add", email, "--role", "viewer", input=f"{PASSWORD}\n{PASSWORD}\n")
    one_line_error(result, "not an e-mail address")
    assert "Password" not in result.stderr  # nobody types a password for nothing


def test_users_add_existing_user_is_refused_before_asking_a_password(home):
    run("users", "add", "boss@example.org", "--role", "admin", "--oidc")
    result = run("users", "add", "BOSS@example.org", "--role", "viewer", input=f"{PASSWORD}\n{PASSWORD}\n")
    one_line_error(result, "boss@example.org is already a user")
    assert "Password" not in result.stderr


def test_users_add_bad_role_is_a_usage_error(home):
    result = run("users", "add", "x@example.org", "--role", "owner", "--oidc")
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "'owner' is not one of 'admin', 'annotator', 'viewer'" in result.stderr


def test_users_set_role_disable_enable_and_the_last_admin(home):
    for email, role in (("boss@example.org", "admin"), ("ann@example.org", "annotator")):
        assert run("users", "add", email, "--role", role, "--oidc").exit_code == 0
    result = run("users", "set", "ann@example.org", "--role", "viewer")
    assert (result.exit_code, result.stdout) == (0, "ann@example.org: viewer.\n")
    result = run("users", "set", "ANN@example.org", "--disable")
    assert (result.exit_code, result.stdout) == (0, "ann@example.org: viewer (disabled).\n")
    assert run("users", "list").stdout == ("ann@example.org\tviewer\toidc\tdisabled\n"
                                           "boss@example.org\tadmin\toidc\n")
    assert run("users", "set", "ann@example.org", "--enable").stdout == "ann@example.org: viewer.\n"
    one_line_error(run("users", "set", "boss@example.org", "--role", "annotator"), "boss@example.org is the last admin")
    one_line_error(run("users", "set", "boss@example.org", "--disable"), "boss@example.org is the last admin")
    one_line_error(run("users", "set", "nobody@example.org", "--role", "admin"), "no user nobody@example.org")
    assert open_store(home / "labeler.db").accounts.get_user("boss@example.org").role == "admin"


def test_users_set_disable_ends_their_sessions(home):
    run("users", "add", "boss@example.org", "--role", "admin", "--oidc")
    run("users", "add", "ann@example.org", "--role", "annotator", input=f"{PASSWORD}\n{PASSWORD}\n")
    store = open_store(home / "labeler.db")
    session = store.accounts.sign_in("ann@example.org", PASSWORD)
    assert run("users", "set", "ann@example.org", "--disable").exit_code == 0
    assert store.accounts.session_user(session.token) is None


def test_users_password_sets_it_and_refuses_a_short_one(home):
    run("users", "add", "ann@example.org", "--role", "annotator", "--invite")
    result = run("users", "password", "Ann@example.org", input="a brand new password\na brand new password\n")
    assert (result.exit_code, result.stdout) == (0, "Password of ann@example.org set; their sessions ended.\n")
    store = open_store(home / "labeler.db")
    assert store.accounts.sign_in("ann@example.org", "a brand new password")
    assert not store.accounts.get_user("ann@example.org").invite_pending
    one_line_error(run("users", "password", "ann@example.org", input="tiny\ntiny\n"), "a password needs at least")
    one_line_error(run("users", "password", "nobody@example.org", input=f"{PASSWORD}\n{PASSWORD}\n"),
                   "no user nobody@example.org")


def test_users_list_of_an_empty_team_and_of_several(home):
    assert run("users", "list").stdout == ""
    run("users", "add", "vic@example.org", "--role", "viewer", "--invite")
    run("users", "add", "ann@example.org", "--role", "annotator", input=f"{PASSWORD}\n{PASSWORD}\n")
    assert run("users", "list").stdout == ("ann@example.org\tannotator\tpassword\n"
                                           "vic@example.org\tviewer\tinvite pending\n")


def test_users_db_option_points_at_another_database(home, tmp_path):
    other = tmp_path / "other.db"
    assert run("users", "add", "x@example.org", "--role", "viewer", "--oidc", "--db", str(other)).exit_code == 0
    assert run("users", "list", "--db", str(other)).stdout.startswith("x@example.org")
    assert run("users", "list").stdout == ""


# --------------------------------------------------------------------------- labeler app


@pytest.fixture
def started(monkeypatch):
    """What `labeler app` would exec, instead of starting Streamlit."""
    calls = []
    monkeypatch.setattr("labeler_edge.cli.team.os.execvpe", lambda file, argv, env: calls.append((argv, env)))
    return calls


def option(argv: list[str], name: str) -> str:
    return argv[argv.index(name) + 1]


def test_app_on_a_public_host_without_team_is_one_line_exit_2(home, started):
    for host in ("0.0.0.0", "192.168.1.5", "::"):
        line = one_line_error(run("app", "--host", host), f"a local app listens on 127.0.0.1 only, not {host}")
        assert "--team" in line
    assert started == []


def test_app_local_binds_127_0_0_1_and_shows_error_details(home, started):
    assert run("app").exit_code == 0
    [(argv, env)] = started
    assert option(argv, "--server.address") == "127.0.0.1" and option(argv, "--server.port") == "8501"
    assert "--client.showErrorDetails" not in argv and env["LABELER_TEAM"] == "0"


def test_app_team_binds_the_given_host_and_hides_error_details(home, started):
    assert run("app", "--team", "--host", "0.0.0.0", "--port", "9000").exit_code == 0
    [(argv, env)] = started
    assert option(argv, "--server.address") == "0.0.0.0" and option(argv, "--server.port") == "9000"
    assert option(argv, "--client.showErrorDetails") == "none" and env["LABELER_TEAM"] == "1"


def test_streamlit_argv_team_and_local():
    team = streamlit_argv(team=True, host="10.0.0.7", port=8600)
    assert " --client.showErrorDetails none " in f" {' '.join(team)} "
    assert option(team, "--server.address") == "10.0.0.7" and option(team, "--server.port") == "8600"
    assert option(team, "--server.enableXsrfProtection") == "true"
    assert team[1:4] == ["-m", "labeler_edge._serve", "run"] and team[4].endswith("team_app.py")
    local = streamlit_argv(team=False, host="127.0.0.1", port=8501)
    assert local[4].endswith("local_app.py")  # streamlit_app.py with the grade route (pages/_grade_route.py)
    assert "--client.showErrorDetails" not in local  # Streamlit's default: details for the one local user
    assert option(local, "--server.address") == "127.0.0.1"


def test_users_unlock_ends_the_wait_of_an_address(home):
    from labeler_storage.accounts import MAX_FAILURES

    run("users", "add", "ann@example.org", "--role", "annotator", input=f"{PASSWORD}\n{PASSWORD}\n")
    store = open_store()
    store.accounts.clock = lambda: datetime(2026, 12, 1, 9, 0, tzinfo=timezone.utc)  # the 1 s wait lasts
    for _ in range(MAX_FAILURES):
        with pytest.raises(SignInError):
            store.accounts.sign_in("ann@example.org", "not her password")
    with pytest.raises(SignInError, match="too many failed sign-ins"):
        store.accounts.sign_in("ann@example.org", PASSWORD)
    result = run("users", "unlock", " Ann@example.org")
    assert (result.exit_code, result.stdout) == (0, "Lifted the sign-in wait of ann@example.org.\n")
    assert store.accounts.sign_in("ann@example.org", PASSWORD).user.email == "ann@example.org"
    assert run("users", "unlock", "ann@example.org").stdout == "ann@example.org has no failed sign-ins to forget.\n"
    one_line_error(run("users", "unlock", "not an address"), "not an e-mail address")
    store.close()


def test_the_team_server_closes_metrics_and_signed_out_uploads_and_serves_the_app(home):
    import os
    import signal
    import subprocess
    import urllib.error
    import urllib.request

    from browser_support import free_port

    port = free_port()
    argv = streamlit_argv(team=True, host="127.0.0.1", port=port)  # what `labeler app --team` runs
    log = open(home / "server.log", "w")
    proc = subprocess.Popen(argv, env={**os.environ, "LABELER_TEAM": "1"}, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)

    def get(path: str) -> tuple[int, bytes]:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read()

    try:
        for _ in range(300):
            try:
                if get("/_stcore/health") == (200, b"ok"):
                    break
            except OSError:
                pass
            time.sleep(0.2)
        else:
            raise AssertionError((home / "server.log").read_text())
        assert get("/_stcore/metrics")[0] == 404 and get("/_stcore/metrics/")[0] == 404
        # An upload into a session not signed in as an uploader: refused before its 5 MB are read.
        put = urllib.request.Request(f"http://127.0.0.1:{port}/_stcore/upload_file/some-session/some-file",
                                     data=b"x" * (5 << 20), method="PUT")
        try:
            urllib.request.urlopen(put, timeout=10)
            raise AssertionError("the upload was taken")
        except urllib.error.HTTPError as exc:
            assert exc.code == 403
        except (ConnectionError, urllib.error.URLError):
            pass  # the server answered 403 and closed before the body was sent: refused all the same
        status, page = get("/")
        assert status == 200 and b"<div id=\"root\"" in page  # the Streamlit app itself
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
        log.close()
