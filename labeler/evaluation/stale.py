"""Stale labels in an evaluation: count them, and include, exclude or refuse them.

A judged document is stale against the corpus being searched when the corpus lacks it
(missing) or its content hash differs from the one the golden file carries (edited; see
labeler.corpus_versions). The policy decides what scoring does with them:
- include (the default): score as labelled, and say how many were stale;
- exclude: drop the stale judgments from the golden set before scoring (a question left with no
  judgment is then "not yet judged", as any other);
- fail: refuse to score while any judgment is stale (exit 1 in the CLI: a quality bar, not bad input).
The report carries the counts in `settings["stale"]`, so a saved run says what it rested on.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any

from labeler.corpus import Corpus
from labeler.corpus_versions import GoldenStaleness, golden_staleness
from labeler.errors import InputError, LabelerError
from labeler.golden import GoldenSet

STALE_POLICIES = ("include", "exclude", "fail")


class StaleLabelsError(LabelerError):
    """Scoring refused because judgments are stale (`--stale fail`)."""

    exit_code = 1


def check_policy(policy: str) -> str:
    """The policy, or an InputError naming the choices."""
    if policy not in STALE_POLICIES:
        raise InputError(f"unknown stale-label policy {policy!r}", hint=f"use one of {', '.join(STALE_POLICIES)}.")
    return policy


def apply_stale_policy(golden: GoldenSet, corpus: Corpus, policy: str = "include") -> tuple[GoldenSet, GoldenStaleness]:
    """The golden set to score under `policy`, and what was stale in it against `corpus`."""
    check_policy(policy)
    found = golden_staleness(golden, corpus)
    if policy == "fail" and found.n_stale:
        raise StaleLabelsError(f"{found.text}; scoring refused (--stale fail)",
                               hint="re-check them on the Label page (or re-import against this corpus), "
                                    "or score with --stale exclude / include.")
    if policy == "exclude" and found.n_stale:
        stale = found.pairs()
        golden = GoldenSet(tuple(replace(q, relevance={d: g for d, g in q.relevance.items()
                                                        if (q.query_id, d) not in stale})
                                 if any((q.query_id, d) in stale for d in q.relevance) else q
                                 for q in golden.queries))
    return golden, found


def stale_settings(found: GoldenStaleness, policy: str) -> dict[str, Any]:
    """What a report keeps about stale labels (settings["stale"])."""
    return {"policy": policy, "n_judged": found.n_judged, "n_stale": found.n_stale, "n_missing": found.n_missing,
            "n_edited": found.n_edited, "n_unhashed": found.n_judged - found.n_hashed,
            "missing": {q: list(d) for q, d in found.missing.items()},
            "edited": {q: list(d) for q, d in found.edited.items()}}


def stale_line(settings: Any) -> str:
    """One line for a report's stale-label counts ("" when none were stale or none were counted)."""
    info = (settings or {}).get("stale") if hasattr(settings, "get") else None
    if not info or not info.get("n_stale"):
        return ""
    verb = {"include": "included in the scores", "exclude": "left out of the scores"}.get(info.get("policy"), "")
    per_q = len(info.get("missing", {}))
    return (f"{info['n_stale']} of {info['n_judged']} judgments stale ({info['n_missing']} documents missing from "
            f"the corpus in {per_q} questions, {info['n_edited']} edited since judged), {verb}.")
