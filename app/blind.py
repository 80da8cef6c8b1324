"""Blind judging, one rule for every page: who graded what reaches an annotator only for the questions
they have finished, so nobody anchors on a colleague.

"Finished" is the Label page's: graded every candidate shown, or marked the question unanswerable
(labeler_app.label.hides_others). A page over many questions (Golden set, Adjudicate) does not judge one
question, so it shows an annotator no one else's grades while the team judges blind. Admins
adjudicate and viewers do not judge: they see everything, except that an admin judging a question
on the Label page is blind to it until finished, like anyone judging.
"""
from __future__ import annotations

from labeler_app.access import Actor, Role
from labeler_app.accounts import team_mode
from labeler_storage import Store

HIDDEN = "(hidden: blind judging)"


def blind_judging(store: Store) -> bool:
    """The team setting `blind`; unset, on in team mode and off in the local app."""
    value = store.accounts.settings().get("blind")
    return team_mode() if value is None else bool(value)


def sees_others(store: Store, actor: Actor, *, finished: bool | None = None) -> bool:
    """True when `actor` may see other annotators' grades, marks and names. `finished`: on a page where
    the actor judges one question (Label), whether they have finished it; None on every other page."""
    if finished or not blind_judging(store):
        return True
    return finished is None and actor.role != Role.ANNOTATOR
