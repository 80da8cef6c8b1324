"""The shared work queue (labeler_storage.work_queue): overlap, leases, "closest to done first", and no
over-claiming when many annotators ask at the same instant; on SQLite and on PostgreSQL."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from conftest import rows
from labeler.errors import InputError
from labeler_storage import open_store

REPO = Path(__file__).resolve().parents[2]
N_ASKERS = 16

ASKER = textwrap.dedent("""
    import sys
    from labeler_storage import open_store

    url, name = sys.argv[1], sys.argv[2]
    store = open_store(url, synchronous="NORMAL")
    print("ready", flush=True)
    sys.stdin.readline()  # wait for "go": every annotator asks at once
    print("got", store.queue.next(name), flush=True)
""")


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = datetime(2026, 12, 1, 9, 0, tzinfo=timezone.utc)

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def queue(db_url):
    store = open_store(db_url, synchronous="NORMAL")
    store.clock = Clock()
    for i in range(4):
        store.questions.add(f"Question {i}?", query_id=f"q{i}")
    yield store
    store.close()


def _ask_at_once(url: str, n: int) -> list[str | None]:
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    askers = [subprocess.Popen([sys.executable, "-c", ASKER, url, f"annotator-{i}"], cwd=REPO, env=env, text=True,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
              for i in range(n)]
    try:
        for p in askers:
            assert p.stdout.readline().strip() == "ready", p.stderr.read()
        for p in askers:
            p.stdin.write("go\n")
            p.stdin.flush()
        outs = [p.communicate(timeout=120) for p in askers]
    finally:
        for p in askers:
            if p.poll() is None:
                p.kill()
    for p, (out, err) in zip(askers, outs):
        assert p.returncode == 0, err
    got = [out.strip().split(" ", 1)[1] for out, _ in outs]
    return [None if g == "None" else g for g in got]


@pytest.mark.parametrize("n_questions", [6, 10])
def test_sixteen_annotators_asking_at_once_never_over_claim(db_url, n_questions):
    with open_store(db_url) as store:
        for i in range(n_questions):
            store.questions.add(f"Question {i}?", query_id=f"q{i:02d}")
        store.accounts.set_setting("overlap", 2)
    got = _ask_at_once(db_url, N_ASKERS)
    per_question: dict[str, int] = {}
    for qid in got:
        if qid is not None:
            per_question[qid] = per_question.get(qid, 0) + 1
    assert max(per_question.values()) <= 2  # no question claimed by more than 2
    # None skipped while work remains: 6 questions x 2 seats = 12 answers and 4 "no work"; 10 x 2 = 20
    # seats for 16 askers, all served. Closest to done first fills the oldest questions two by two.
    assert sum(per_question.values()) == min(N_ASKERS, 2 * n_questions)
    assert sorted(per_question) == [f"q{i:02d}" for i in range(min(n_questions, N_ASKERS // 2))]
    assert sorted(rows(db_url, "SELECT count(*) FROM claims GROUP BY question_id")) == [(2,)] * len(per_question)


def test_closest_to_done_first_then_creation_order(queue):
    queue.accounts.set_setting("overlap", 3)
    queue.judgments.set("q2", "d1", 1, annotator="ann")
    queue.judgments.set("q2", "d1", 0, annotator="bob")
    queue.questions.set_unanswerable("q3", by="bob")  # a vote is a judgment too
    assert queue.queue.next("cat") == "q2"  # 2 of 3 seats taken
    assert queue.queue.next("dan") == "q3"  # q2 is full now; q3 has 1 (q0, q1: 0)
    assert queue.queue.next("ann") == "q3"  # ann judged q2 already
    assert queue.queue.next("eve") == "q0"
    assert queue.queue.claims() == {"q0": ["eve"], "q2": ["cat"], "q3": ["ann", "dan"]}


def test_asking_again_returns_my_open_claim_and_renews_it(queue):
    assert queue.queue.next("ann", lease_minutes=30) == "q0"
    queue.clock.now += timedelta(minutes=20)
    assert queue.queue.next("ann", lease_minutes=30) == "q0"  # not judged yet: the same one, renewed
    assert rows(queue, "SELECT expires_at FROM claims") == [("2026-12-01T09:50:00Z",)]


def test_a_judged_question_leaves_my_queue(queue):
    assert queue.queue.next("ann") == "q0"
    queue.judgments.set("q0", "d1", 2, annotator="ann")
    assert queue.queue.next("ann") == "q1"  # q0 is judged by me: never again
    queue.judgments.set("q2", "d1", 0, annotator="ann")
    queue.questions.set_unanswerable("q3", by="ann")
    assert queue.queue.next("ann") == "q1"  # my open claim
    queue.judgments.set("q1", "d9", 0, annotator="ann")
    assert queue.queue.next("ann") is None


def test_an_expired_lease_returns_the_question_to_the_queue(queue):
    queue.accounts.set_setting("overlap", 1)
    for name in ("ann", "bob", "cat", "dan"):
        queue.queue.next(name, lease_minutes=30)
    assert queue.queue.next("eve") is None  # every seat is held
    queue.clock.now += timedelta(minutes=29)
    assert queue.queue.renew("q1", "bob", lease_minutes=30)  # bob is still working: to 10:59
    queue.clock.now += timedelta(minutes=2)  # 09:31: the other leases ran out
    assert not queue.queue.renew("q0", "ann")  # too late: expired
    assert queue.queue.next("eve") == "q0"
    assert queue.queue.claims() == {"q0": ["eve"], "q1": ["bob"]}


def test_release_gives_the_seat_back(queue):
    queue.accounts.set_setting("overlap", 1)
    assert queue.queue.next("ann") == "q0"
    assert queue.queue.release("q0", "ann") and not queue.queue.release("q0", "ann")
    assert queue.queue.next("bob") == "q0"


def test_giving_a_question_back_releases_it_and_passes_it_over(queue):
    queue.accounts.set_setting("overlap", 1)
    queue.judgments.set("q1", "d1", 0, annotator="bob")  # q1 is full; ann is sent to q0 first
    assert queue.queue.next("ann") == "q0"
    assert queue.queue.claim_expiry("q0", "ann") == "2026-12-01T09:30:00Z" and queue.queue.claim_expiry("q0", "bob") is None
    assert queue.queue.next("ann", give_back="q0") == "q2"  # not q0 again, although it is first in line
    assert queue.queue.claims() == {"q2": ["ann"]} and queue.queue.claim_expiry("q0", "ann") is None
    assert queue.queue.next("cat") == "q0"  # the seat ann gave back
    assert queue.queue.next("ann", give_back="q2") == "q3"
    # A question given back comes round again only when nothing else wants a judge: q2 is the only one left.
    assert queue.queue.next("ann", give_back="q3") == "q2"
    queue.judgments.set("q2", "d1", 1, annotator="ann")
    assert queue.queue.next("ann", give_back="q3") is None  # nothing else wants a judge
    assert queue.queue.claims() == {"q0": ["cat"], "q2": ["ann"]}  # q3 given back; q2 judged


def test_a_question_given_back_stays_last_in_line_for_whoever_gave_it_back(queue):
    queue.accounts.set_setting("overlap", 2)
    assert queue.queue.next("ann") == "q0"
    assert queue.queue.next("ann", give_back="q0") == "q1"
    queue.judgments.set("q1", "d1", 2, annotator="ann")
    # q0 is first in line and nobody holds it, but ann declined it: q2, then q3, then q0 again.
    assert queue.queue.next("ann") == "q2"
    queue.judgments.set("q2", "d1", 2, annotator="ann")
    assert queue.queue.next("ann") == "q3"
    queue.judgments.set("q3", "d1", 2, annotator="ann")
    assert queue.queue.next("ann") == "q0"  # nothing else wants ann: offered once more
    assert queue.queue.next("bob") == "q0"  # declining is ann's own; q0 is still first for bob
    assert rows(queue, "SELECT annotator FROM declines") == [("ann",)]
    queue.questions.delete("q0")
    assert rows(queue, "SELECT count(*) FROM declines") == [(0,)]  # gone with its question


def test_imported_grades_take_no_seat(queue):
    from labeler.golden import GoldenQuery, GoldenSet

    queue.golden.import_set(GoldenSet((GoldenQuery("q9", "Imported?", relevance={"d1": 2}),)))
    queue.accounts.set_setting("overlap", 2)
    queue.judgments.set("q9", "d2", 1, annotator="cat")
    assert queue.queue.next("ann") == "q9"  # cat holds one of its 2 seats; the import holds none


def test_progress_per_annotator(queue):
    queue.judgments.set("q0", "d1", 2, annotator="ann")
    queue.judgments.set("q0", "d2", 0, annotator="ann")
    queue.questions.set_unanswerable("q1", by="ann")
    queue.judgments.set("q2", "d1", 1, annotator="bob")
    # the judgments carry the store's one clock, as the leases do
    ann, bob = queue.queue.progress(window_hours=8)
    # ann: 2 questions (q0 graded, q1 voted), 2 judgments in the last 8 h -> 2 / 8 = 0.25 per hour
    assert (ann.annotator, ann.questions, ann.judgments, ann.recent, ann.per_hour) == ("ann", 2, 2, 2, 0.25)
    assert (bob.questions, bob.judgments, bob.per_hour) == (1, 1, 0.125)
    queue.clock.now += timedelta(hours=9)
    assert [p.recent for p in queue.queue.progress()] == [0, 0]


@pytest.mark.parametrize("value", [0, 21, "2", 1.5, True, None])
def test_overlap_setting_is_checked(queue, value):
    with pytest.raises(InputError, match="overlap must be"):
        queue.accounts.set_setting("overlap", value)


def test_the_queue_needs_a_name(queue):
    with pytest.raises(InputError, match="needs an annotator name"):
        queue.queue.next("  ")


class Oracle:
    """The queue's rule written plainly over Python sets: what next_question must answer."""

    def __init__(self, questions: list[str], overlap: int) -> None:
        self.questions, self.overlap = questions, overlap
        self.judged: dict[str, set[str]] = {q: set() for q in questions}
        self.claims: dict[tuple[str, str], tuple[datetime, datetime]] = {}  # (q, who) -> (claimed, expires)

    def next(self, who: str, now: datetime, lease: timedelta) -> str | None:
        self.claims = {k: v for k, v in self.claims.items() if v[1] > now}
        held = sorted((v[0], self.questions.index(q), q) for (q, w), v in self.claims.items()
                      if w == who and who not in self.judged[q])
        if held:
            pick = held[0][2]
        else:
            seats = {q: self.judged[q] | {w for (c, w) in self.claims if c == q} for q in self.questions}
            open_ = [q for q in self.questions if who not in seats[q] and len(seats[q]) < self.overlap]
            if not open_:
                return None
            pick = min(open_, key=lambda q: (-len(seats[q]), self.questions.index(q)))
        claimed = self.claims.get((pick, who), (now, now))[0]
        self.claims[pick, who] = (claimed, now + lease)
        return pick


@pytest.mark.parametrize("seed", [1, 2])
def test_the_queue_follows_its_rule_on_generated_sequences(queue, seed):
    import random

    rng = random.Random(seed)
    overlap = rng.randint(1, 3)
    queue.accounts.set_setting("overlap", overlap)
    oracle, people = Oracle([f"q{i}" for i in range(4)], overlap), ["ann", "bob", "cat", "dan", "eve"]
    for step in range(120):
        who, roll = rng.choice(people), rng.random()
        queue.clock.now += timedelta(minutes=rng.choice([0, 1, 7, 20]))
        now = queue.clock.now
        if roll < 0.5:
            assert queue.queue.next(who, lease_minutes=30) == oracle.next(who, now, timedelta(minutes=30)), step
        elif roll < 0.7:  # judge the question this person holds, if any
            held = [q for (q, w), v in oracle.claims.items() if w == who and v[1] > now]
            if held:
                queue.judgments.set(held[0], f"d{step}", rng.randint(0, 3), annotator=who)
                oracle.judged[held[0]].add(who)
        elif roll < 0.85:
            q = rng.choice(oracle.questions)
            live = (q, who) in oracle.claims and oracle.claims[q, who][1] > now
            assert queue.queue.renew(q, who, lease_minutes=30) == live, step
            if live:
                oracle.claims[q, who] = (oracle.claims[q, who][0], now + timedelta(minutes=30))
        else:
            q = rng.choice(oracle.questions)
            assert queue.queue.release(q, who) == ((q, who) in oracle.claims), step
            oracle.claims.pop((q, who), None)
        live = {(q, w) for (q, w), v in oracle.claims.items() if v[1] > now}
        for q in oracle.questions:  # never more seats than the overlap
            assert len(oracle.judged[q] | {w for (c, w) in live if c == q}) <= overlap
