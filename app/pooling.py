"""Candidate pooling for the Label page: the retrievers it pools from, the pool, and a saved system's top k.

The pages' loader (labeler_pages._loaders) caches what these return per process (`st.cache_resource`)
and draws the progress; the work itself is here, so the page only wires it. A retriever is built
from the corpus and the config's build part only (model, chunking, index, as JSON): k, filters,
fusion, reranker and the abstention threshold are per search.
"""
from __future__ import annotations

from collections.abc import Callable

from labeler.corpus import Corpus
from labeler_app import background
from labeler_app.access import Actor
from labeler_app.background import Build, BuildStatus, Pending
from labeler_app.systems import endpoint_hosts, pooled_ranking, saved_systems


def build_key(path: str, build_json: str, signature: str) -> tuple:
    """The background build's key: the corpus (path and on-disk signature), the build config and the
    data directory (another data directory: another build)."""
    from labeler.paths import cache_dir

    return "retriever", path, build_json, signature, str(cache_dir())


def start_build(corpus: Callable[[], Corpus], path: str, build_json: str, signature: str) -> Build:
    """The background build of the corpus's retriever (labeler_app.background): one per process and key;
    `corpus()` is called in the build's thread."""
    from labeler.config import BuildConfig
    from labeler.retrieval import open_retriever

    return background.start(build_key(path, build_json, signature),
                            lambda progress: open_retriever(corpus(), BuildConfig.from_json(build_json),
                                                            progress=progress))


def wait_unless_embedding(build: Build, poll: float = 0.1) -> BuildStatus | None:
    """Wait for `build` while it only loads; its status as soon as anything has to be embedded (on any
    corpus, loading the model alone takes seconds: the page goes on without dense candidates), None
    once it is done."""
    while not build.wait(poll):
        status = build.status()
        if status.stage == "embedding" and status.total > status.done:
            return status
    return None


def watch_build(build: Build, show: Callable[[BuildStatus], None], poll: float = 0.25):
    """Wait for `build`, showing its status every `poll` seconds; its retriever (its error raised)."""
    while not build.wait(poll):
        show(build.status())
    return build.result()


def bm25_retriever(corpus: Corpus, build_json: str):
    """The BM25 half of the corpus's retriever alone (seconds to build, not minutes)."""
    from labeler.config import BuildConfig
    from labeler.retrieval import Retriever

    return Retriever(corpus, BuildConfig.from_json(build_json)).prepare("bm25")


def pool(retriever, question: str, *, dense: bool = True) -> tuple:
    """The question's pooled candidates (labeler.candidates): dense + BM25, or BM25 only."""
    from labeler.candidates import pool_candidates

    return tuple(pool_candidates(retriever, question) if dense else pool_candidates(retriever, question, k_dense=0))


def corpus_text(corpus: Corpus):
    """The corpus's tf-idf (labeler.judging.CorpusText): built once per corpus."""
    from labeler.judging import CorpusText

    return CorpusText.of(corpus)


def judging_features(text, retriever, question: str, *, dense: bool):
    """What the judging model reads for a question: the corpus's tf-idf and the retriever's dense
    (`dense`) or BM25 score of every document."""
    from labeler.judging import question_features
    from labeler.judging.features import retriever_scores

    return question_features(text, question, retriever_scores(retriever, [question], dense=dense)[0])


def system_ranks(store, actor: Actor, name: str, question: str, k: int = 10,
                 *, wait: float = 0.0) -> dict[str, int] | Pending:
    """A saved system's top k for a question as {doc_id: rank}, asked on `actor`'s behalf (the hosts
    their deployment allows), in the background: `Pending` while it has not answered within `wait`
    seconds; {} when the system was deleted since it was picked. LabelerError when it failed."""
    saved = saved_systems(store).get(name)
    if saved is None:
        return {}
    ranking = pooled_ranking(saved["declaration"], endpoint_hosts(actor), question, k, wait=wait)
    if isinstance(ranking, Pending):
        return ranking
    return {doc_id: rank for rank, doc_id in enumerate(ranking, start=1)}

