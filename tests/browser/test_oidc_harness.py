"""The OpenID sign-in harness works end to end: a toy app's `st.login()` against the local mock provider.

Chromium clicks "Log in" -> the provider's authorization page -> signs in as alice ->
the app greets her from `st.user` -> "Log out" -> the provider's end-session page -> the
sign-in button again. The app gets its secrets from a temporary file through
STREAMLIT_SECRETS_FILES, the same route a test of the real app takes.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest
from browser_support import AppServer, browser, free_port, screenshot, wait_ready  # noqa: F401 - browser: a fixture
from oidc_support import (AUTHORIZE_PATH, OidcProvider, auth_secrets_toml, oidc_provider, oidc_sign_in, oidc_sign_out,
                          write_auth_secrets)
from playwright.sync_api import expect

STEP_MS = 60_000

TOY_APP = '''
import json, os
import streamlit as st

provider = os.environ.get("TOY_PROVIDER") or None
if not st.user.is_logged_in:
    st.button("Log in", key="login", on_click=st.login, args=(provider,) if provider else ())
else:
    st.write(f"hello {st.user.email}")
    claims = {k: v for k, v in st.user.to_dict().items() if k != "tokens"}
    st.code(json.dumps(claims, sort_keys=True, default=str), language="json", wrap_lines=True)
    st.button("Log out", key="logout", on_click=st.logout)
'''


class ToyServer(AppServer):
    """AppServer's lifecycle (health wait, log, stop) for a script of our own, run from its folder."""

    def __init__(self, script: Path, *, env: dict[str, str]) -> None:  # noqa: D107 - no super(): it starts the real app
        self.home = script.parent
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = script.parent / "streamlit.log"
        self._log = open(self.log_path, "w")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", script.name, "--server.headless", "true",
             "--server.port", str(self.port), "--server.address", "127.0.0.1",
             "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"],
            cwd=script.parent, env={**os.environ, **env}, stdout=self._log, stderr=subprocess.STDOUT,
            start_new_session=True)


@pytest.fixture(scope="module")
def provider(tmp_path_factory):
    with oidc_provider(log=tmp_path_factory.mktemp("oidc") / "provider.log") as running:
        yield running


def test_auth_secrets_toml_holds_what_streamlit_validates(tmp_path):
    idp = OidcProvider("http://127.0.0.1:9", "cid", "csecret", tmp_path / "unused.log")

    default = tomllib.loads(auth_secrets_toml(idp, 8123, cookie_secret="s3"))["auth"]
    assert default == {"redirect_uri": "http://127.0.0.1:8123/oauth2callback", "cookie_secret": "s3",
                       "client_id": "cid", "client_secret": "csecret",
                       "server_metadata_url": "http://127.0.0.1:9/.well-known/openid-configuration"}
    named = tomllib.loads(auth_secrets_toml(idp, None, provider_name="mock"))["auth"]
    assert named["redirect_uri"] == "http://127.0.0.1:{port}/oauth2callback"  # Streamlit fills in server.port
    assert named["mock"]["client_id"] == "cid" and len(named["cookie_secret"]) >= 32
    with pytest.raises(ValueError, match="underscores"):
        auth_secrets_toml(idp, 1, provider_name="my_idp")


@pytest.mark.browser
@pytest.mark.parametrize("provider_name", [None, "mock"], ids=["default-provider", "named-provider"])
def test_sign_in_and_out_through_the_mock_provider(provider, provider_name, browser, tmp_path):
    script = tmp_path / "toy_app.py"
    script.write_text(TOY_APP, encoding="utf-8")
    secrets_file = write_auth_secrets(tmp_path / "secrets" / "secrets.toml", provider,
                                      provider_name=provider_name)
    server = ToyServer(script, env={"STREAMLIT_SECRETS_FILES": str(secrets_file),
                                    "TOY_PROVIDER": provider_name or ""})
    context = browser.new_context(viewport={"width": 1100, "height": 700})
    page = context.new_page()
    page.set_default_timeout(STEP_MS)
    shot = f"oidc-{provider_name or 'default'}"
    try:
        server.wait_healthy()
        page.goto(server.url)
        wait_ready(page)

        started = time.monotonic()
        page.get_by_role("button", name="Log in").click()
        if provider_name is None:  # once: what the provider's page looks like
            page.wait_for_url(AUTHORIZE_PATH)
            screenshot(page, "oidc-provider-authorize", full_page=False)
        oidc_sign_in(page, email="alice@example.com", name="Alice Example", sub="alice-sub-1")
        expect(page.get_by_text("hello alice@example.com")).to_be_visible()
        print(f"\nsign-in took {time.monotonic() - started:.2f}s")
        claims = json.loads(page.get_by_test_id("stCode").inner_text())
        assert claims["is_logged_in"] is True
        assert (claims["email"], claims["name"], claims["sub"]) == ("alice@example.com", "Alice Example", "alice-sub-1")
        assert claims["iss"] == provider.issuer and provider.client_id in claims["aud"]  # a list with this mock
        assert claims["provider"] == (provider_name or "default")
        print("st.user keys:", sorted(claims))
        screenshot(page, f"{shot}-signed-in")

        started = time.monotonic()
        page.get_by_role("button", name="Log out").click()
        oidc_sign_out(page)
        expect(page.get_by_role("button", name="Log in")).to_be_visible()
        expect(page.get_by_text("hello alice@example.com")).to_have_count(0)
        print(f"sign-out took {time.monotonic() - started:.2f}s")
        screenshot(page, f"{shot}-signed-out")

        page.reload()  # the identity cookie is gone, not just this session's copy
        wait_ready(page)
        expect(page.get_by_role("button", name="Log in")).to_be_visible()
    except Exception:
        screenshot(page, f"FAILED-{shot}")
        print(server.log(), provider.log(), sep="\n---- provider\n")
        raise
    finally:
        context.close()
        server.stop()
