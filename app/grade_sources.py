"""Grade sources on the Golden set page and in `labeler sources`: the grades each consensus-only file
brought (labeler_storage.grade_sources), listed apart with their counts, and the one use case that
switches whether a source counts in the consensus (admins in team mode), shared by the page and the CLI."""
from __future__ import annotations

from typing import Any

from labeler_app.access import Actor, Can
from labeler_app.stores import Store

SOURCE_COLUMNS = ("source", "file", "imported", "imported by", "grades", "questions", "counted", "last switched")


def counted_word(counted: bool) -> str:
    """How a source's choice is shown: it counts where no person graded a document, or it is kept apart."""
    return "counted (where no person graded)" if counted else "kept apart (not counted)"


def source_rows(store: Store) -> list[dict[str, Any]]:
    """One row per source of the collection, oldest first (empty: no consensus-only file was imported)."""
    rows = []
    for s in store.sources.list():
        last = s.changes[-1] if s.changes else None
        rows.append({"source": s.name, "file": s.file_name or "(not recorded)",
                     "imported": s.imported_at or "before sources were kept", "imported by": s.imported_by,
                     "grades": s.n_grades, "questions": s.n_questions, "counted": counted_word(s.counted),
                     "last switched": f"{last['at']} by {last['by'] or '?'}" if last else ""})
    return rows


def set_source_counted(store: Store, actor: Actor, name: str, counted: bool) -> str:
    """Count the source's grades in the consensus (where no person graded the document, never over a
    person's grade) or keep them apart; recorded with who and when. The line saying what changed."""
    actor.require(Can.COUNT_FILE_GRADES)
    source = store.sources.set_counted(name, counted, by=actor.name)
    return (f"{source.name}: {counted_word(source.counted)}; {source.n_grades} grades on {source.n_questions} "
            "questions. Statuses, the export's relevance and every metric now follow.")
