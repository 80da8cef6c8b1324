"""The OpenAI-compatible judge against a real HTTP server on localhost that answers from a
word-overlap rule (tests/openai_support.py), not a language model."""
from __future__ import annotations

import time

import pytest

from labeler.errors import ConfigError
from labeler.judges import JudgeFailure, JudgePair, MachineGrade, judge_spec_from_dict, make_judge
from labeler.judges.prompt import UMBRELA_PROMPT
from openai_support import overlap_grade, rule_server

PAIRS = [
    JudgePair("q1", "how do fleas breed", "d1", "Fleas", "how fleas breed and lay eggs", "sha256:a"),
    JudgePair("q1", "how do fleas breed", "d2", "Cats", "cats sleep most of the day", "sha256:b"),
    JudgePair("q2", "solar panel efficiency losses winter", "d3", "Solar", "panel efficiency drops with heat", "sha256:c"),
]


def spec(server, **extra):
    return judge_spec_from_dict({"name": "rule", "kind": "openai", "model": "rule-1", "url": server.url,
                                 "backoff": 0.0, **extra})


def by_pair(results):
    return {(r.query_id, r.doc_id): r for r in results}


def test_openai_judge_grades_pairs_with_provenance():
    with rule_server() as server, make_judge(spec(server, temperature=0.2, max_tokens=50)) as judge:
        results = by_pair(judge.judge(PAIRS))
    assert all(isinstance(r, MachineGrade) for r in results.values())
    for pair in PAIRS:  # the rule's grade, with what it was graded against
        got = results[pair.query_id, pair.doc_id]
        assert got.grade == overlap_grade(pair.question, pair.title + "\n" + pair.text)
        assert (got.judge, got.model, got.doc_hash) == ("rule", "rule-1", pair.doc_hash)
        assert got.prompt_hash == judge.spec.prompt_hash and got.raw == f"##final score: {got.grade}"
        assert got.params["temperature"] == 0.2 and "headers" not in got.params and got.at.endswith("Z")
    assert [results[p.query_id, p.doc_id].grade for p in PAIRS] == [3, 0, 2]
    sent = server.requests[0]["json"]
    assert (sent["model"], sent["temperature"], sent["max_tokens"]) == ("rule-1", 0.2, 50)
    assert sent["messages"][0]["content"].startswith(UMBRELA_PROMPT.split("\n")[0])


def test_openai_judge_retries_429_and_5xx():
    with rule_server() as server, make_judge(spec(server, retries=3)) as judge:
        server.script = ["429", "500", "500"]
        [result] = judge.judge(PAIRS[:1])
    assert isinstance(result, MachineGrade) and result.grade == 3
    assert len(server.requests) == 4


def test_openai_judge_out_of_retries_is_a_failure():
    with rule_server() as server, make_judge(spec(server, retries=1)) as judge:
        server.mode = "500"
        [result] = judge.judge(PAIRS[:1])
    assert isinstance(result, JudgeFailure) and "HTTP 500" in result.error and len(server.requests) == 2


@pytest.mark.parametrize("behaviour, reason", [
    ("malformed", "not a chat completion"), ("no_choices", "not a chat completion"),
    ("no_grade", "no '##final score: N'"), ("out_of_scale", "grade 7 is outside the scale 0-3"),
    ("two_scores", "several final scores"),
])
def test_openai_judge_bad_answer_is_a_failure_never_a_zero(behaviour, reason):
    with rule_server() as server, make_judge(spec(server)) as judge:
        server.script = [behaviour]
        results = by_pair(judge.judge(PAIRS[1:2] + PAIRS[:1]))
    # one request misbehaves; which pair it hits depends on thread timing
    failures = [r for r in results.values() if isinstance(r, JudgeFailure)]
    assert len(failures) == 1 and reason in failures[0].error
    assert all(r.grade == 3 or r.doc_id == "d2" for r in results.values() if isinstance(r, MachineGrade))


def test_openai_judge_deadline_ends_a_slow_or_trickling_answer():
    with rule_server() as server, make_judge(spec(server, timeout=0.5, deadline=1.0, retries=0)) as judge:
        for behaviour in ("slow", "trickle"):
            server.script = [behaviour]
            t0 = time.monotonic()
            [result] = judge.judge(PAIRS[:1])
            assert isinstance(result, JudgeFailure) and time.monotonic() - t0 < 2.5
            assert "within" in result.error, result.error


def test_openai_judge_answer_over_max_bytes_is_refused():
    with rule_server() as server, make_judge(spec(server, max_bytes=100_000)) as judge:
        server.script = ["huge"]
        [result] = judge.judge(PAIRS[:1])
    assert isinstance(result, JudgeFailure) and "max_bytes" in result.error


def test_openai_judge_secret_from_environment_never_shown():
    token = "sk-test-Secret-4242"
    env = {"RULE_KEY": token}
    with rule_server() as server:
        server.token = token
        spec_with_key = spec(server, headers={"Authorization": "Bearer ${RULE_KEY}"})
        with make_judge(spec_with_key, environ=env) as judge:
            [ok] = judge.judge(PAIRS[:1])
            server.script = ["echo_auth"]
            [echoed] = judge.judge(PAIRS[:1])
            declared = repr(judge) + repr(judge.spec) + str(judge.spec.describe())
        assert server.requests[0]["headers"]["Authorization"] == f"Bearer {token}"
    assert isinstance(ok, MachineGrade) and token not in ok.raw and token not in str(ok.params)
    assert isinstance(echoed, JudgeFailure) and "***" in echoed.error and token not in echoed.error
    assert token not in declared and "${RULE_KEY}" in declared


def test_openai_judge_missing_secret_fails_before_sending():
    with rule_server() as server:
        judge = make_judge(spec(server, headers={"Authorization": "Bearer ${NOT_SET_ANYWHERE}"}), environ={})
        with pytest.raises(ConfigError, match="NOT_SET_ANYWHERE"):
            list(judge.judge(PAIRS))
        assert server.requests == []


def test_openai_judge_keeps_rate_and_concurrency():
    import threading

    with rule_server() as server:
        with make_judge(spec(server, rate=20, concurrency=4)) as judge:
            list(judge.judge(PAIRS * 3))  # 9 requests at 20/s: the last starts >= 8 * 0.05 s after the first
        assert max(server.starts) - min(server.starts) >= 0.38
        server.delay, server.peak = 0.3, 0
        with make_judge(spec(server, concurrency=2)) as judge:
            # four callers at once (a page's sessions, say): the judge's own cap holds them to two in flight
            callers = [threading.Thread(target=judge.judge_one, args=(PAIRS[0],)) for _ in range(4)]
            t0 = time.monotonic()
            for c in callers:
                c.start()
            for c in callers:
                c.join()
        assert server.peak <= 2 and time.monotonic() - t0 >= 0.6  # two waves of 0.3 s


def test_openai_judge_refuses_a_host_not_allowed():
    with rule_server() as server:
        with make_judge(spec(server), allowed_hosts=frozenset({"judge.example.org"})) as judge:
            [result] = judge.judge(PAIRS[:1])
        assert isinstance(result, JudgeFailure) and "not a host" in result.error and server.requests == []
