"""A collection for the judges' page tests: the demo golden set and a saved run with holes."""
from __future__ import annotations

from conftest import import_demo
from labeler.corpus import load_corpus
from labeler.paths import SAMPLE_CORPUS
from labeler_storage.store import open_store

N_HOLES = 3  # per question of the run: its top 5 is two judged documents, then three nobody judged
N_QUESTIONS = 3


def demo_with_run() -> int:
    """The demo golden set in the default database and a saved run of N_QUESTIONS questions whose top 5 is
    two judged documents, then N_HOLES holes; the run's id."""
    corpus = load_corpus(SAMPLE_CORPUS)
    with open_store() as store:
        import_demo(store)
        per_query = {}
        for status in store.questions.list()[:N_QUESTIONS]:
            judged = {j.doc_id for j in status.judgments}
            top = [*sorted(judged)[:2], *[d.doc_id for d in corpus.documents if d.doc_id not in judged][:N_HOLES]]
            per_query[status.question.query_id] = {"top_k": [{"doc_id": d, "score": 1 - r / 10, "grade": None}
                                                             for r, d in enumerate(top)]}
        return store.runs.save({"model": "m"}, summary={"metrics": {}}, per_query=per_query, golden_hash="g").run_id
