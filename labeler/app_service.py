"""Page-facing functions for the Streamlit app: each combines a few core calls into what one
page shows or does, so pages stay wiring (read widgets, call one function, render).

Nothing here imports streamlit; everything takes its store, corpus or retriever as an
argument, so tests call it directly and the app caches the heavy objects itself.

Which corpus the app opens: the one recorded on the collection (the golden set is written
against it), else `$LABELER_CORPUS`, else the bundled sample corpus.
"""
from __future__ import annotations

import hashlib
import io
import os
import shutil
import tempfile
import zipfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from labeler.candidates import Candidate, query_terms, shuffled
from labeler.config import RunConfig
from labeler.corpus import Corpus, Document, load_corpus
from labeler.errors import CorpusError, InputError
from labeler.golden import (
    GoldenSet, golden_fingerprint, read_golden, serialize_beir, serialize_golden_jsonl, serialize_trec_qrels,
)
from labeler.paths import SAMPLE_CORPUS, labeler_home
from labeler.text import highlight_markup, inert, snippet

CORPUS_ENV = "LABELER_CORPUS"
DEMO_GOLDEN = SAMPLE_CORPUS / "golden.jsonl"
GRADES = {0: "Not relevant", 1: "Partly", 2: "Relevant", 3: "Answers fully"}
UPLOAD_SUFFIXES = (".jsonl", ".json", ".ndjson", ".csv", ".zip")
Progress = Callable[[int, int, str], None]
# Words too common to be worth a highlight; retrieval itself still sees them.
STOPWORDS = frozenset("""a an and are as at be by can do does did for from has have how i if in is it its me my
no not of on or our so than that the their there this to was we what when where which who why will with you your
""".split())


def highlight_terms(text: str) -> list[str]:
    """The question's terms worth highlighting (query terms minus stop words)."""
    return [t for t in query_terms(text) if t not in STOPWORDS]


# --------------------------------------------------------------------------- corpus


def normalize_corpus_path(path: str | Path) -> str:
    """Absolute path string: the cache key of a corpus and what the database records."""
    return str(Path(path).expanduser().resolve())


def default_corpus_path() -> str:
    """`$LABELER_CORPUS`, else the bundled sample corpus."""
    return normalize_corpus_path(os.environ.get(CORPUS_ENV) or SAMPLE_CORPUS)


@dataclass(frozen=True)
class ActiveCorpus:
    """The corpus path the app should open, and a note when it is not the recorded one."""

    path: str
    note: str = ""


def active_corpus(store, collection: str | None = None) -> ActiveCorpus:
    """The collection's recorded corpus if it still exists, else the default corpus."""
    kwargs = {"collection": collection} if collection else {}
    coll = store.get_collection(**kwargs)
    recorded = coll.corpus_path if coll is not None else None
    if recorded and Path(recorded).exists():
        return ActiveCorpus(recorded)
    if recorded:
        return ActiveCorpus(default_corpus_path(),
                            f"The corpus this golden set was written against, {recorded}, is gone; "
                            "opened the default corpus instead. Hint: open the right corpus on the Corpus page.")
    return ActiveCorpus(default_corpus_path())


def is_sample_corpus(path: str | Path) -> bool:
    """True for the bundled sample corpus (folder or its corpus.jsonl)."""
    p = Path(path).resolve()
    return p in (SAMPLE_CORPUS.resolve(), (SAMPLE_CORPUS / "corpus.jsonl").resolve())


def use_corpus(store, path: str | Path, corpus: Corpus) -> None:
    """Record `corpus` (loaded from `path`) as the one the golden set is written against."""
    store.ensure_collection(corpus_path=normalize_corpus_path(path), corpus_fingerprint=corpus.fingerprint)


def corpus_summary(retriever) -> dict[str, Any]:
    """Document and chunk counts, model, index type and where the corpus came from."""
    info = dict(retriever.info)
    info["source"] = retriever.corpus.source
    info["embedded_now"] = retriever.stats.embedded
    return info


def save_uploaded_corpus(name: str, data: bytes, *, home: Path | None = None) -> str:
    """Validate an uploaded corpus (JSONL, CSV, or a zip of .txt/.md files) and keep it.

    The file is checked in a temporary folder first; only a corpus that loads is moved under
    `<data dir>/corpora/`, so a bad upload leaves nothing behind. Returns the kept path.
    """
    safe = Path(name).name or "corpus"
    suffix = Path(safe).suffix.lower()
    if suffix not in UPLOAD_SUFFIXES:
        raise CorpusError(f"unknown corpus file type {suffix or '(none)'}", path=safe,
                          hint="upload a .jsonl or .csv file, or a .zip of .txt/.md files.")
    digest = hashlib.sha256(data).hexdigest()[:10]
    root = (home or labeler_home()) / "corpora"
    root.mkdir(parents=True, exist_ok=True)
    final = root / f"{Path(safe).stem}-{digest}"
    with tempfile.TemporaryDirectory(dir=root, prefix=".upload-") as tmp:
        work = Path(tmp) / "corpus"
        work.mkdir()
        if suffix == ".zip":
            try:
                with zipfile.ZipFile(io.BytesIO(data)) as zf:
                    for member in zf.infolist():
                        target = (work / member.filename).resolve()
                        if not str(target).startswith(str(work.resolve()) + os.sep):
                            raise CorpusError(f"zip member {member.filename!r} points outside the archive",
                                              path=safe, hint="re-create the zip with relative paths.")
                    zf.extractall(work)
            except zipfile.BadZipFile:
                raise CorpusError("not a valid zip archive", path=safe,
                                  hint="upload a .zip of .txt/.md files, or a .jsonl/.csv file.") from None
            load_path = work
        else:
            load_path = work / safe
            load_path.write_bytes(data)
        try:
            load_corpus(load_path)
        except CorpusError as exc:  # name the uploaded file, not the temporary copy
            raise CorpusError(exc.message, path=safe, line=exc.line, hint=exc.hint) from None
        if not final.exists():
            shutil.move(str(work), str(final))
    return normalize_corpus_path(final if suffix == ".zip" else final / safe)


def browse_documents(corpus: Corpus, query: str, *, limit: int = 50) -> list[dict[str, Any]]:
    """Rows for the document browser: keyword/id search, or the first documents."""
    from labeler.candidates import keyword_search

    docs = keyword_search(corpus, query, limit=limit) if query.strip() else list(corpus.documents[:limit])
    return [{"doc_id": d.doc_id, "title": d.title, "chars": len(d.text),
             **{k: str(v) for k, v in d.metadata.items() if isinstance(v, (str, int, float, bool))}}
            for d in docs]


# --------------------------------------------------------------------------- demo golden set


def demo_offer(store, corpus_path: str) -> bool:
    """Offer the demo golden set: the sample corpus is open and the database has no question yet."""
    if not is_sample_corpus(corpus_path):
        return False
    return store.get_collection() is None or not store.list_questions()


def load_demo_golden(store, corpus: Corpus, corpus_path: str):
    """Import the sample corpus's 62-question demo golden set."""
    golden = read_golden(DEMO_GOLDEN, doc_ids=corpus.doc_ids())
    return store.import_golden(golden, corpus_path=normalize_corpus_path(corpus_path),
                               corpus_fingerprint=corpus.fingerprint)


# --------------------------------------------------------------------------- labelling


@dataclass(frozen=True)
class CandidateView:
    """One document to judge, ready to render: every text field is inert markup or plain text."""

    doc_id: str
    title_markup: str
    snippet_markup: str
    text: str
    metadata: Mapping[str, str]
    badges: tuple[str, ...]
    grade: int | None  # this annotator's grade
    others: Mapping[str, int] = field(default_factory=dict)  # other annotators' grades


@dataclass(frozen=True)
class LabelProgress:
    """Questions done out of all, and this question's judged candidates out of those shown."""

    n_questions: int
    n_complete: int
    n_unanswerable: int
    judged: int
    candidates: int


def candidate_views(corpus: Corpus, pooled: Sequence[Candidate], status, annotator: str, question: str,
                    *, shuffle: bool = False) -> list[CandidateView]:
    """Pooled candidates (optionally in a stable shuffled order), then documents judged on this
    question that no retriever surfaced (added by search or by another annotator)."""
    seed = status.question.query_id if status is not None else question
    pooled = shuffled(pooled, seed) if shuffle else list(pooled)
    grades: dict[str, dict[str, int]] = {}
    for j in (status.judgments if status is not None else ()):
        grades.setdefault(j.doc_id, {})[j.annotator] = j.grade
    shown = [(c.doc_id, c.found_by) for c in pooled]
    in_pool = {c.doc_id for c in pooled}
    shown += [(doc_id, {}) for doc_id in sorted(grades) if doc_id not in in_pool]
    terms = highlight_terms(question)
    out = []
    for doc_id, found_by in shown:
        doc = corpus.get(doc_id)
        by = grades.get(doc_id, {})
        badges = [f"{'BM25' if name == 'bm25' else name} #{rank}" for name, rank in found_by.items()]
        if not found_by:
            badges.append("added")
        if doc is None:
            out.append(CandidateView(doc_id, inert(doc_id), inert("(not in this corpus)"), "", {}, tuple(badges),
                                     by.get(annotator), {a: g for a, g in by.items() if a != annotator}))
            continue
        out.append(CandidateView(
            doc_id=doc_id,
            title_markup=highlight_markup(doc.title or doc_id, terms),
            snippet_markup=highlight_markup(snippet(doc.text, terms), terms),
            text=doc.text,
            metadata={k: str(v) for k, v in doc.metadata.items()},
            badges=tuple(badges),
            grade=by.get(annotator),
            others={a: g for a, g in sorted(by.items()) if a != annotator},
        ))
    return out


def search_results(corpus: Corpus, query: str, question: str, *, limit: int = 10) -> list[CandidateView]:
    """Keyword/id search hits rendered like candidates (no grades: the page looks those up)."""
    from labeler.candidates import keyword_search

    terms = highlight_terms(question + " " + query)
    return [CandidateView(d.doc_id, highlight_markup(d.title or d.doc_id, terms),
                          highlight_markup(snippet(d.text, highlight_terms(query) or terms), terms), d.text,
                          {k: str(v) for k, v in d.metadata.items()}, ("search",), None)
            for d in keyword_search(corpus, query, limit=limit)]


def label_progress(statuses: Sequence, views: Sequence[CandidateView]) -> LabelProgress:
    """Counts for the progress line of the Label page."""
    complete = sum(1 for s in statuses if s.status in ("done", "unanswerable"))
    unanswerable = sum(1 for s in statuses if s.status == "unanswerable")
    return LabelProgress(len(statuses), complete, unanswerable, sum(1 for v in views if v.grade is not None),
                         len(views))


def question_choice_label(status) -> str:
    """`q-0003 · ✓ · How many…` for the question picker."""
    mark = {"done": "✓", "unanswerable": "∅", "started": "…", "new": "○"}.get(status.status, "")
    text = status.question.text
    return f"{status.question.query_id} {mark} {text[:70]}{'…' if len(text) > 70 else ''}"


def query_types(statuses: Sequence) -> list[str]:
    """Query types in use, most used first (then by name)."""
    counts: dict[str, int] = {}
    for s in statuses:
        if s.question.query_type:
            counts[s.question.query_type] = counts.get(s.question.query_type, 0) + 1
    return sorted(counts, key=lambda t: (-counts[t], t))


# --------------------------------------------------------------------------- golden set page


def golden_rows(statuses: Sequence, *, text: str = "", types: Sequence[str] = (),
                status_in: Sequence[str] = ()) -> list[dict[str, Any]]:
    """Table rows of the golden set, filtered by text (in id or question), types and statuses."""
    needle = text.strip().lower()
    rows = []
    for s in statuses:
        q = s.question
        if needle and needle not in q.text.lower() and needle not in q.query_id.lower():
            continue
        if types and q.query_type not in types:
            continue
        if status_in and s.status not in status_in:
            continue
        labels = ", ".join(f"{d}:{g}" for d, g in sorted(s.consensus.items(), key=lambda kv: (-kv[1], kv[0])))
        annotators = list(q.credited_annotators) + [a for a in s.annotators if a not in q.credited_annotators]
        rows.append({"query_id": q.query_id, "question": q.text, "type": q.query_type, "status": s.status,
                     "judged": s.n_judged, "relevant": s.n_relevant, "labels": labels,
                     "annotators": ", ".join(annotators), "updated": q.updated_at})
    return rows


def golden_downloads(golden: GoldenSet) -> dict[str, tuple[bytes, str, str] | str]:
    """format -> (bytes, file name, mime), or an error message when the set cannot be written so."""
    out: dict[str, tuple[bytes, str, str] | str] = {
        "jsonl": (serialize_golden_jsonl(golden).encode("utf-8"), "golden.jsonl", "application/jsonl")}
    try:
        out["trec"] = (serialize_trec_qrels(golden).encode("utf-8"), "golden.qrels", "text/plain")
    except InputError as exc:
        out["trec"] = str(exc)
    try:
        queries, qrels = serialize_beir(golden)
    except InputError as exc:
        out["beir"] = str(exc)
    else:
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
            zf.writestr("queries.jsonl", queries)
            zf.writestr("qrels/test.tsv", qrels)
        out["beir"] = (buf.getvalue(), "golden-beir.zip", "application/zip")
    return out


def import_golden_file(store, uploaded, corpus: Corpus, corpus_path: str, *, keep_scale: bool = False,
                       check_doc_ids: bool = True):
    """Validate an uploaded golden JSONL (a binary file object with `.name`) and import it whole.

    Raises GoldenFormatError listing every bad line; nothing is imported then.
    """
    golden = read_golden(uploaded, keep_scale=keep_scale, doc_ids=corpus.doc_ids() if check_doc_ids else None)
    return store.import_golden(golden, corpus_path=normalize_corpus_path(corpus_path),
                               corpus_fingerprint=corpus.fingerprint)


def disagreement_rows(store, *, limit: int = 50) -> list[dict[str, Any]]:
    """Documents the annotators graded differently, largest spread first."""
    return [{"query_id": d.query_id, "doc_id": d.doc_id, "consensus": d.consensus, "spread": d.spread,
             "grades": ", ".join(f"{a}:{g}" for a, g in d.grades.items())}
            for d in store.consensus().disagreements[:limit]]


def agreement_summary(store) -> str:
    """One line on inter-annotator agreement among people (imported grades left out)."""
    report = store.agreement()
    if len(report.annotators) < 2:
        return "Agreement needs two or more annotators grading the same documents."

    def fmt(value: float | None) -> str:
        return "n/a" if value is None else f"{value:.2f}"

    pairs = "; ".join(f"{p.annotator_a}-{p.annotator_b}: {fmt(p.kappa)} on {p.n_items}" for p in report.pairs[:6])
    return (f"Agreement over {report.n_items} shared judgments: Krippendorff's α (ordinal) = "
            f"{fmt(report.krippendorff_alpha)}, Fleiss' κ = {fmt(report.fleiss_kappa)}"
            + (f"; Cohen's κ per pair: {pairs}" if pairs else "") + ".")


# --------------------------------------------------------------------------- evaluation

HEADLINE = ("recall", "precision", "mrr", "ndcg")


def headline_measures(k: int) -> list[str]:
    """Recall@k, Precision@k, MRR@k and nDCG@k: the four the issue asks for, at one cutoff."""
    return [f"{m}@{k}" for m in HEADLINE]


def run_evaluation(store, retriever, config: RunConfig, *, progress: Progress | None = None, name: str = ""):
    """Retrieve for every golden question with `config`, score, and save the run; the RunRecord."""
    from labeler.evaluate import evaluate_golden
    from labeler.retrieval import retrieve_run

    golden = store.export_golden()
    if not any(q.relevance for q in golden.queries if not q.unanswerable):
        raise InputError("no labelled question to score yet",
                         hint="grade some candidates on the Label page, or load the demo golden set.")
    queries = {q.query_id: q.question for q in golden.queries}
    run = retrieve_run(retriever.corpus, config, queries, progress=progress, retriever=retriever)
    report = evaluate_golden(golden, run, abstain_threshold=config.abstain_threshold)
    data = report.to_dict()
    per_query = data.pop("per_query")
    for query_id, entry in per_query.items():  # the question text makes a saved run readable alone
        entry["question"] = queries[query_id]
    return store.save_run(config, summary=data, per_query=per_query, golden_hash=golden_fingerprint(golden),
                          corpus_fingerprint=retriever.corpus.fingerprint, name=name)


def report_of(record):
    """The EvalReport a saved run holds (its abstention sweep stays in `record.summary`)."""
    from labeler.evaluate import EvalReport

    per_query = {q: {k: v for k, v in e.items() if k != "question"} for q, e in record.per_query.items()}
    return EvalReport.from_dict({**record.summary, "per_query": per_query})


def metric_rows(report, k: int) -> list[dict[str, Any]]:
    """Mean and 95% CI of Recall/Precision/MRR/nDCG at k (plus hit@k when computed)."""
    rows = []
    for name in [*headline_measures(k), f"hit@{k}"]:
        if name in report.metrics:
            lo, hi = report.ci95.get(name, (float("nan"), float("nan")))
            rows.append({"metric": name, "mean": report.metrics[name], "ci95_low": lo, "ci95_high": hi})
    return rows


def per_type_rows(report, k: int) -> list[dict[str, Any]]:
    """One row per query type: question count and the headline metrics at k."""
    return [{"query_type": t, "questions": report.type_counts.get(t, 0),
             **{m: values.get(m) for m in headline_measures(k)}}
            for t, values in report.per_type.items()]


def sweep_rows(record) -> list[dict[str, Any]]:
    """The abstention sweep of a saved run: threshold -> shares abstained on."""
    abstention = record.summary.get("abstention") or {}
    return [{"threshold": p["threshold"], "unanswerable left empty": p["unanswerable_abstained"],
             "answerable left empty": p["answerable_abstained"]}
            for p in abstention.get("sweep", [])]


def worst_questions(record, metric: str, n: int = 10) -> list[dict[str, Any]]:
    """The n scored questions lowest on `metric`, with their retrieved documents and grades."""
    report = report_of(record)
    out = []
    for r in report.worst(metric, n):
        out.append({"query_id": r.query_id, "question": record.per_query[r.query_id].get("question", ""),
                    "query_type": r.query_type, metric: r.metrics[metric],
                    "first_relevant_rank": r.first_relevant_rank, "relevant": r.num_relevant,
                    "retrieved": [{"rank": i, "doc_id": d.doc_id, "score": d.score,
                                   "grade": "unjudged" if d.grade is None else str(d.grade)}
                                  for i, d in enumerate(r.top_k, start=1)]})
    return out


def history_rows(runs: Sequence) -> list[dict[str, Any]]:
    """The saved-run table: id, time, name, the settings that differ most often, headline means."""
    rows = []
    for r in runs:
        metrics = r.summary.get("metrics", {})
        rows.append({"run": r.run_id, "created": r.created_at, "name": r.name, "config": r.config_hash,
                     "golden": (r.golden_hash or "")[7:15],
                     **{m: metrics.get(m) for m in headline_measures(10)}})
    return rows


def run_label(run) -> str:
    """`#3 · 2026-11-29 20:10 · hybrid` for pickers."""
    return f"#{run.run_id} · {run.created_at.replace('T', ' ')[:16]}" + (f" · {run.name}" if run.name else "") \
        + f" · {run.config_hash}"


@dataclass(frozen=True)
class RunComparison:
    """Two saved runs compared: per metric, and per question for one metric."""

    comparison: Any  # labeler.evaluate.Comparison
    same_golden: bool
    config_diff: Mapping[str, tuple[Any, Any]]


def compare_runs(a, b, metrics: Sequence[str]) -> RunComparison:
    """Paired comparison of saved run B against baseline A on the questions both scored."""
    from labeler.evaluate import compare_reports

    comparison = compare_reports(report_of(a), report_of(b), metrics)
    diff = {k: (a.config.get(k), b.config.get(k)) for k in sorted(set(a.config) | set(b.config))
            if a.config.get(k) != b.config.get(k)}
    return RunComparison(comparison, a.golden_hash == b.golden_hash, diff)


def comparison_rows(result: RunComparison) -> list[dict[str, Any]]:
    """Per metric: means of A and B, difference with 95% CI, wins/ties/losses, p-value."""
    return [{"metric": m, "A": c.mean_a, "B": c.mean_b, "B - A": c.mean_difference, "ci95_low": c.ci95[0],
             "ci95_high": c.ci95[1], "B better": c.wins, "ties": c.ties, "B worse": c.losses, "p_value": c.p_value}
            for m, c in result.comparison.metrics.items()]


def per_question_changes(result: RunComparison, b_record, metric: str) -> list[dict[str, Any]]:
    """Questions whose `metric` changed from A to B, biggest change first (better and worse)."""
    rows = [{"query_id": q, "question": b_record.per_query.get(q, {}).get("question", ""),
             "change": d[metric], "direction": "better" if d[metric] > 0 else "worse"}
            for q, d in result.comparison.per_query.items() if abs(d[metric]) > 1e-12]
    return sorted(rows, key=lambda r: (-abs(r["change"]), r["query_id"]))


def config_from_form(values: Mapping[str, Any]) -> RunConfig:
    """A RunConfig from the Evaluate form's values (ConfigError when a value is invalid)."""
    from labeler.config import parse_filters

    data = dict(values)
    data["filters"] = parse_filters(list(data.get("filters") or ()))
    if not data.get("reranker"):
        data["reranker"] = None
    return RunConfig(**data)



def ensure_corpus_recorded(store, path: str, corpus: Corpus) -> None:
    """On first start, record the opened corpus on the (new) collection; later starts read it."""
    coll = store.get_collection()
    if coll is None or not coll.corpus_path or (coll.corpus_path == path and coll.corpus_fingerprint != corpus.fingerprint):
        use_corpus(store, path, corpus)
