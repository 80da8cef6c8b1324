"""In a team deployment a declared endpoint calls only the hosts the operator lists in
LABELER_SYSTEM_HOSTS, redirects included (real HTTP servers on localhost); the local app calls
what its user declares."""
from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from http_support import send_json

from labeler.errors import InputError
from labeler_app import systems as sy
from labeler_app.access import Actor, Role, local_actor
from labeler_storage.store import open_store

TEAM_ADMIN = Actor("admin@example.org", Role.ADMIN, team=True)
HITS = {"hits": [{"doc_id": "leave-001", "score": 0.9}, {"doc_id": "leave-002", "score": 0.5}]}


class Handler(BaseHTTPRequestHandler):
    """/search answers two hits; /jump redirects to the URL in the server's `target`; counts requests."""

    def do_GET(self) -> None:  # noqa: N802
        self.server.requests += 1
        if self.path.startswith("/jump"):
            self.send_response(302)
            self.send_header("Location", self.server.target)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        send_json(self, HITS)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def servers():
    """Two real servers on 127.0.0.1: (allowed, other); `allowed.target` is where /jump redirects."""
    started = []
    for _ in range(2):
        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.requests, server.target = 0, ""
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        started.append(server)
    yield started
    for server in started:
        server.shutdown()
        server.server_close()


def declaration(port: int, path: str = "search") -> str:
    return (f'name = "acme"\nurl = "http://127.0.0.1:{port}/{path}?q={{query}}"\nmethod = "GET"\nretries = 0\n'
            '[response]\nhits = "hits"\nid = "doc_id"\nscore = "score"\n')


def test_a_team_endpoint_may_call_no_host_until_the_operator_lists_it(servers, tmp_path, monkeypatch):
    allowed, _ = servers
    monkeypatch.delenv(sy.SYSTEM_HOSTS, raising=False)
    with open_store(tmp_path / "labeler.db") as store:
        for attempt in (lambda: sy.save_system(store, TEAM_ADMIN, declaration(allowed.server_port)),
                        lambda: sy.test_query(TEAM_ADMIN, declaration(allowed.server_port), "vacation")):
            with pytest.raises(InputError, match=rf"may not call 127\.0\.0\.1:{allowed.server_port}.*"
                                                 rf"{sy.SYSTEM_HOSTS} \(now: none\)"):
                attempt()
        assert allowed.requests == 0 and not sy.saved_systems(store)

        monkeypatch.setenv(sy.SYSTEM_HOSTS, f" search.example.org, 127.0.0.1:{allowed.server_port} ")
        assert sy.save_system(store, TEAM_ADMIN, declaration(allowed.server_port)) == "acme"
        probe = sy.test_query(TEAM_ADMIN, declaration(allowed.server_port), "vacation")
        assert probe.error is None and [h.doc_id for h in probe.hits] == ["leave-001", "leave-002"]
        with sy.system_for(store, TEAM_ADMIN, "acme") as system:
            assert [h.doc_id for h in system.search("vacation", 10)] == ["leave-001", "leave-002"]
        assert sy.top_documents(sy.saved_systems(store)["acme"]["declaration"], sy.endpoint_hosts(TEAM_ADMIN),
                                "vacation") == ("leave-001", "leave-002")

        monkeypatch.setenv(sy.SYSTEM_HOSTS, "search.example.org")  # the list changed after the system was saved
        with pytest.raises(InputError, match="may not call"):
            sy.system_for(store, TEAM_ADMIN, "acme")


def test_a_listed_host_cannot_redirect_a_team_endpoint_elsewhere(servers, monkeypatch):
    allowed, other = servers
    allowed.target = f"http://127.0.0.1:{other.server_port}/search"
    monkeypatch.setenv(sy.SYSTEM_HOSTS, f"127.0.0.1:{allowed.server_port}")
    probe = sy.test_query(TEAM_ADMIN, declaration(allowed.server_port, "jump"), "vacation")
    assert "127.0.0.1 is not a host this server may call" in probe.error and not probe.hits
    assert allowed.requests == 1 and other.requests == 0  # the redirect was never followed


@pytest.mark.parametrize("url", ["http://127.0.0.1.nip.io/search?q={query}", "http://{query}.example.org/search", "http://${SEARCH_HOST}/search?q={query}",
                                 "http://127.0.0.1:1/search?q={query}"])
def test_a_team_declaration_names_a_listed_host_and_nothing_else(url, servers, monkeypatch):
    monkeypatch.setenv(sy.SYSTEM_HOSTS, f"127.0.0.1:{servers[0].server_port}")
    monkeypatch.setenv(sy.SYSTEM_ENV, "SEARCH_HOST")
    monkeypatch.setenv("SEARCH_HOST", "169.254.169.254")
    text = f'name = "x"\nurl = "{url}"\nmethod = "GET"\n[response]\nhits = "hits"\nid = "doc_id"\n'
    with pytest.raises(InputError, match="may not call") as refused:
        sy.parse_declaration(text, sy.endpoint_hosts(TEAM_ADMIN))
    assert "169.254" not in str(refused.value)  # a host read from the environment is not shown


def test_the_local_app_calls_what_its_user_declares(servers, monkeypatch):
    allowed, other = servers
    allowed.target = f"http://127.0.0.1:{other.server_port}/search"
    monkeypatch.delenv(sy.SYSTEM_HOSTS, raising=False)
    probe = sy.test_query(local_actor("me"), declaration(allowed.server_port, "jump"), "vacation")
    assert probe.error is None and len(probe.hits) == 2 and other.requests == 1
