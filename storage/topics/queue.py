"""`store.queue`: the shared work queue (labeler_storage.work_queue): claims on questions, each in one
transaction, timed by the store's clock."""
from __future__ import annotations

from collections.abc import Collection, Mapping
from datetime import timedelta

from labeler_storage import work_queue
from labeler_storage.records import DEFAULT_COLLECTION
from labeler_storage.team_settings import read_settings
from labeler_storage.topics.base import Topic

LEASE_MINUTES = 30  # a work-queue claim lasts this long, renewed by each grade


class Queue(Topic):
    """Who judges which question next, and for how long they hold it."""

    def next(self, annotator: str, *, collection: str = DEFAULT_COLLECTION,
             lease_minutes: float = LEASE_MINUTES, give_back: str | None = None,
             first: Mapping[str, float] | None = None, last: Collection[str] = ()) -> str | None:
        """Claim (lease_minutes) the question `annotator` should judge next: one still wanting judges (team
        setting `overlap`) that they have not judged, closest to done first; None when none is left.
        `give_back`: release their claim on that question first, and pass it over. `first`: query_id ->
        priority, the highest first (labeler_app.queue_order). `last`: query ids (likely complete) offered
        only when no other question wants them."""
        with self._db.write() as conn:
            return work_queue.next_question(conn, collection, annotator, overlap=int(read_settings(conn)["overlap"]),
                                            now=self._now(), lease=timedelta(minutes=lease_minutes),
                                            give_back=give_back, first=first, last=last)

    def claim_expiry(self, query_id: str, annotator: str, *, collection: str = DEFAULT_COLLECTION) -> str | None:
        """When `annotator`'s live claim on the question ends (ISO UTC); None when they hold none."""
        with self._db.read() as conn:
            return work_queue.claim_expiry(conn, collection, query_id, annotator, now=self._now())

    def renew(self, query_id: str, annotator: str, *, collection: str = DEFAULT_COLLECTION,
              lease_minutes: float = LEASE_MINUTES) -> bool:
        """Extend `annotator`'s live claim on the question; False when they hold none (expired or never)."""
        with self._db.write() as conn:
            return work_queue.renew_claim(conn, collection, query_id, annotator, now=self._now(),
                                          lease=timedelta(minutes=lease_minutes))

    def release(self, query_id: str, annotator: str, *, collection: str = DEFAULT_COLLECTION) -> bool:
        """Give the question back to the queue; False when `annotator` held no claim on it."""
        with self._db.write() as conn:
            return work_queue.release_claim(conn, collection, query_id, annotator)

    def seats(self, *, collection: str = DEFAULT_COLLECTION) -> dict[str, int]:
        """query_id -> seats taken on it (judges and live claims), every question in creation order."""
        with self._db.read() as conn:
            return work_queue.seats_by_query(conn, collection, now=self._now())

    def claims(self, *, collection: str = DEFAULT_COLLECTION) -> dict[str, list[str]]:
        """query_id -> who holds a live claim on it."""
        with self._db.read() as conn:
            return work_queue.claims_of(conn, collection, now=self._now())

    def progress(self, *, collection: str = DEFAULT_COLLECTION,
                 window_hours: float = 8) -> list[work_queue.AnnotatorProgress]:
        """Per annotator: questions judged, judgments, judgments per hour over the last `window_hours`."""
        with self._db.read() as conn:
            return work_queue.progress(conn, collection, now=self._now(), window=timedelta(hours=window_hours))
