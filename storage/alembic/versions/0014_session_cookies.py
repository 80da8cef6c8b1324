"""sessions.client_hash, code_hash, code_expires_at, cookie_hash: a built-in sign-in kept in a cookie"""
from __future__ import annotations

from alembic import op

revision = "0014"
down_revision = "0013"


def upgrade() -> None:
    """`client_hash`: the digest of the client and browser a session signed in from; a session read back
    from its cookie is refused from any other (labeler_storage.accounts.session_user). `code_hash` and
    `code_expires_at`: the one-time code, valid a minute, that the browser trades for the cookie at the
    team server's /_labeler/session route. `cookie_hash`: the digest of the cookie's token, a second token
    of the same session (the tab that signed in keeps its own). NULL for sessions of earlier versions: no
    cookie restores them."""
    op.execute("ALTER TABLE sessions ADD COLUMN client_hash TEXT")
    op.execute("ALTER TABLE sessions ADD COLUMN code_hash TEXT")
    op.execute("ALTER TABLE sessions ADD COLUMN code_expires_at TEXT")
    op.execute("ALTER TABLE sessions ADD COLUMN cookie_hash TEXT")
    op.execute("CREATE UNIQUE INDEX ix_sessions_code_hash ON sessions (code_hash)")
    op.execute("CREATE UNIQUE INDEX ix_sessions_cookie_hash ON sessions (cookie_hash)")
