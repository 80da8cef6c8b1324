"""Post-edit figures: what annotators did with a machine judge's grades shown to them as suggestions.

Each record is one suggestion an annotator saw: (judge, machine grade shown, their grade when they first
saw it, their grade now). Their grade then is None when the suggestion was in view before they graded
the pair: a **post-edited** pair, whose grade now is *kept* (= the machine's), *changed up* (>) or
*changed down* (<). Otherwise the pair is **blind**: they graded it before seeing the suggestion;
*agreed* counts those where that blind grade was the machine's, *revised* those where their grade
changed after they saw it. A pair whose grade was cleared since counts as seen and nowhere else.

kappa_post_edit and kappa_blind are Cohen's unweighted kappa (4 levels) between the machine's grade and
the person's (now, resp. blind) over those pairs: a post-edit kappa well above the blind one is
anchoring, people taking the machine's grade rather than judging (None: undefined, e.g. no pairs).
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass

import numpy as np

from labeler.judges.stats import cohen_kappa

LEVELS = 4


@dataclass(frozen=True)
class PostEdit:
    """One judge's post-edit figures (module docstring)."""

    judge: str
    seen: int = 0
    post_edited: int = 0
    kept: int = 0
    changed_up: int = 0
    changed_down: int = 0
    blind: int = 0
    agreed: int = 0
    revised: int = 0
    kappa_post_edit: float | None = None
    kappa_blind: float | None = None

    def to_dict(self) -> dict:
        return asdict(self)


def _kappa(pairs: list[tuple[int, int]]) -> float | None:
    pairs = [(h, m) for h, m in pairs if 0 <= h < LEVELS and 0 <= m < LEVELS]
    if not pairs:
        return None
    confusion = np.zeros((LEVELS, LEVELS))
    for h, m in pairs:
        confusion[h, m] += 1
    value = float(cohen_kappa(confusion))
    return None if np.isnan(value) else value


def post_edit_figures(records: Iterable[tuple[str, int, int | None, int | None]]) -> dict[str, PostEdit]:
    """judge -> its PostEdit, from (judge, machine grade, grade when first seen or None, grade now or None)."""
    per: dict[str, list[tuple[int, int | None, int | None]]] = {}
    for judge, machine, before, now in records:
        per.setdefault(judge, []).append((machine, before, now))
    out = {}
    for judge, rows in sorted(per.items()):
        edited = [(now, m) for m, before, now in rows if before is None and now is not None]
        blind = [(before, m, now) for m, before, now in rows if before is not None]
        out[judge] = PostEdit(
            judge, seen=len(rows), post_edited=sum(before is None for _, before, _ in rows),
            kept=sum(h == m for h, m in edited), changed_up=sum(h > m for h, m in edited),
            changed_down=sum(h < m for h, m in edited), blind=len(blind),
            agreed=sum(b == m for b, m, _ in blind), revised=sum(now is not None and now != b for b, _, now in blind),
            kappa_post_edit=_kappa(edited), kappa_blind=_kappa([(b, m) for b, m, _ in blind]))
    return out
