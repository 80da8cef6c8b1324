"""Compare two saved runs: per metric (means, B - A with a CI, wins/ties/losses, p-value), the
config changes, and which questions got better or worse. The result is plain data, so the page
caches it per pair of runs (a saved run never changes) and resampling runs once per pair."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from labeler.config import current_names
from labeler.evaluation import compare_reports
from labeler_app import runs
from labeler_app.text import inert
from labeler_storage import Store
from labeler_storage.records import RunSummary


@dataclass(frozen=True)
class RunComparison:
    """Saved run B against baseline A, ready to render."""

    same_golden: bool
    corpus_note: str                                       # "" when both runs searched one corpus version
    config_diff: dict[str, tuple[Any, Any]]
    rows: tuple[dict[str, Any], ...]                      # one per metric
    changes: dict[str, tuple[dict[str, Any], ...]]         # metric -> questions that changed, biggest first
    n_paired: int
    machine_note: str = ""                                 # a run whose holes a judge filled: its twin (plain text)

    def better(self, metric: str) -> list[dict[str, Any]]:
        """Questions B improved on `metric`."""
        return [r for r in self.changes.get(metric, ()) if r["change"] > 0]

    def worse(self, metric: str) -> list[dict[str, Any]]:
        """Questions B made worse on `metric`."""
        return [r for r in self.changes.get(metric, ()) if r["change"] < 0]


def compare_runs(store: Store, a_id: int, b_id: int, metrics: Sequence[str]) -> RunComparison:
    """Paired comparison of saved run B against baseline A on the questions both scored."""
    a, b = store.runs.load(a_id), store.runs.load(b_id)
    report_b = runs.report_of(b)
    comparison = compare_reports(runs.report_of(a), report_b, list(metrics))
    rows = tuple({"metric": m, "A": c.mean_a, "B": c.mean_b, "B - A": c.mean_difference, "ci95_low": c.ci95[0],
                  "ci95_high": c.ci95[1], "B better": c.wins, "ties": c.ties, "B worse": c.losses,
                  "p_value": c.p_value} for m, c in comparison.metrics.items())
    changes = {}
    for m in comparison.metrics:
        moved = [{"query_id": q, "change": d[m], "question": report_b.questions.get(q, "")}
                 for q, d in comparison.per_query.items() if abs(d[m]) > 1e-12]
        changes[m] = tuple(sorted(moved, key=lambda r: (-abs(r["change"]), r["query_id"])))
    config_a, config_b = current_names(a.config), current_names(b.config)  # a run saved before a key's rename
    diff = {k: (config_a.get(k), config_b.get(k)) for k in sorted(set(config_a) | set(config_b))
            if config_a.get(k) != config_b.get(k)}
    filled = " ".join(f"{side}: {note}." for side, run in (("A", a), ("B", b)) if (note := runs.filled_note(run.summary)))
    return RunComparison(a.golden_hash == b.golden_hash, corpus_note(a, b), diff, rows, changes,
                         len(comparison.query_ids), filled)


def corpus_note(a: RunSummary, b: RunSummary) -> str:
    """What a comparison must say first when the two runs did not search the same corpus content (markdown)."""
    if a.corpus_fingerprint == b.corpus_fingerprint:
        return ""
    if a.corpus_path and a.corpus_path == b.corpus_path:
        what = "different versions of the corpus"
    else:
        what = "different corpora"
    return (f"The corpora differ: these runs searched {what} — A: {inert(a.corpus_line)}; B: {inert(b.corpus_line)}. "
            "A difference in the numbers may come from the corpus, not the retrieval.")
