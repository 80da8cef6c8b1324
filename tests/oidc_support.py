"""Signing in for real in a browser test: Streamlit's own `st.login()` against a local OpenID provider.

The provider is `oidc-provider-mock` (a dev dependency), run as `python -m oidc_provider_mock` in
its own process group on a free 127.0.0.1 port. It accepts any client id and secret (no
registration) and any redirect URI; its authorization page asks only for a subject (`sub`), so
the email and name a test wants are put on the provider first (`PUT /users/<sub>`).

One host everywhere: Streamlit checks that the browser's origin equals the origin of
`redirect_uri`, and the OAuth state lives in a session cookie set on `/auth/login` and read on
`/oauth2callback`. So the browser must open the app at the host the redirect URI names;
`browser_support.AppServer` serves http://127.0.0.1:PORT, hence the default host here.

How a test points an app at these secrets without touching the repo's .streamlit/: write the
TOML to a temporary file and set `STREAMLIT_SECRETS_FILES=<that file>` in the app's environment
(or pass `--secrets.files <file>`). `redirect_uri` may hold the literal `{port}`, which Streamlit
fills in with its own `server.port`, so the secrets can be written before the port is known.
"""
from __future__ import annotations

import json
import os
import re
import secrets
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from browser_support import free_port, wait_ready

DEFAULT_CLIENT_ID = "golden-set-labeler-tests"
DEFAULT_CLIENT_SECRET = "not-a-secret-the-mock-accepts-any"  # noqa: S105 - the mock accepts any secret
AUTHORIZE_PATH = re.compile(r"/oauth2/authorize\?")
END_SESSION_PATH = re.compile(r"/oauth2/end_session\b")


@dataclass(frozen=True)
class OidcProvider:
    """A running mock provider: where it is, and the client credentials the app should use."""

    issuer: str
    client_id: str
    client_secret: str
    log_path: Path

    @property
    def metadata_url(self) -> str:
        return f"{self.issuer}/.well-known/openid-configuration"

    def set_user(self, sub: str, claims: Mapping[str, object]) -> None:
        """Store the claims the provider will put in `sub`'s ID token (replacing earlier ones)."""
        set_provider_user(self.issuer, sub, claims)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-4000:]


def set_provider_user(issuer: str, sub: str, claims: Mapping[str, object]) -> None:
    """`PUT /users/<sub>` on the mock: its authorization form takes only a subject, not claims."""
    url = f"{issuer}/users/{urllib.parse.quote(sub, safe='')}"
    request = urllib.request.Request(url, data=json.dumps(dict(claims)).encode(), method="PUT",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        if response.status != 204:
            raise RuntimeError(f"PUT {url} answered {response.status}: {response.read()[:500]!r}")


@contextmanager
def oidc_provider(*, host: str = "127.0.0.1", log: Path | None = None, client_id: str = DEFAULT_CLIENT_ID,
                  client_secret: str = DEFAULT_CLIENT_SECRET, timeout: float = 30) -> Iterator[OidcProvider]:
    """Run the mock provider on a free port until the block ends; yields once its metadata answers.

    A subprocess rather than the package's in-thread server: it binds the host we name (the
    thread helper binds "localhost", which may resolve to ::1), keeps its log in a file, and
    cannot leak state into the test process.
    """
    port = free_port()
    log_path = log or Path(tempfile.mkstemp(prefix="oidc-provider-", suffix=".log")[1])
    log_path.parent.mkdir(parents=True, exist_ok=True)
    provider = OidcProvider(f"http://{host}:{port}", client_id, client_secret, log_path)
    with open(log_path, "w") as log_file:
        proc = subprocess.Popen(
            [sys.executable, "-m", "oidc_provider_mock", "--host", host, "--port", str(port)],
            stdout=log_file, stderr=subprocess.STDOUT, start_new_session=True,
            env={**os.environ, "NO_COLOR": "1"})
        try:
            _wait_for_metadata(provider, proc, timeout)
            yield provider
        finally:
            _stop_group(proc)


def _wait_for_metadata(provider: OidcProvider, proc: subprocess.Popen, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"oidc-provider-mock exited with {proc.returncode}:\n{provider.log()}")
        try:
            with urllib.request.urlopen(provider.metadata_url, timeout=2) as response:
                if json.load(response).get("issuer") == provider.issuer:
                    return
        except (OSError, ValueError):
            pass
        time.sleep(0.2)
    raise TimeoutError(f"oidc-provider-mock not answering after {timeout}s:\n{provider.log()}")


def _stop_group(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def auth_secrets_toml(provider: OidcProvider, app_port: int | None, *, cookie_secret: str | None = None,
                      app_host: str = "127.0.0.1", provider_name: str | None = None) -> str:
    """The `secrets.toml` text that makes `st.login()` (or `st.login(provider_name)`) use `provider`.

    `app_port=None` writes `{port}`, which Streamlit replaces with its `server.port`. `app_host`
    must be the host the browser uses to open the app (see the module docstring). With
    `provider_name` the client settings go in `[auth.<name>]` (no underscores: Streamlit refuses
    them); without, in `[auth]` itself, which `st.login()` with no argument uses.
    """
    if provider_name is not None and ("_" in provider_name or not provider_name):
        raise ValueError(f"Streamlit refuses provider name {provider_name!r}: use one without underscores")
    port = "{port}" if app_port is None else str(app_port)
    shared = {"redirect_uri": f"http://{app_host}:{port}/oauth2callback",
              "cookie_secret": cookie_secret or secrets.token_urlsafe(32)}
    client = {"client_id": provider.client_id, "client_secret": provider.client_secret,
              "server_metadata_url": provider.metadata_url}
    if provider_name is None:
        return _toml_table("auth", {**shared, **client})
    return _toml_table("auth", shared) + "\n" + _toml_table(f"auth.{provider_name}", client)


def _toml_table(name: str, values: Mapping[str, str]) -> str:
    # json.dumps of a str is a valid TOML basic string (same escapes).
    return f"[{name}]\n" + "".join(f"{key} = {json.dumps(value)}\n" for key, value in values.items())


def write_auth_secrets(path: Path, provider: OidcProvider, app_port: int | None = None, **options) -> Path:
    """Write `auth_secrets_toml(...)` to `path`; point Streamlit at it with STREAMLIT_SECRETS_FILES."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(auth_secrets_toml(provider, app_port, **options), encoding="utf-8")
    return path


def oidc_sign_in(page, *, email: str, name: str = "", sub: str | None = None,
                 extra_claims: Mapping[str, object] | None = None, timeout: float = 60_000) -> None:
    """On the provider's authorization page (after the app's sign-in click), sign in and return to the app.

    `sub` defaults to the email. The claims (`email`, `email_verified` true, `name` when given,
    `extra_claims`, which may override them) are
    stored on the provider for that subject first, replacing any earlier ones. Returns once the
    app is connected and idle again; Streamlit lands the browser on the app's root URL (the
    default page), not on the page that called `st.login()`.
    """
    page.wait_for_url(AUTHORIZE_PATH, timeout=timeout)
    issuer = _origin(page.url)
    subject = sub or email
    claims: dict[str, object] = {"email": email, "email_verified": True, **({"name": name} if name else {}),
                                 **(extra_claims or {})}
    set_provider_user(issuer, subject, claims)
    page.locator("input[name=sub]").fill(subject)
    page.get_by_role("button", name="Authorize", exact=True).click()
    _back_on_app(page, issuer, timeout)


def oidc_sign_out(page, *, timeout: float = 60_000) -> None:
    """After the app's `st.logout()` click: confirm on the provider's end-session page and return to the app.

    Streamlit sends the browser to the provider's `end_session_endpoint` (the mock advertises
    one), which shows an "End session" button; it then comes back through /oauth2callback to
    the app's root URL.
    """
    page.wait_for_url(END_SESSION_PATH, timeout=timeout)
    issuer = _origin(page.url)
    page.get_by_role("button", name="End session", exact=True).click()
    _back_on_app(page, issuer, timeout)


def _origin(url: str) -> str:
    parts = urllib.parse.urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def _back_on_app(page, issuer: str, timeout: float) -> None:
    page.wait_for_url(lambda url: _origin(url) != issuer and "/oauth2callback" not in url, timeout=timeout)
    wait_ready(page, timeout=timeout)
