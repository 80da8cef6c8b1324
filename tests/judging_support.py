"""A tiny generated BEIR collection with full qrels, for the judging simulator's tests.

Five topics of twelve documents; each document holds two of its topic's four words among filler
words, so BM25 and a bag-of-words encoder find some of a topic's documents from a question but not
all (the rest share only the words the question does not use): what relevance feedback is for.
"""
from __future__ import annotations

import json
import random
from pathlib import Path

TOPICS = {
    "volcano": ["lava", "magma", "eruption", "crater"],
    "glacier": ["ice", "moraine", "crevasse", "firn"],
    "coral": ["reef", "polyp", "bleaching", "atoll"],
    "desert": ["dune", "arid", "oasis", "sandstorm"],
    "forest": ["canopy", "understory", "timber", "fern"],
}
FILLER = ["report", "study", "region", "measure", "season", "local", "change", "record", "survey", "field",
          "sample", "method", "result", "north", "south", "early", "late", "water", "rate", "level"]
VOCABULARY = sorted({w for ws in TOPICS.values() for w in ws} | set(FILLER))


def write_collection(folder: Path, *, seed: int = 7, docs_per_topic: int = 12) -> dict[str, dict[str, int]]:
    """Write corpus.jsonl, queries.jsonl and qrels/test.tsv; return the qrels."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "qrels").mkdir(exist_ok=True)
    docs, qrels = [], {}
    for t, (topic, words) in enumerate(TOPICS.items()):
        qid = f"q{t + 1}"
        qrels[qid] = {}
        for i in range(docs_per_topic):
            doc_id = f"{topic[:3]}-{i:02d}"
            # Documents 0-3 use the question's two words; the rest only the other two.
            own = words[:2] if i < 4 else words[2:]
            text = " ".join(own + rng.sample(FILLER, 6))
            docs.append({"_id": doc_id, "title": f"{rng.choice(FILLER)} {own[0]}", "text": text})
            qrels[qid][doc_id] = 2 if i < 2 else 1
        # Every question has one judged non-relevant document from the next topic (grade 0 is kept).
        qrels[qid][f"{list(TOPICS)[(t + 1) % len(TOPICS)][:3]}-00"] = 0
    rng.shuffle(docs)
    (folder / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    queries = [{"_id": f"q{t + 1}", "text": f"{words[0]} and {words[1]}"} for t, words in enumerate(TOPICS.values())]
    (folder / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries))
    write_qrels(folder, qrels)
    return qrels


def write_qrels(folder: Path, qrels: dict[str, dict[str, int]]) -> None:
    """Rewrite qrels/test.tsv with these grades."""
    lines = ["query-id\tcorpus-id\tscore\n"]
    lines += [f"{q}\t{d}\t{g}\n" for q, judged in qrels.items() for d, g in sorted(judged.items())]
    (folder / "qrels" / "test.tsv").write_text("".join(lines))
