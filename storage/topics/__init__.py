"""The Store's sub-facades, one per topic: `store.questions`, `store.judgments`, `store.queue`,
`store.runs`, `store.machine`, `store.collections`, `store.golden`, `store.sources` (and `store.accounts`,
labeler_storage.accounts). Each method is one transaction over the store's database, calling the
functions of the module that owns the topic (labeler_storage.questions, .runs, ...) with the open
connection; all of them share the store's engine, clock and caches (labeler_storage.topics.base)."""
from labeler_storage.topics.base import Topic
from labeler_storage.topics.collections import Collections
from labeler_storage.topics.golden import Golden
from labeler_storage.topics.judgments import Judgments
from labeler_storage.topics.machine import Machine
from labeler_storage.topics.queue import Queue
from labeler_storage.topics.questions import Questions
from labeler_storage.topics.runs import Runs
from labeler_storage.topics.sources import Sources

__all__ = ["Collections", "Golden", "Judgments", "Machine", "Queue", "Questions", "Runs", "Sources", "Topic"]
