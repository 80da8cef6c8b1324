"""The work queue's "judge's doubts first" order (issue 23, item 5): "Next for me" and `labeler queue` send
people first where a machine judge disagrees with a person or is least sure; on a real SQLite store."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from conftest import sqlite_only
from labeler.errors import InputError
from labeler_app import label as lb
from labeler_app import queue_order as qo
from labeler_app.access import Actor, Role
from labeler_edge.cli import cli
from labeler_storage import open_store

ASHA, BEN, CAT = (Actor(n, Role.ANNOTATOR, team=True) for n in ("asha", "ben", "cat"))
VIEWER = Actor("vic", Role.VIEWER, team=True)


def _queue(db_url: str, order: str) -> list[tuple[str, int, float]]:
    result = CliRunner().invoke(cli, ["queue", "default", "--db", db_url, "--order", order, "--json"])
    assert result.exit_code == 0, result.output
    return [(r["query_id"], r["seats"], r["doubt"]) for r in json.loads(result.output)["questions"]]


@sqlite_only
def test_queue_order_doubts_sends_people_first_where_the_judge_disagrees_or_is_least_sure(db_url):
    with open_store(db_url) as s:
        q1, q2, q3 = (s.questions.add(f"Question {i}?", author="boss").query_id for i in (1, 2, 3))
        s.accounts.set_setting("overlap", 2, by="boss")
        s.judgments.set(q1, "d0", 2, annotator="ben")
        s.judgments.set(q3, "d0", 3, annotator="ben")
        s.machine.save_grades([dict(query_id=q, doc_id=d, grade=g, judge="umb", at="2026-01-01T00:00:00Z")
                               for q, d, g in ((q1, "d0", 2), (q3, "d0", 0), (q2, "d1", 1))])
    # q1 d0: umb agrees with ben (doubt 0); q3 d0: umb says 0, ben 3 (doubt 1); q2 d1 nobody graded: umb gave 1,
    # and on the pairs people graded it never gave 1, so P(people disagree | 1) = (0 + 1) / (0 + 2) = 0.5
    assert _queue(db_url, "doubts") == [(q3, 1, 1.0), (q2, 0, 0.5), (q1, 1, 0.0)]
    assert _queue(db_url, "seats") == [(q1, 1, 0.0), (q3, 1, 1.0), (q2, 0, 0.5)]  # today's: fullest, then oldest
    with open_store(db_url) as s:
        assert lb.next_for_me(s, ASHA) == q1  # the team's order is "seats" until an admin changes it
        s.accounts.set_setting("queue_order", "doubts", by="boss")
        assert lb.next_for_me(s, CAT) == q3
        assert [r.query_id for r in qo.queue(s, VIEWER)] == [q2]  # q1 and q3 now have both their seats
        with pytest.raises(InputError, match="seats, doubts"):
            s.accounts.set_setting("queue_order", "random", by="boss")
