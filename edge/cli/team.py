"""`labeler app` (start the app, local or team) and `labeler users` (the team's accounts).

Local (the default): 127.0.0.1 only, no sign-in, one person. Team (`--team`): sign-in on every
page (built-in accounts, or OpenID Connect when `.streamlit/secrets.toml` has an `[auth]`
section), roles enforced, no traceback ever sent to a browser, bound where `--host` says.
`labeler users` runs on the server with the shell's trust: it needs no role.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from labeler.errors import InputError
from labeler_edge.cli import cli, handle_errors
from labeler_storage.accounts import ROLES

ENTRY = Path(__file__).resolve().parents[1] / "local_app.py"  # in the edge, not beside pages/: streamlit_app.py with the grade route
TEAM_ENTRY = ENTRY.with_name("team_app.py")  # the same app, with Streamlit's metrics route closed


def streamlit_argv(*, team: bool, host: str, port: int) -> list[str]:
    """The command line that starts the app: local or team settings."""
    # edge/_serve.py: Streamlit's `run`, patched so no click is lost unseen after a restart
    argv = [sys.executable, "-m", "labeler_edge._serve", "run", str(TEAM_ENTRY if team else ENTRY), "--server.port", str(port),
            "--server.address", host, "--server.headless", "true", "--browser.gatherUsageStats", "false",
            "--server.fileWatcherType", "none", "--runner.postScriptGC", "false"]  # see .streamlit/config.toml
    if team:
        # No traceback, exception type or message reaches a browser; the page logs them with an id.
        argv += ["--client.showErrorDetails", "none", "--client.toolbarMode", "viewer",
                 "--server.enableXsrfProtection", "true", "--server.runOnSave", "false"]
    return argv


@cli.command("app")
@click.option("--team", is_flag=True, help="Team deployment: sign-in required, roles enforced, no tracebacks.")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on; a team behind a reverse proxy keeps 127.0.0.1.")
@click.option("--port", default=8501, show_default=True, type=click.IntRange(1, 65535))
@handle_errors
def app_command(team: bool, host: str, port: int) -> None:
    """Start the Streamlit app (local single-user by default; --team for a shared server)."""
    if not ENTRY.is_file() or not TEAM_ENTRY.is_file():
        raise InputError("the app's entry script is missing", path=str(ENTRY),
                         hint="reinstall golden-set-labeler[app]: its wheel carries the entry script.")
    if host not in ("127.0.0.1", "localhost", "::1") and not team:
        raise InputError(f"a local app listens on 127.0.0.1 only, not {host}",
                         hint="add --team to share it (sign-in required), or drop --host.")
    env = {**os.environ, "LABELER_TEAM": "1" if team else "0"}
    argv = streamlit_argv(team=team, host=host, port=port)
    os.execvpe(argv[0], argv, env)


@cli.group("users")
def users() -> None:
    """The team's accounts (team mode): add, invite, change roles, list."""


def _store(db: str | None):
    from labeler_storage import open_store

    return open_store(db)


_DB = click.option("--db", default=None, metavar="URL_OR_PATH", help="Database (default: $LABELER_HOME/labeler.db).")


@users.command("add")
@click.argument("email")
@click.option("--role", type=click.Choice(ROLES), required=True)
@click.option("--name", default="", help="How the app shows them.")
@click.option("--invite", is_flag=True, help="Print a one-time invite link instead of asking for a password.")
@click.option("--oidc", is_flag=True, help="They sign in through the identity provider: no password, no invite.")
@_DB
@handle_errors
def users_add(email: str, role: str, name: str, invite: bool, oidc: bool, db: str | None) -> None:
    """Add a team member: asks for their password, or prints an invite link (--invite)."""
    from labeler_storage.accounts import normalize_email

    if invite and oidc:
        raise InputError("--invite and --oidc exclude each other", hint="pick one way for them to sign in.")
    email = normalize_email(email)  # the address and the duplicate are checked before anyone types a password
    store = _store(db)
    if store.accounts.get_user(email) is not None:
        raise InputError(f"{email} is already a user", hint="change their role: labeler users set EMAIL --role ROLE.")
    password = None
    if not invite and not oidc:
        password = click.prompt("Password", hide_input=True, confirmation_prompt=True, err=True)
    user = store.accounts.add_user(email, role, name=name, password=password, by="(cli)")
    click.echo(f"Added {user.email} as {user.role}.")
    if invite:
        _print_invite(store, user.email)


def _print_invite(store, email: str) -> None:
    from labeler.passwords import invite_link

    click.echo(f"Invite link (one use, 7 days): {invite_link(store.accounts.invite(email, by='(cli)'))}")


@users.command("invite")
@click.argument("email")
@_DB
@handle_errors
def users_invite(email: str, db: str | None) -> None:
    """Print a new one-time invite link (set LABELER_PUBLIC_URL to the address people use)."""
    _print_invite(_store(db), email)


@users.command("set")
@click.argument("email")
@click.option("--role", type=click.Choice(ROLES), default=None)
@click.option("--disable/--enable", "disabled", default=None, help="Stop (or allow) their sign-in.")
@_DB
@handle_errors
def users_set(email: str, role: str | None, disabled: bool | None, db: str | None) -> None:
    """Change a user's role, or disable/enable them (their sessions end)."""
    user = _store(db).accounts.update_user(email, role=role, disabled=disabled, by="(cli)")
    click.echo(f"{user.email}: {user.role}{' (disabled)' if user.disabled else ''}.")


@users.command("password")
@click.argument("email")
@_DB
@handle_errors
def users_password(email: str, db: str | None) -> None:
    """Set a user's password (asks for it twice)."""
    password = click.prompt("New password", hide_input=True, confirmation_prompt=True, err=True)
    _store(db).accounts.set_password(email, password, by="(cli)")
    click.echo(f"Password of {email.strip().lower()} set; their sessions ended.")


@users.command("unlock")
@click.argument("email")
@_DB
@handle_errors
def users_unlock(email: str, db: str | None) -> None:
    """End the wait that failed sign-ins put on an address (a new password ends it too)."""
    lifted = _store(db).accounts.unlock(email)
    address = email.strip().lower()
    click.echo(f"Lifted the sign-in wait of {address}." if lifted else f"{address} has no failed sign-ins to forget.")


@users.command("list")
@_DB
@handle_errors
def users_list(db: str | None) -> None:
    """Every user with role and how they sign in."""
    for u in _store(db).accounts.list_users():
        how = "password" if u.has_password else ("invite pending" if u.invite_pending else "oidc")
        click.echo("\t".join([u.email, u.role, how] + (["disabled"] if u.disabled else [])))
