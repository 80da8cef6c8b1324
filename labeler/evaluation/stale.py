"""Stale labels in an evaluation: count them, and include, exclude or refuse them.

A judged document is stale against the corpus being searched when the corpus lacks it
(missing) or its content hash differs from the one the golden file carries (edited; see
labeler.corpus.versions). The policy decides what scoring does with them:
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
from labeler.corpus.versions import GoldenStaleness, golden_staleness, stale_count_text
from labeler.errors import InputError, LabelerError
from labeler.golden import GoldenSet

STALE_POLICIES = ("include", "exclude", "fail")


class StaleLabelsError(LabelerError):
    """Scoring refused because judgments are stale (`--stale fail`)."""

    exit_code = 1


class MissingDocumentsError(InputError):
    """Scoring refused because (nearly) every judged document is missing from the corpus searched."""


# At or above this share of judged documents missing from the corpus, the golden set was made for
# another corpus: every metric would be (close to) 0, so scoring is refused unless asked for.
MISSING_REFUSED = 0.9


def check_policy(policy: str) -> str:
    """The policy, or an InputError naming the choices."""
    if policy not in STALE_POLICIES:
        raise InputError(f"unknown stale-label policy {policy!r}", hint=f"use one of {', '.join(STALE_POLICIES)}.")
    return policy


def refuse_missing(found: GoldenStaleness, *, source: str | None = None) -> None:
    """MissingDocumentsError when at least MISSING_REFUSED of the judged documents are missing from
    the corpus: a golden set for another corpus, which would score (nearly) nothing."""
    if not found.n_judged or found.n_missing < MISSING_REFUSED * found.n_judged:
        return
    raise MissingDocumentsError(
        f"{found.n_missing} of {found.n_judged} judged documents (in {len(found.missing)} questions) are missing "
        "from the corpus searched: the golden set was made for another corpus, and every metric would be near 0",
        path=source, hint="score it against the corpus it was labelled on, or (on the command line) pass "
                          "--allow-missing to score anyway.")


def apply_stale_policy(golden: GoldenSet, corpus: Corpus, policy: str = "include", *,
                       allow_missing: bool = False) -> tuple[GoldenSet, GoldenStaleness]:
    """The golden set to score under `policy`, and what was stale in it against `corpus`. Refused
    (`refuse_missing`) when nearly every judged document is missing, unless `allow_missing`."""
    check_policy(policy)
    found = golden_staleness(golden, corpus)
    if not allow_missing:
        refuse_missing(found)
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
    questions = len(set(info.get("missing") or {}) | set(info.get("edited") or {}))
    return (stale_count_text(info["n_stale"], info["n_judged"], info["n_missing"], info["n_edited"], questions)
            + f"; {verb}.")
