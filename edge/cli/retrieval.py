"""`labeler index` and `labeler search`."""
from __future__ import annotations

import json
import sys
import time

import click

from labeler_edge.cli import cli, handle_errors
from labeler_edge.cli.options import config_from_options, retrieval_options
from labeler_edge.cli.params import depth_option


class ProgressBar:
    """A progress callback drawing one bar per stage on stderr (a line per stage when not a terminal)."""

    def __init__(self) -> None:
        self._bars: dict[str, object] = {}

    def __call__(self, done: int, total: int, stage: str) -> None:
        if not sys.stderr.isatty():  # a log, not a terminal: one line per finished stage
            if done >= total:
                click.echo(f"{stage}: {done}/{total}", err=True)
            return
        bar = self._bars.get(stage)
        if bar is None:
            bar = click.progressbar(length=total, label=stage.capitalize(), file=sys.stderr, show_pos=True)
            bar.__enter__()
            self._bars[stage] = bar
        bar.update(done - bar.pos)
        if done >= total:
            bar.__exit__(None, None, None)

    def close(self) -> None:
        """Finish any bar still open (e.g. after an error)."""
        for bar in self._bars.values():
            if not bar.finished:
                bar.__exit__(None, None, None)


def open_with_progress(corpus_path: str, config):
    """Open a retriever for a RunConfig, drawing a bar while it embeds or builds."""
    from labeler.retrieval import open_retriever

    bar = ProgressBar()
    try:
        return open_retriever(corpus_path, config, progress=bar)
    finally:
        bar.close()


@cli.command("index")
@click.argument("corpus", type=click.Path())
@retrieval_options
@handle_errors
def index_command(corpus: str, **options) -> None:
    """Build (or reuse) the embeddings and index of CORPUS and say where they are cached."""
    config = config_from_options(options)
    t0 = time.perf_counter()
    retriever = open_with_progress(corpus, config)  # builds what config.mode searches with (hybrid: both)
    info = retriever.info
    seconds = time.perf_counter() - t0
    if config.mode == "bm25":
        click.echo(f"BM25 index over {info['documents']} documents as {info['chunks']} chunks in {seconds:.1f}s")
    else:
        stats = retriever.stats
        what = ("reused cached embeddings for" if not stats.embedded else "embedded" if not stats.reused_chunks
                else f"embedded {stats.embedded_chunks} new chunks, reused {stats.reused_chunks} cached ones, for")
        click.echo(f"{what} {info['documents']} documents as {info['chunks']} chunks "
                   f"({info['model']}, {info['dimension']} dims, {info['index']} index) in {seconds:.1f}s")
    if retriever.corpus.empty:
        click.echo(f"note: {len(retriever.corpus.empty)} documents have neither title nor text: "
                   f"{', '.join(retriever.corpus.empty[:10])}")
    click.echo(f"cache: {info['cache']}")
    click.echo(f"corpus fingerprint: {info['corpus_fingerprint']}")


@cli.command("search")
@click.argument("corpus", type=click.Path())
@click.argument("question")
@depth_option(10, "How many documents to show.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@retrieval_options
@handle_errors
def search_command(corpus: str, question: str, depth: int, as_json: bool, **options) -> None:
    """Search CORPUS for QUESTION and list the top documents."""
    config = config_from_options(options, k=depth)
    retriever = open_with_progress(corpus, config)
    hits = retriever.search(question, config.search_params())
    if as_json:
        docs = [{"rank": h.rank, "doc_id": h.doc_id, "score": h.score, "chunk_id": h.chunk_id,
                 "title": retriever.corpus.get(h.doc_id).title} for h in hits]
        click.echo(json.dumps({"question": question, "config": config.to_dict(),
                               "config_hash": config.config_hash, "results": docs}, ensure_ascii=False))
        return
    for h in hits:
        doc = retriever.corpus.get(h.doc_id)
        click.echo(f"{h.rank:>3}  {h.score:8.4f}  {h.doc_id}  {doc.title}")
