"""Scoring your own system from the app and the CLI, against a real `labeler serve`-style server on
localhost (labeler_edge.serve in this process, over the real model and FAISS): declare, test-query,
save, score, judge the holes, score again; the CLI's --system gives the built-in pipeline's numbers."""
from __future__ import annotations

import json
import shutil
import threading
import time

import pytest
from click.testing import CliRunner

from labeler_app import systems as sy
from labeler_app.access import local_actor
from labeler_app.background import Pending
from browser_support import app_home, grade_control, open_app, sample_embeddings, submit_question, texts  # noqa: F401 - fixtures
from labeler.config import RunConfig
from labeler.errors import LabelerError
from labeler.paths import SAMPLE_CORPUS
from labeler_edge.cli import cli
from labeler_edge.serve import make_server, open_service
from labeler_storage.store import open_store

PAGE = "../pages/evaluate.py"
ADMIN = local_actor("admin")


@pytest.fixture(scope="module")
def endpoint(sample_embeddings):
    """The sample corpus's default pipeline served over HTTP on a free port; its declaration."""
    service = open_service(SAMPLE_CORPUS, RunConfig(), cache_root=sample_embeddings)
    server = make_server(service, port=0)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    yield (f'name = "served"\nurl = "http://127.0.0.1:{server.server_port}/search"\n'
           '[body]\nquery = "{query}"\nk = "{k}"\n[response]\nhits = "hits"\nid = "doc_id"\nscore = "score"\n')
    server.shutdown()
    server.server_close()
    service.close()


@pytest.mark.parametrize("text, message", [
    ('name = "x"\nurl = "https://elsewhere.test/?q={query}&t=${DATABASE_PASSWORD}"\n[response]\nhits = "h"\nid = "i"\n',
     "reads environment variable\\(s\\) DATABASE_PASSWORD, which the server does not offer"),
    ('name = "x"\nurl = "https://e.test/?q={query}"\n[headers]\nAuthorization = "Bearer abc123"\n'
     '[response]\nhits = "h"\nid = "i"\n', "a secret is written in plain text \\(header Authorization\\)"),
    ('kind = "python"\ntarget = "os:system"\n', "the app declares HTTP endpoints only"),
    ('name = "x"\nurl = "https://e.test/"\n[response]\nhits = "h"\nid = "i"\n', "\\{query\\}"),
    ('name = x', "not valid TOML"),
])
def test_a_declaration_in_the_app_cannot_read_secrets_or_run_code(text, message):
    with pytest.raises(LabelerError, match=message):
        sy.parse_declaration(text)


TOKEN_DECLARATION = ('name = "acme"\nurl = "https://e.test/?q={query}"\n[headers]\n'
                     'Authorization = "Bearer ${SEARCH_TOKEN}"\n[response]\nhits = "h"\nid = "i"\n')


def test_env_references_listed_by_the_operator_are_allowed_and_never_stored_resolved(monkeypatch, tmp_path):
    monkeypatch.setenv(sy.SYSTEM_ENV, "SEARCH_TOKEN")
    monkeypatch.setenv("SEARCH_TOKEN", "s3cret")
    with open_store(tmp_path / "labeler.db") as store:
        assert sy.save_system(store, ADMIN, TOKEN_DECLARATION) == "acme"
        stored = json.dumps(store.accounts.settings()["systems"])
        assert "${SEARCH_TOKEN}" in stored and "s3cret" not in stored


def test_cli_eval_system_scores_the_served_pipeline_like_the_builtin_one(endpoint, sample_embeddings, tmp_path,
                                                                         monkeypatch):
    home = tmp_path / "home"
    shutil.copytree(sample_embeddings, home / "cache")
    monkeypatch.setenv("LABELER_HOME", str(home))
    declaration = tmp_path / "served.toml"
    declaration.write_text(endpoint)
    golden = SAMPLE_CORPUS / "golden.jsonl"
    runner = CliRunner()
    builtin = runner.invoke(cli, ["eval", str(SAMPLE_CORPUS), str(golden), "--json"])
    served = runner.invoke(cli, ["eval", str(SAMPLE_CORPUS), str(golden), "--json", "--system", str(declaration)])
    assert builtin.exit_code == 0 and served.exit_code == 0, (builtin.output, served.output)
    a, b = json.loads(builtin.stdout), json.loads(served.stdout)
    assert b["system"]["kind"] == "http" and b["settings"]["failed"] == {}
    for name in ("ndcg@10", "recall@10", "mrr@10", "judged@10"):
        assert b["metrics"][name] == pytest.approx(a["metrics"][name], abs=1e-9), name


def test_evaluate_page_declares_tests_saves_and_scores_an_endpoint_then_the_holes_close(app_home, endpoint):
    from labeler_app.access import local_actor as actor
    from conftest import import_demo
    from labeler.corpus import load_corpus

    import_demo(open_store())
    at = open_app(PAGE, annotator="asha")
    at.segmented_control(key="system_kind").set_value("HTTP endpoint").run()
    at.text_area(key="system_text_(new declaration)").input(endpoint).run()
    at.text_input(key="system_question").input("How many vacation days do I get?").run()
    at.button(key="system-test").click().run()
    assert not at.exception, at.exception
    assert any(c.startswith("HTTP 200 in ") and "hits mapped" in c for c in texts(at.caption))
    at.button(key="system-save").click().run()
    assert any("Saved system 'served'" in m for m in texts(at.success))
    assert at.selectbox(key="system_pick").value == "served"
    at.button(key="system-run").click().run()
    assert not at.exception, at.exception
    store = open_store()
    [run] = store.runs.list()
    assert any("system served &#40;http" in c.value for c in at.caption)  # inert markup of "served (http"
    first = run.summary["metrics"]["judged@10"]
    # Judge one hole of this run on the Label page, then score the endpoint again.
    from labeler_app.holes import find_holes

    holes = find_holes(store, run.run_id)
    qid, [(doc_id, rank), *_] = next(iter(holes.by_question.items()))
    store.judgments.set(qid, doc_id, 0, annotator="asha")
    at.button(key="system-run").click().run()
    assert store.runs.list()[0].summary["metrics"]["judged@10"] > first


def test_label_page_pools_candidates_from_a_saved_system_too(app_home, endpoint):
    store = open_store()
    sy.save_system(store, ADMIN, endpoint.replace('name = "served"', 'name = "acme"'))
    at = open_app(annotator="asha")
    submit_question(at, "How many vacation days do I get?")
    at.selectbox(key="extra_system").set_value("acme").run()
    assert not at.exception, at.exception
    badges = " ".join(m.value for m in at.markdown)
    assert "acme #1" in badges and "dense #1" in badges  # the served pipeline agrees with the built-in one
    sy.delete_system(store, ADMIN, "acme")
    at.run()  # picked, then deleted: no longer offered, and the pool is dense and BM25 again
    assert not at.exception and "acme #" not in " ".join(m.value for m in at.markdown)


def test_an_uploaded_run_lists_every_bad_line_on_the_page(tmp_path):
    """The Evaluate page's upload uses the CLI's parser and shows every bad line, not the first."""
    from html import unescape

    from labeler.errors import RunFormatError
    from labeler.golden import GoldenSet
    from labeler_pages._common import said

    data = b"q-0001 Q0 leave-001 1 0.9 t\nq-0001 Q0 leave-002 2 high t\nq-0001 Q0 \xff 3 0.1 t\nshort\n"
    with pytest.raises(RunFormatError) as info:
        sy.uploaded_run("mine.trec", data, GoldenSet([]))
    shown = [unescape(line) for line in said(info.value).split("  \n")]  # said() writes the lines inert
    assert shown[:3] == ["mine.trec:2: score 'high' is not a number", "mine.trec:3: not UTF-8 text",
                         "mine.trec:4: expected 6 fields (query_id Q0 doc_id rank score tag), found 1"]
    assert shown[3].startswith("3 bad lines; nothing was scored. Hint:")


class SlowSystem:
    """A search endpoint on localhost that answers `leave-001` first, after `delay` seconds."""

    def __init__(self, delay: float) -> None:
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                time.sleep(delay)
                data = json.dumps({"hits": [{"doc_id": "leave-001", "score": 1.0}]}).encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        self.text = (f'name = "slowpoke"\nurl = "http://127.0.0.1:{self.server.server_port}/s?q={{query}}&k={{k}}"\n'
                     'method = "GET"\n[response]\nhits = "hits"\nid = "doc_id"\nscore = "score"\n')

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_pooled_ranking_answers_pending_at_once_then_the_ranking_when_ready():
    slow = SlowSystem(delay=1.5)
    try:
        declaration = sy.parse_declaration(slow.text)
        t0 = time.monotonic()
        first = sy.pooled_ranking(declaration, None, "a question", 10, wait=0.2)
        assert isinstance(first, Pending) and time.monotonic() - t0 < 1.0  # not the 1.5 s the system takes
        while isinstance(ranking := sy.pooled_ranking(declaration, None, "a question", 10), Pending):
            assert time.monotonic() - t0 < 10
            time.sleep(0.1)
        assert ranking == ("leave-001",) and time.monotonic() - t0 >= 1.4
        t1 = time.monotonic()
        assert sy.pooled_ranking(declaration, None, "a question", 10) == ("leave-001",)  # kept: not asked again
        assert time.monotonic() - t1 < 0.5
    finally:
        slow.close()


def test_label_page_judges_while_a_pooled_system_is_slow_and_its_candidates_join_later(app_home):
    slow = SlowSystem(delay=3)
    try:
        sy.save_system(open_store(), ADMIN, slow.text)
        at = open_app(annotator="asha")
        submit_question(at, "How many vacation days do I get?")
        t0 = time.monotonic()
        at.selectbox(key="extra_system").set_value("slowpoke").run()
        assert not at.exception, at.exception
        assert time.monotonic() - t0 < 2.8  # the page did not wait for the system's 3 s
        assert any("slowpoke is slow: its candidates join when ready" in m for m in texts(at.info))
        grade_control(at, "cand-0").set_value(2).run()  # judging goes on meanwhile
        assert not at.exception, at.exception
        assert any(q.relevance for q in open_store().golden.export())  # the grade was saved
        while "slowpoke #1" not in " ".join(m.value for m in at.markdown):  # the note's fragment reruns the page
            assert time.monotonic() - t0 < 15, texts(at.info)
            time.sleep(0.5)
            at.run()
        assert not any("is slow" in m for m in texts(at.info))
    finally:
        slow.close()


def test_a_saved_system_reading_a_variable_no_longer_offered_is_refused_when_used(monkeypatch, tmp_path):
    from labeler.errors import InputError

    monkeypatch.setenv(sy.SYSTEM_ENV, "SEARCH_TOKEN")
    monkeypatch.setenv("SEARCH_TOKEN", "s3cret")
    with open_store(tmp_path / "labeler.db") as store:
        sy.save_system(store, ADMIN, TOKEN_DECLARATION)
        sy.system_for(store, ADMIN, "acme").close()  # offered: it can be used
        monkeypatch.setenv(sy.SYSTEM_ENV, "OTHER")  # the operator narrowed the list since it was saved
        for use in (lambda: sy.system_for(store, ADMIN, "acme"),
                    lambda: sy.top_documents(store.accounts.settings()["systems"]["acme"]["declaration"], None, "q?")):
            with pytest.raises(InputError, match="SEARCH_TOKEN"):
                use()
