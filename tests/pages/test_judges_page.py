"""AppTest: the Judges page against the real rule server on localhost (tests/openai_support.py, an
OpenAI-compatible server answering from word overlap, not a language model): declare a judge, test it
on one pair, save it, grade the pairs people graded and a run's holes, read the confusion matrix, the
gate's verdict and the run's numbers beside the human-only ones."""
from __future__ import annotations

from browser_support import app_home, open_app, sample_embeddings, texts  # noqa: F401 - fixtures

from judges_support import N_HOLES, N_QUESTIONS, demo_with_run
from openai_support import rule_server
from labeler_storage.store import open_store

PAGE = "../pages/judges.py"
NEW = "judge_text_(new judge)"


def _frame(at, column: str):
    """The page's table with this column."""
    return next(d.value for d in at.dataframe if column in d.value.columns)


def test_judges_page_declares_tests_saves_grades_and_shows_the_confusion_matrix(app_home):
    run_id = demo_with_run()
    people = sorted((j.query_id, j.doc_id, j.grade, j.annotator) for j in open_store().judgments.list())
    with rule_server() as server:
        at = open_app(PAGE)
        at.text_area(key=NEW).input(f'name = "rule"\nkind = "openai"\nmodel = "rule-1"\nurl = "{server.url}"\n'
                                    "concurrency = 1\n").run()
        at.button(key="judge-test").click().run()
        assert not at.exception, at.exception
        assert any(m.startswith("Grade ") and "rule-1" in m for m in texts(at.success)), texts(at.error)
        assert len(server.requests) == 1 and open_store().machine.grades() == []  # a test stores nothing
        at.button(key="judge-save").click().run()
        assert not at.exception, at.exception
        assert "rule" in open_store().machine.judge_specs()
        assert any("Saved judge 'rule'" in m for m in texts(at.success))
        at.button(key="judge-judged").click().run()
        assert not at.exception, at.exception
        assert any("pairs graded" in m for m in texts(at.success)), texts(at.warning) + texts(at.error)
        confusion = _frame(at, "machine 3")
        golden = open_store().golden.export()
        human = [g for q in golden.queries if not q.unanswerable for g in q.relevance.values()]
        assert int(confusion.to_numpy().sum()) == len(human)  # every pair people graded, once
        assert [int(confusion.loc[g].sum()) for g in range(4)] == [human.count(g) for g in range(4)]
        # word overlap is a poor judge of the demo set: the default bars refuse it, and it fills nothing
        assert any("below the team's bars" in w and "binarized kappa" in w for w in texts(at.warning))
        assert _frame(at, "human + machine")["human + machine"].isna().all()
        at.button(key="judge-holes").click().run()
        assert not at.exception, at.exception
        assert any(f"{N_QUESTIONS * N_HOLES} pairs graded" in m for m in texts(at.success)), texts(at.warning) + texts(at.error)
        counts = _frame(at, "stale")
        assert list(counts["judge"]) == ["rule"] and int(counts["grades"][0]) == len(human) + N_QUESTIONS * N_HOLES
        assert len(open_store().machine.grades(judge="rule")) == len(human) + N_QUESTIONS * N_HOLES
        assert list(_frame(at, "human only")["metric"])[:2] == ["recall@1", "recall@3"]
        # bars the admin lowers let it fill the holes: both numbers show, and the filled ones save as a run
        at.number_input(key="bar_kappa").set_value(-1.0)
        at.button(key="FormSubmitter:judge_bars_form-Save the bars").click().run()
        assert not at.exception, at.exception
        assert any(m.startswith("passes the team's bars") for m in texts(at.success)), texts(at.warning)
        assert _frame(at, "human + machine")["human + machine"].notna().all()
        split = _frame(at, "judged@k by the judge")  # judged@k split: people's share and the judge's
        assert list(split["k"]) == [1, 3, 5, 10] and split["judged@k by the judge"].sum() > 0
        at.button(key="judged-save").click().run()
        assert any(f"Saved as run #{run_id + 1}" in m for m in texts(at.success)), texts(at.error)
        assert open_store().runs.load(run_id + 1).summary["settings"]["machine"]["calibration"]["judge"] == "rule"
    assert sorted((j.query_id, j.doc_id, j.grade, j.annotator) for j in open_store().judgments.list()) == people
    assert at.selectbox(key="judge_run").value == run_id


def _page_text(at) -> str:
    """Everything the page sent to the browser: every element's message, widgets' values and tables included."""
    out = []

    def walk(node) -> None:
        if getattr(node, "proto", None) is not None:
            out.append(str(node.proto))
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at._tree)
    return "\n".join(out)


def test_judges_page_never_shows_a_judge_s_key(app_home, monkeypatch):
    token = "sk-audit-page-Key-5150"
    monkeypatch.setenv("JUDGE_KEY", token)
    monkeypatch.setenv("LABELER_SYSTEM_ENV", "JUDGE_KEY")
    demo_with_run()
    with rule_server() as server:
        server.token = token
        at = open_app(PAGE)
        at.text_area(key=NEW).input(f'name = "keyed"\nkind = "openai"\nmodel = "rule-1"\nurl = "{server.url}"\n'
                                    'retries = 0\n[headers]\nAuthorization = "Bearer ${JUDGE_KEY}"\n').run()
        server.script = ["echo_auth"]
        at.button(key="judge-test").click().run()
        assert not at.exception, at.exception
        assert any("No grade" in m and "***" in m for m in texts(at.error)), texts(at.error)
        at.button(key="judge-test").click().run()  # the key accepted: a grade
        assert any(m.startswith("Grade ") for m in texts(at.success)), texts(at.error)
        at.button(key="judge-save").click().run()
        at.button(key="judge-judged").click().run()
        assert not at.exception, at.exception
        assert any("pairs graded" in m for m in texts(at.success)), texts(at.error)
        assert all(r["headers"]["Authorization"] == f"Bearer {token}" for r in server.requests)
        assert "${JUDGE_KEY}" in _page_text(at) and token not in _page_text(at)
