"""Corpora: the model (`model`: Document, Corpus), the readers (`readers`: JSONL, CSV, a folder of
.txt/.md files, a BEIR folder), versions of one corpus over time (`versions`: content hashes, diffs,
stale judgments) and archive extraction (`archive`: an uploaded zip's text members, bounded).
Reading files is bounded by `labeler.file_guard`, shared with every other reader of the core."""
from labeler.corpus.model import Corpus, Document
from labeler.corpus.readers import (ID_KEYS, MAX_DOCUMENT_LINE_BYTES, TEXT_SUFFIXES, load_corpus, load_text_folder,
                                    parse_csv_corpus, parse_jsonl_corpus, read_jsonl_corpus)

__all__ = ["Corpus", "Document", "ID_KEYS", "MAX_DOCUMENT_LINE_BYTES", "TEXT_SUFFIXES", "load_corpus",
           "load_text_folder", "parse_csv_corpus", "parse_jsonl_corpus", "read_jsonl_corpus"]
