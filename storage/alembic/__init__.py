"""The Alembic environment of the labeler database: env.py and one revision per schema version (versions/).

labeler_storage.migrations runs it programmatically (no alembic.ini); revision "0007" is schema version 7.
"""
