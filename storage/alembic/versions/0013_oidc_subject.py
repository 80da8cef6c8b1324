"""users.oidc_subject: the identity provider's subject an account is bound to"""
from __future__ import annotations

from alembic import op

revision = "0013"
down_revision = "0012"


def upgrade() -> None:
    """The issuer and subject (`sub`) of the OpenID Connect identity an account signed in with first; a
    later sign-in under the same address but another subject is refused (labeler_app.accounts.oidc_actor). Unique:
    one identity is one account. NULL until the first OpenID sign-in (accounts of earlier versions too)."""
    op.execute("ALTER TABLE users ADD COLUMN oidc_subject TEXT")
    op.execute("CREATE UNIQUE INDEX ix_users_oidc_subject ON users (oidc_subject)")
