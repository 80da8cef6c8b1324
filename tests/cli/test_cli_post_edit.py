"""`labeler calibrate COLLECTION --judge NAME --json` carries `post_edit`: what annotators did with the saved
judge's suggestions on the Label page (issue 23, item 5), on a real SQLite store."""
from __future__ import annotations

import json

from click.testing import CliRunner

from conftest import sqlite_only
from labeler.corpus import Corpus, Document
from labeler_app import judges as J
from labeler_app import label as lb
from labeler_app import suggestions as sg
from labeler_app.access import Actor, Role, local_actor
from labeler_edge.cli import cli
from labeler_storage import open_store

CORPUS = Corpus([Document(f"d{i}", f"Title {i}", f"text {i}") for i in range(3)])
ASHA = Actor("asha", Role.ANNOTATOR, team=True)


@sqlite_only
def test_cli_calibrate_json_gives_the_saved_judges_post_edit_figures(db_url):
    with open_store(db_url) as s:
        qid = s.questions.add("Which?", author="boss").query_id
        J.declare_judge(s, local_actor("boss"), 'name = "emb"\nkind = "embedding"\nthresholds = [0.2, 0.35, 0.5]\n')
        spec = J.saved_judge(s, "emb")
        s.machine.save_grades([dict(query_id=qid, doc_id=d, grade=g, judge="emb", prompt_hash=spec.prompt_hash,
                                    at="2026-01-01T00:00:00Z") for d, g in (("d0", 2), ("d1", 1), ("d2", 0))])
        s.accounts.set_setting("suggestions", "before", by="boss")
        views = {v.doc_id: v for v in sg.with_suggestions(
            [lb.CandidateView(d, d, "", "", {}, (), None) for d in ("d0", "d1", "d2")],
            sg.question_suggestions(s, qid), ASHA)}
        for doc, grade in (("d0", 2), ("d1", 3), ("d2", 0)):  # kept, changed up, kept
            lb.grade(s, ASHA, qid, doc, grade, CORPUS, shown=views[doc])
    result = CliRunner().invoke(cli, ["calibrate", "default", "--judge", "emb", "--db", db_url, "--json",
                                      "--bootstrap", "0"])
    assert result.exit_code == 0, result.output
    got = json.loads(result.output)["post_edit"]
    assert (got["seen"], got["post_edited"], got["kept"], got["changed_up"], got["changed_down"], got["blind"]) == \
        (3, 3, 2, 1, 0, 0)
    text = CliRunner().invoke(cli, ["calibrate", "default", "--judge", "emb", "--db", db_url, "--bootstrap", "0"])
    assert "3 seen; post-edited 3 (kept 2, changed up 1, down 0" in text.output
