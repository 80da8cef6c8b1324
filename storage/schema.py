"""The database schema: the current tables as one constant; numbered Alembic revisions build it.

`SCHEMA` describes the tables as they are after the last revision; queries use it.
labeler_storage.migrations (the revisions in storage/alembic/versions/) brings any older database, down
to an empty one, up to date.

Times are ISO 8601 UTC strings ("2026-11-29T10:00:00Z"), JSON is stored as text: both behave
the same on SQLite and PostgreSQL and round-trip exactly.
"""
from __future__ import annotations

import functools
import json
from typing import Any

import sqlalchemy as sa


class JSONText(sa.types.TypeDecorator):
    """JSON kept as text, written with ensure_ascii=False and read back exactly."""

    impl = sa.Text
    cache_ok = True

    def process_bind_param(self, value: Any, dialect) -> str | None:
        return None if value is None else json.dumps(value, ensure_ascii=False)

    def process_result_value(self, value: str | None, dialect) -> Any:
        return None if value is None else json.loads(value)


def dialect_insert(dialect: str) -> Any:
    """The dialect's `insert` construct, which has ON CONFLICT clauses (SQLite and PostgreSQL)."""
    if dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import insert
    else:
        from sqlalchemy.dialects.sqlite import insert
    return insert


@functools.lru_cache(maxsize=16)
def insert_ignore(table: sa.Table, dialect: str) -> Any:
    """INSERT ... ON CONFLICT DO NOTHING into `table` (built once per table and dialect): of two writers
    that race to insert one row, one inserts it and the other goes on."""
    return dialect_insert(dialect)(table).on_conflict_do_nothing()


# v9: an imported scale may hold any 64-bit grade; SQLite's INTEGER is 64-bit, PostgreSQL's BIGINT.
GRADE = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def _owned_by(column: str, **flags: Any) -> sa.Column:
    """`question_id` or `collection_id`: the owning row's id; deleting the owner deletes this row."""
    return sa.Column(column, sa.Integer, sa.ForeignKey(f"{column.removesuffix('_id')}s.id", ondelete="CASCADE"), **flags)


def _when_and_who(*events: str) -> list[sa.Column]:
    """For each event ("created", "updated"): `<event>_at` (an ISO time) and `<event>_by` (who; "" unknown)."""
    columns = []
    for event in events:
        columns += [sa.Column(f"{event}_at", sa.Text, nullable=False),
                    sa.Column(f"{event}_by", sa.Text, nullable=False, server_default="")]
    return columns

# --------------------------------------------------------------------------- the current schema

SCHEMA = sa.MetaData()

collections = sa.Table(
    "collections", SCHEMA,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("name", sa.Text, nullable=False, unique=True),
    sa.Column("corpus_path", sa.Text),
    sa.Column("corpus_fingerprint", sa.Text),
    sa.Column("created_at", sa.Text, nullable=False),
    # v4: bumped by every write to the collection's questions, judgments or runs (a cache key)
    sa.Column("revision", sa.Integer, nullable=False, server_default="0"),
    # v6: who recorded the corpus, and when
    sa.Column("corpus_set_by", sa.Text, nullable=False, server_default=""),
    sa.Column("corpus_set_at", sa.Text),
)

questions = sa.Table(
    "questions", SCHEMA,
    sa.Column("id", sa.Integer, primary_key=True),
    _owned_by("collection_id", nullable=False),
    sa.Column("query_id", sa.Text, nullable=False),
    sa.Column("text", sa.Text, nullable=False),
    sa.Column("query_type", sa.Text, nullable=False, server_default=""),
    sa.Column("unanswerable", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.Column("notes", sa.Text, nullable=False, server_default=""),
    sa.Column("author", sa.Text, nullable=False, server_default=""),
    sa.Column("created_at", sa.Text, nullable=False),
    sa.Column("updated_at", sa.Text, nullable=False),
    sa.Column("extra", JSONText, nullable=False, server_default="{}"),
    # v3: who an imported golden file credits, and the corpus the question was written against
    sa.Column("credited_annotators", JSONText, nullable=False, server_default="[]"),
    sa.Column("corpus_fingerprint", sa.Text),
    sa.Column("updated_by", sa.Text, nullable=False, server_default=""),  # v6
    # v11: the collection revision of the question's last change (labeler_storage.collection.bump_revision)
    sa.Column("touched", sa.Integer, nullable=False, server_default="0"),
    sa.UniqueConstraint("collection_id", "query_id", name="uq_questions_collection_query"),
)

judgments = sa.Table(
    "judgments", SCHEMA,
    sa.Column("id", sa.Integer, primary_key=True),
    _owned_by("question_id", nullable=False),
    sa.Column("doc_id", sa.Text, nullable=False),
    sa.Column("grade", GRADE, nullable=False),
    sa.Column("annotator", sa.Text, nullable=False),
    sa.Column("created_at", sa.Text, nullable=False),
    sa.Column("updated_at", sa.Text, nullable=False),
    sa.Column("note", sa.Text, nullable=False, server_default=""),  # v2
    sa.Column("doc_hash", sa.Text),  # v8: the document's content hash when graded (NULL: not known)
    sa.UniqueConstraint("question_id", "doc_id", "annotator", name="uq_judgments_question_doc_annotator"),
    sa.Index("ix_judgments_annotator", "annotator"),  # v3
    sa.Index("ix_judgments_question_doc_grade", "question_id", "doc_id", "grade"),  # v5
)

runs = sa.Table(
    "runs", SCHEMA,
    sa.Column("id", sa.Integer, primary_key=True),
    _owned_by("collection_id", nullable=False),
    sa.Column("config", JSONText, nullable=False),
    sa.Column("config_hash", sa.Text, nullable=False),
    sa.Column("golden_hash", sa.Text, nullable=False),
    sa.Column("corpus_fingerprint", sa.Text),
    sa.Column("summary", JSONText, nullable=False),
    sa.Column("per_query", JSONText, nullable=False),
    sa.Column("created_at", sa.Text, nullable=False),
    sa.Column("name", sa.Text, nullable=False, server_default=""),  # v2
    sa.Column("created_by", sa.Text, nullable=False, server_default=""),  # v6
    sa.Column("corpus_path", sa.Text),  # v8: the corpus the run searched, and its version number
    sa.Column("corpus_version", sa.Integer),
    sa.Index("ix_runs_collection_created", "collection_id", "created_at"),
)

# v8: every content of the collection's corpus that was opened, with its diff against the one before.
corpus_versions = sa.Table(
    "corpus_versions", SCHEMA,
    sa.Column("id", sa.Integer, primary_key=True),
    _owned_by("collection_id", nullable=False),
    sa.Column("version", sa.Integer, nullable=False),  # 1, 2, ... per collection
    sa.Column("corpus_path", sa.Text),
    sa.Column("fingerprint", sa.Text, nullable=False),
    sa.Column("n_docs", sa.Integer, nullable=False),
    sa.Column("diff", JSONText, nullable=False),  # {"added": [...], "deleted": [...], "edited": [...]}
    sa.Column("note", sa.Text, nullable=False, server_default=""),
    sa.Column("created_at", sa.Text, nullable=False),
    sa.Column("created_by", sa.Text, nullable=False, server_default=""),
    sa.UniqueConstraint("collection_id", "version", name="uq_corpus_versions_collection_version"),
)

# v8: what a judge saw, by content hash: the Re-check queue shows it beside the current text.
doc_texts = sa.Table(
    "doc_texts", SCHEMA,
    sa.Column("doc_hash", sa.Text, primary_key=True),
    sa.Column("title", sa.Text, nullable=False),
    sa.Column("text", sa.Text, nullable=False),
    sa.Column("metadata", JSONText, nullable=False, server_default="{}"),
)

# v8: the content hash of each document of the collection's latest corpus version; a judgment
# whose doc_hash differs from its document's row here (or has none) is stale.
corpus_docs = sa.Table(
    "corpus_docs", SCHEMA,
    _owned_by("collection_id", primary_key=True),
    sa.Column("doc_id", sa.Text, primary_key=True),
    sa.Column("doc_hash", sa.Text, nullable=False),
)

# v6: grades that were replaced or cleared, so that nothing is overwritten without a trace. The
# current grade lives in `judgments`; a question's history is these rows plus that one.
judgment_history = sa.Table(
    "judgment_history", SCHEMA,
    sa.Column("id", sa.Integer, primary_key=True),
    _owned_by("question_id", nullable=False),
    sa.Column("doc_id", sa.Text, nullable=False),
    sa.Column("annotator", sa.Text, nullable=False),
    sa.Column("grade", GRADE, nullable=False),
    sa.Column("note", sa.Text, nullable=False, server_default=""),
    sa.Column("given_at", sa.Text, nullable=False),  # when this (old) grade was given
    sa.Column("replaced_at", sa.Text, nullable=False),
    sa.Column("replaced_by", sa.Text, nullable=False),
    sa.Column("change", sa.Text, nullable=False),  # "regraded", "cleared", "import"
    sa.Column("doc_hash", sa.Text),  # v8: the content hash the old grade was given against
    sa.Index("ix_judgment_history_question", "question_id", "doc_id"),
)

# v7: each annotator's own "unanswerable" vote (labeler_storage.votes); questions.unanswerable keeps the consensus.
unanswerable_votes = sa.Table(
    "unanswerable_votes", SCHEMA,
    _owned_by("question_id", primary_key=True),
    sa.Column("annotator", sa.Text, primary_key=True),
    sa.Column("created_at", sa.Text, nullable=False),
)

# v6: team mode. Roles are stored here and enforced by the app layer (labeler_app.access).
users = sa.Table(
    "users", SCHEMA,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("email", sa.Text, nullable=False, unique=True),  # normalized: trimmed, lower case
    sa.Column("name", sa.Text, nullable=False, server_default=""),
    sa.Column("role", sa.Text, nullable=False),
    sa.Column("password_hash", sa.Text),  # argon2; NULL: signs in through OIDC or an invite
    sa.Column("invite_hash", sa.Text),  # sha256 of a one-time invite token
    sa.Column("invite_expires_at", sa.Text),
    sa.Column("disabled", sa.Boolean, nullable=False, server_default=sa.false()),
    *_when_and_who("created", "updated"),
    # v13: "<issuer> <sub>" of the OpenID identity bound at the account's first OpenID sign-in
    sa.Column("oidc_subject", sa.Text),
    sa.Index("ix_users_oidc_subject", "oidc_subject", unique=True),
)

sessions = sa.Table(
    "sessions", SCHEMA,
    sa.Column("token_hash", sa.Text, primary_key=True),  # sha256 of the token; the token is never stored
    _owned_by("user_id", nullable=False),
    sa.Column("created_at", sa.Text, nullable=False),
    sa.Column("expires_at", sa.Text, nullable=False),
    # v14: the sign-in kept in a cookie (labeler_storage.accounts): sha256 of the client it came from, the
    # one-time code the browser trades for the cookie (its sha256, and when it stops working), and the
    # sha256 of the cookie's token (a second token of the session: the tab that signed in keeps its own)
    sa.Column("client_hash", sa.Text),
    sa.Column("code_hash", sa.Text),
    sa.Column("code_expires_at", sa.Text),
    sa.Column("cookie_hash", sa.Text),
    sa.Index("ix_sessions_code_hash", "code_hash", unique=True),
    sa.Index("ix_sessions_cookie_hash", "cookie_hash", unique=True),
)

login_failures = sa.Table(
    "login_failures", SCHEMA,
    sa.Column("email", sa.Text, primary_key=True),  # any address tried, known or not
    sa.Column("failures", sa.Integer, nullable=False),
    sa.Column("first_at", sa.Text, nullable=False),
    sa.Column("locked_until", sa.Text),
)

team_settings = sa.Table(
    "team_settings", SCHEMA,
    sa.Column("key", sa.Text, primary_key=True),
    sa.Column("value", JSONText, nullable=False),
    *_when_and_who("updated"),
)


# v10: the shared work queue (labeler_storage.work_queue): who is judging which question, until when.
claims = sa.Table(
    "claims", SCHEMA,
    _owned_by("question_id", primary_key=True),
    sa.Column("annotator", sa.Text, primary_key=True),
    sa.Column("claimed_at", sa.Text, nullable=False),
    sa.Column("expires_at", sa.Text, nullable=False),
)

# v12: the questions an annotator gave back to the work queue; it offers them these last.
declines = sa.Table(
    "declines", SCHEMA,
    _owned_by("question_id", primary_key=True),
    sa.Column("annotator", sa.Text, primary_key=True),
    sa.Column("at", sa.Text, nullable=False),
)

# v12: per collection, the highest q-NNNN number a deleted question held: a new question never takes it.
deleted_numbers = sa.Table(
    "deleted_numbers", SCHEMA,
    _owned_by("collection_id", primary_key=True),
    sa.Column("number", sa.Integer, nullable=False),
)

# v10: an adjudicator's final grade of a disputed (question, document), which outweighs the consensus.
adjudications = sa.Table(
    "adjudications", SCHEMA,
    _owned_by("question_id", primary_key=True),
    sa.Column("doc_id", sa.Text, primary_key=True),
    sa.Column("grade", GRADE, nullable=False),
    sa.Column("note", sa.Text, nullable=False, server_default=""),
    sa.Column("by", sa.Text, nullable=False),
    sa.Column("at", sa.Text, nullable=False),
)

# v15: machine judges (labeler_storage.machine_grades). A machine grade is never a judgment: it lives here,
# with what made it (judge, model, prompt hash, parameters) and the content hash of the document it
# graded, so a pair is graded once per judge, prompt and content, and an edit makes the grade stale.
machine_grades = sa.Table(
    "machine_grades", SCHEMA,
    sa.Column("id", sa.Integer, primary_key=True),
    _owned_by("question_id", nullable=False),
    sa.Column("doc_id", sa.Text, nullable=False),
    sa.Column("grade", sa.Integer, nullable=False),  # 0-3
    sa.Column("judge", sa.Text, nullable=False),
    sa.Column("model", sa.Text, nullable=False, server_default=""),
    sa.Column("prompt_hash", sa.Text, nullable=False, server_default=""),
    sa.Column("params", JSONText, nullable=False, server_default="{}"),
    sa.Column("doc_hash", sa.Text, nullable=False, server_default=""),  # "": the content was not known
    sa.Column("raw", sa.Text, nullable=False, server_default=""),  # the judge's answer as received
    sa.Column("rationale", sa.Text),
    sa.Column("at", sa.Text, nullable=False),
    sa.UniqueConstraint("question_id", "doc_id", "judge", "prompt_hash", "doc_hash", name="uq_machine_grades_pair"),
    sa.Index("ix_machine_grades_judge", "judge"),
)

# v15: judges saved by name: the declaration as data (secrets only as environment-variable references).
judges = sa.Table(
    "judges", SCHEMA,
    sa.Column("name", sa.Text, primary_key=True),
    sa.Column("spec", JSONText, nullable=False),
    *_when_and_who("created", "updated"),
)

# v16: a machine grade an annotator was shown as a suggestion on the Label page (labeler_storage.suggestions):
# first time only, with their own grade at that moment (NULL: shown before they graded the pair, a post-edit).
suggestions_seen = sa.Table(
    "suggestions_seen", SCHEMA,
    _owned_by("question_id", primary_key=True),
    sa.Column("doc_id", sa.Text, primary_key=True),
    sa.Column("annotator", sa.Text, primary_key=True),
    sa.Column("judge", sa.Text, primary_key=True),
    sa.Column("machine_grade", sa.Integer, nullable=False),  # 0-3, as shown
    sa.Column("grade_before", GRADE),  # the annotator's grade when first shown; NULL: not graded yet
    sa.Column("seen_at", sa.Text, nullable=False),
)

# v17: the grades each consensus-only file brought (labeler_storage.grade_sources): its judgments are stored
# under `name` (starting with "("), and count in the consensus (where no person graded the document)
# only while `counted`. `changes`: each later switch of `counted`, as [{"counted", "at", "by"}].
grade_sources = sa.Table(
    "grade_sources", SCHEMA,
    sa.Column("id", sa.Integer, primary_key=True),
    _owned_by("collection_id", nullable=False),
    sa.Column("name", sa.Text, nullable=False),
    sa.Column("file_name", sa.Text, nullable=False, server_default=""),
    sa.Column("imported_at", sa.Text, nullable=False, server_default=""),
    sa.Column("imported_by", sa.Text, nullable=False, server_default=""),
    sa.Column("counted", sa.Boolean, nullable=False, server_default=sa.true()),
    sa.Column("changes", JSONText, nullable=False, server_default="[]"),
    sa.UniqueConstraint("collection_id", "name", name="uq_grade_sources_collection_name"),
)
