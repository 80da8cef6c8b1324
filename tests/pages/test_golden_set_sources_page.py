"""AppTest: the Golden set page's grade sources: each consensus-only file listed apart with its counts,
switched between counted and kept apart; and the upload preview's choice, with its default said."""
from __future__ import annotations

import io

from browser_support import app_home, open_app, sample_embeddings, texts  # noqa: F401 - fixtures

from labeler.corpus import load_corpus
from labeler.golden import parse_golden_jsonl
from labeler.paths import SAMPLE_CORPUS
from labeler_app import golden_set as gs
from labeler_app.access import local_actor
from labeler_app.transfer import file_grades_line
from labeler_storage.store import open_store

PAGE = "../pages/golden_set.py"
FILE = b'{"query_id": "v1", "question": "How many sick days?", "relevance": {"leave-001": 2}}\n'


def test_golden_set_lists_a_source_kept_apart_and_counts_it_on_a_click(app_home):
    store = open_store()
    done = store.golden.import_set(parse_golden_jsonl(FILE.decode()), file_name="vendor.jsonl", count_file_grades=False)
    at = open_app(PAGE)
    [table] = [d.value for d in at.dataframe if "source" in d.value.columns]
    assert table.to_dict("records")[0] | {"imported": "", "imported by": ""} == {
        "source": done.source, "file": "vendor.jsonl", "imported": "", "imported by": "", "grades": 1,
        "questions": 1, "counted": "kept apart (not counted)", "last switched": ""}
    assert store.golden.export().get("v1").relevance == {}
    at.button(key="source_switch").click().run()
    assert not at.exception
    assert any(m.startswith(f"{done.source}: counted (where no person graded)") for m in texts(at.success))
    assert store.golden.export().get("v1").relevance == {"leave-001": 2}
    assert store.sources.list()[0].changes[0]["counted"] is True


def test_golden_set_upload_says_the_default_and_imports_as_chosen(app_home):
    store, corpus = open_store(), load_corpus(SAMPLE_CORPUS)
    me = local_actor("asha")
    plan = gs.preview_golden_file(store, me, io.BytesIO(FILE), corpus)
    assert "kept as this file's own, counted in the consensus where no person graded a document, never over a " \
           "person's grade (the default)." in file_grades_line(plan, True)
    upload = io.BytesIO(FILE)
    upload.name = "vendor.jsonl"
    summary = gs.import_golden_file(store, me, upload, corpus, str(SAMPLE_CORPUS), count_file_grades=False)
    assert summary.source.startswith("(vendor.jsonl, ") and not store.sources.list()[0].counted
