"""No string from a file, a user or a server reaches the browser as markup (Issue 20, items 2 and 11).

A team database whose every field holds a hostile value (ids, question text, type and notes, a
document's id, title, text and metadata, annotator and user names, run and system names, an
adjudication note, the admin's own address) is shown on every page to its admin; every string
Streamlit renders as Markdown (bodies, captions, alerts, headings, labels, tooltips, metrics) must
hold those values only escaped: no tag but the few the app writes itself, no `![`/`](`, no
directive, emoji shortcode, KaTeX or line-start syntax from data. The same database in Chromium:
tests/browser/test_browser_hostile.py.
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from labeler_app import systems as sy
from labeler_app.access import Actor, Role
from conftest import REPO
from labeler.corpus import parse_jsonl_corpus
from labeler_pages._cards import KEYS_GATE
from labeler_storage import open_store

PASSWORD = "a long enough password"
LOOPBACK = "http://127.0.0.1:9"  # nothing listens on the discard port: a request there is the leak to look for

# Ids hold no whitespace (the id policy); each is markup in its own way (`<img/src="x"/onerror=...>`:
# after a quoted value a slash separates attributes as a space would).
Q_CDATA = "qcdifr`<![CDATA[x><iframe/srcdoc=&lt;script&gt;parent.__xss='cdata-iframe'&lt;/script&gt;>]]>"
Q_PI = "qpi`<?x><img/src=\"x\"/onerror=parent.__xss='pi'>?>"
D_STYLE = f"dstyle`<style>*{{background:url({LOOPBACK}/style-id)}}</style>"
D_LINK = f"dlink[x](javascript:parent.__xss='link')![i]({LOOPBACK}/md-image-id)"
D_DIRECTIVE = "ddir$\\alpha$:smile::material/bolt::red[xss]"
D_EDITED = "dedit<img/src=\"x\"/onerror=parent.__xss='edited'>"
DOC_IDS = (D_STYLE, D_LINK, D_DIRECTIVE, D_EDITED)


def prose(where: str) -> str:
    """A free-text value: every kind of markup at once, led by line-start syntax."""
    return (f"# xss {where} <script>parent.__xss='{where}'</script> <img src=x onerror=\"parent.__xss='{where}'\"> "
            f"![i]({LOOPBACK}/{where}.png) [link](javascript:parent.__xss='{where}') $\\alpha$ $$x$$ :smile: "
            f":material/bolt: :red[red] <style>@import url({LOOPBACK}/{where}.css)</style> "
            f"<iframe srcdoc=\"<script>parent.__xss='{where}'</script>\"></iframe> www.example.com **b** `c`")


ADMIN = f"boss`<svg/onload=parent.__xss='admin'>@example.org"
ANN_A = "<img/src=\"x\"/onerror=parent.__xss='ann-a'>@example.org"  # as stored by an import or an OIDC sign-in
ANN_B = f"![b]({LOOPBACK}/ann-b.png)@example.org"
VOTER = ":red[voter]$x$@example.org"
RUN_A = f"run-a<img/src=x/onerror=parent.__xss='run'>![r]({LOOPBACK}/run.png)"
RUN_B = "run-b<?x><svg/onload=parent.__xss='run-b'>?>"
SYSTEM = f"sys<img src=x onerror=parent.__xss='system'>![s]({LOOPBACK}/system.png)"
JUDGE = f"judge<img/src=x/onerror=parent.__xss='judge'>![j]({LOOPBACK}/judge.png)"


@dataclass(frozen=True)
class Hostile:
    store: object
    corpus_path: Path


def _corpus_lines(edited: bool) -> str:
    docs = [{"doc_id": d, "title": prose(f"title-{i}"), "text": prose(f"text-{i}") + " vacation days policy",
             "metadata": {prose(f"key-{i}")[:60]: prose(f"value-{i}")}} for i, d in enumerate(DOC_IDS)]
    if edited:
        docs[-1]["text"] = "Rewritten: " + docs[-1]["text"]
    return "".join(json.dumps(d, ensure_ascii=False) + "\n" for d in docs)


def build_hostile(folder: Path) -> Hostile:
    """The team database of $LABELER_HOME and the corpus in `folder`, every field hostile.
    The corpus on disk is a newer version than the one recorded, so the admin has a grade to re-check."""
    folder.mkdir(parents=True, exist_ok=True)
    corpus_path = folder / "hostile.jsonl"
    v1 = parse_jsonl_corpus(_corpus_lines(edited=False), source="hostile.jsonl")
    corpus_path.write_text(_corpus_lines(edited=True), encoding="utf-8")
    store = open_store()
    store.accounts.add_user(ADMIN, "admin", name=prose("admin-name"), password=PASSWORD)
    store.accounts.add_user(ANN_A, "annotator", name=prose("ann-name"), password=PASSWORD)
    store.accounts.set_setting("blind", False, by=ADMIN)  # others' names and grades show on the Label page
    store.collections.ensure(corpus_path=str(corpus_path), corpus=v1, by=ADMIN)
    for qid in (Q_CDATA, Q_PI):
        store.questions.add(prose(f"question-{qid[:3]}"), query_id=qid, query_type=prose("type")[:80],
                           notes=prose("notes"), author=ANN_A)
    for qid in (Q_CDATA, Q_PI):
        store.judgments.set(qid, D_STYLE, 3, annotator=ANN_A)  # a dispute: 3 against 0
        store.judgments.set(qid, D_STYLE, 0, annotator=ANN_B)
        store.judgments.set(qid, D_LINK, 1, annotator=ANN_A)
        store.judgments.set(qid, D_LINK, 2, annotator=ANN_B)
    store.judgments.set(Q_CDATA, D_EDITED, 2, annotator=ADMIN, doc=v1.get(D_EDITED))  # stale once v2 is read
    store.questions.set_unanswerable(Q_PI, True, by=VOTER)
    store.judgments.adjudicate(Q_PI, D_STYLE, 1, by=ADMIN, note=prose("adjudication-note"))
    local = Actor(ADMIN, Role.ADMIN, team=False)  # the local app: any host, so the declaration saves
    sy.save_system(store, local, sy.EXAMPLE.replace('name = "labeler-serve"', f"name = {json.dumps(SYSTEM)}")
                   .replace("http://127.0.0.1:8000/search", f"{LOOPBACK}/search"))
    store.machine.save_judge(JUDGE, {"name": JUDGE, "kind": "embedding", "model": prose("judge-model")[:80],
                             "thresholds": [0.2, 0.35, 0.5]}, by=ADMIN)
    store.machine.save_grades([dict(query_id=q, doc_id=d, grade=g, judge=JUDGE, model=prose("judge-model")[:80],
                                    prompt_hash="sha256:" + hashlib.sha256(b"").hexdigest(), params={},
                                    doc_hash=v1.get(d).content_hash, raw=prose("raw"), rationale=prose("why"), at="t")
                               for q in (Q_CDATA, Q_PI) for d, g in ((D_STYLE, 1), (D_LINK, 2), (D_DIRECTIVE, 3))])
    golden = store.golden.export()
    for name, order in ((RUN_A, DOC_IDS), (RUN_B, DOC_IDS[::-1])):
        run = "".join(f"{q} Q0 {d} {r} {10 - r} {name[:5]}\n" for q in (Q_CDATA, Q_PI)
                      for r, d in enumerate(order, start=1)).encode()
        sy.run_system(store, local, sy.uploaded_run(name, run, golden), v1, k=1000, name=name,
                      corpus_path=str(corpus_path))
    return Hostile(store, corpus_path)


# --------------------------------------------------------------------------- what Streamlit renders as Markdown

# Proto fields that Streamlit renders as Markdown, by proto type (a widget's label and help, an
# alert's body, ...); st.text, st.code, data frames and select-box options are plain text.
_MARKDOWN_FIELDS = {"body", "label", "help", "delta", "text", "content", "caption"}
# st.html is given constants only (pages/_keyboard.py), never data.
_PLAIN_PROTOS = {"Text", "Code", "Arrow", "Json", "Exception", "Html"}
OUR_TAGS = {"<mark>", "</mark>", "<small>", "</small>", "<code>", "</code>", "<details>", "</details>",
            "<summary>", "</summary>", "<br>"}
_TAG = re.compile(r"<[/!?]?[A-Za-z!?][^>]*>?")
_LINE_SYNTAX = re.compile(r"^ {0,3}(#{1,6}(\s|$)|>|[-+*]\s|\d{1,9}[.)]\s)", re.MULTILINE)
_DATA_SYNTAX = ("![", "](", "javascript:", ":smile:", ":material/bolt:", ":red[", "$\\alpha$", "$$x$$", "www.example",
                "<![CDATA[", "<?", "<!--", "&lt;", "**b**")


def _strings(message, out: list[str]) -> None:
    """Every Markdown-rendered string of a proto message, nested ones included."""
    kind = message.DESCRIPTOR.name
    if kind in _PLAIN_PROTOS:
        return
    for field, value in message.ListFields():
        many = field.is_repeated
        if field.message_type is not None:
            for item in (value if many else [value]):
                _strings(item, out)
        elif field.type == field.TYPE_STRING and field.name in _MARKDOWN_FIELDS:
            out.extend(value if many else [value])
        elif kind == "Radio" and field.name == "options":
            out.extend(value)


def rendered_markdown(at: AppTest) -> list[str]:
    """The Markdown source of everything on the page (main area and sidebar)."""
    out: list[str] = []

    def walk(node) -> None:
        proto = getattr(node, "proto", None)
        if proto is not None:
            _strings(proto, out)
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at._tree)
    return [s for s in out if s]


def without_code_spans(markdown: str) -> str:
    """`markdown` with its CommonMark code spans taken out (inside one, nothing is markup): a backtick
    run opens a span that the next run of the same length closes."""
    out, i = [], 0
    while i < len(markdown):
        if markdown[i] != "`":
            out.append(markdown[i])
            i += 1
            continue
        run = len(markdown[i:]) - len(markdown[i:].lstrip("`"))
        close = re.compile(rf"(?<!`)`{{{run}}}(?!`)").search(markdown, i + run)
        if close is None:
            out.append(markdown[i:i + run])  # no closing run: literal backticks
            i += run
        else:
            i = close.end()
    return "".join(out)


def live_markup(markdown: str) -> list[str]:
    """What in `markdown` would be markup the app did not write: foreign tags, links, images,
    directives, math, line-start syntax."""
    text = without_code_spans(markdown)
    found = [t for t in _TAG.findall(text) if t not in OUR_TAGS]
    found += [s for s in _DATA_SYNTAX if s in text]
    found += [m.group(0) for m in _LINE_SYNTAX.finditer(text)]
    return found


def test_live_markup_finds_the_probes_payloads_and_passes_the_apps_own_markup():
    from labeler.status import Status
    from labeler_app.label import STATUS_BADGES
    from labeler_app.text import highlight_markup, inert, inert_code

    assert live_markup(f"{STATUS_BADGES[Status.NEW]} · `{Q_CDATA}`")  # the status line before the fix
    assert live_markup(f"**x** · `{D_STYLE}`") and live_markup(prose("p"))
    for value in (Q_CDATA, Q_PI, *DOC_IDS, prose("p"), ADMIN, RUN_A, RUN_B, SYSTEM):
        assert live_markup(inert(value)) == [] and live_markup(f"Signed in as {inert_code(value)}") == []
        assert live_markup(f"<small><code>{inert(value)}</code></small>" + highlight_markup(value, ["xss"])) == []


# Where raw HTML may be written at all, audited: the candidate card (every data piece through inert or
# highlight_markup, only the tags of OUR_TAGS) and the keyboard's focus mark and key queue (constants
# and integers). A new one needs the same audit before it joins this list.
RAW_HTML_AUDITED = {("pages/_cards.py", "unsafe_allow_html=True"): 1, ("pages/_keyboard.py", "st.html("): 3,
                    # the Evaluate page's scroll to its results: a constant selector and a counter
                    ("pages/_eval_results.py", "st.html("): 1, ("pages/_eval_results.py", "unsafe_allow_javascript"): 1,
                    # the navigation to the session-cookie routes: a constant script, a route path from the
                    # server's config and a code the server minted (URL-safe), each a JSON string literal
                    ("pages/_session_cookie.py", "st.html("): 1, ("pages/_session_cookie.py", "unsafe_allow_javascript"): 1}


def test_raw_html_is_written_only_where_it_was_audited():
    found = {}
    for folder in ("pages", "app", "labeler", "storage", "edge"):
        for path in sorted((REPO / folder).rglob("*.py")):
            source = path.read_text(encoding="utf-8")
            for needle in ("unsafe_allow_html=True", "st.html(", "components.html(", "unsafe_allow_javascript"):
                if n := source.count(needle):
                    found[(path.relative_to(REPO).as_posix(), needle)] = n
    found.pop(("pages/_keyboard.py", "unsafe_allow_javascript"), None)  # the key queue's script, a constant
    assert found == RAW_HTML_AUDITED


# --------------------------------------------------------------------------- every page, as the admin

PAGES = ("../pages/label.py", "../pages/corpus.py", "../pages/golden_set.py", "../pages/evaluate.py", "../pages/compare.py",
         "../pages/adjudicate.py", "../pages/team.py", "../pages/judges.py")


@pytest.fixture
def hostile(tmp_path, monkeypatch):
    """The hostile team database in this test's LABELER_HOME (its own small corpus: no sample embeddings)."""
    import streamlit as st

    monkeypatch.setenv("LABELER_TEAM", "1")
    monkeypatch.delenv("LABELER_CORPUS", raising=False)
    st.cache_resource.clear()  # process-wide: no other test's store or corpus
    st.cache_data.clear()
    yield build_hostile(tmp_path / "corpora")
    st.cache_resource.clear()
    st.cache_data.clear()


def _check(at: AppTest, where: str, seen: dict[str, list[str]]) -> None:
    assert not at.exception, (where, at.exception)
    shown = [s.replace(KEYS_GATE, "") for s in rendered_markdown(at)]  # the cards' one constant <style>
    bad = {s[:120]: live_markup(s) for s in shown if live_markup(s)}
    assert not bad, (where, bad)
    seen.setdefault(where, []).extend(s for s in shown if "xss" in s)


def test_every_page_shows_hostile_values_only_escaped(hostile):
    at = AppTest.from_file(str(REPO / "edge" / "streamlit_app.py"), default_timeout=300)
    at.query_params["q"] = Q_CDATA
    at.run()
    at.text_input(key="sign_in_email").input(ADMIN)
    at.text_input(key="sign_in_password").input(PASSWORD)
    at.button(key="FormSubmitter:sign-in-Sign in").click().run()
    seen: dict[str, list[str]] = {}
    _check(at, "label", seen)
    at.button(key="recheck-toggle").click().run()  # the Re-check queue, with the edited document's texts
    assert [b for b in at.button if b.key.startswith("recheck-") and b.key.endswith("-confirm")]
    _check(at, "label re-check queue", seen)
    at.text_input(key="keyword").input("vacation").run()  # search hits: more cards
    _check(at, "label search", seen)
    at.selectbox(key="q").set_value(Q_PI).run()  # unanswerable votes, an adjudicated document
    _check(at, "label other question", seen)
    at.session_state["extra_system"] = SYSTEM  # pooling from the saved system, which does not answer
    at.run()
    _check(at, "label with a system", seen)

    at.switch_page("../pages/corpus.py").run()
    _check(at, "corpus", seen)
    at.selectbox(key="browse_doc").set_value(D_STYLE).run()
    at.selectbox(key="version_pick").set_value(2).run()
    _check(at, "corpus reader and versions", seen)

    at.switch_page("../pages/golden_set.py").run()
    _check(at, "golden set", seen)
    at.selectbox(key="golden_edit_id").set_value(Q_CDATA).run()
    at.button(key="delete-question").click().run()
    _check(at, "golden set delete", seen)

    at.switch_page("../pages/evaluate.py").run()
    _check(at, "evaluate", seen)
    at.segmented_control(key="system_kind").set_value("HTTP endpoint").run()
    _check(at, "evaluate endpoint", seen)

    at.switch_page("../pages/compare.py").run()
    _check(at, "compare", seen)
    at.switch_page("../pages/adjudicate.py").run()
    _check(at, "adjudicate", seen)
    at.switch_page("../pages/team.py").run()
    at.selectbox(key="edit_user").set_value(ANN_A).run()
    at.button(key="save-role").click().run()
    _check(at, "team", seen)
    at.switch_page("../pages/judges.py").run()
    _check(at, "judges", seen)

    # The values did reach each page (escaped): a check of pages without them would prove nothing.
    for where in ("label", "label search", "label other question", "corpus reader and versions", "golden set",
                  "evaluate", "compare", "team", "judges"):
        assert seen.get(where), where
