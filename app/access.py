"""Who is acting, and what their role lets them do: checked here, in the app layer, by every action.

A page may hide a button, but hiding is a courtesy: each write in `app/` takes the `Actor` and
calls `actor.require(...)` first, so a call with the wrong role raises `AccessDenied` whatever
the page shows. The roles are stored in the database (`labeler_storage.accounts`):
- viewer: read everything, download exports, see runs;
- annotator: also write questions, grade, run evaluations, and edit or delete their own
  questions while no one else has judged them;
- admin: everything, including opening or uploading a corpus, importing golden files,
  deleting any question, managing users, roles and team settings, and adjudicating
  disagreements (the final grade of a disputed document).
In local mode (one person on 127.0.0.1, no sign-in) the one user is an admin named in the sidebar.
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from labeler.errors import AccessDenied


class Role(StrEnum):
    """A team member's role (the values stored in the database)."""

    ADMIN = "admin"
    ANNOTATOR = "annotator"
    VIEWER = "viewer"


class Can(StrEnum):
    """An action a role may be allowed; the value completes "may not ..."."""

    READ = "read the golden set"
    EXPORT = "download exports"
    WRITE_QUESTION = "write questions"
    GRADE = "grade documents"
    EDIT_OWN_QUESTION = "edit or delete their own questions"
    RUN_EVALUATION = "run evaluations"
    OPEN_CORPUS = "open or upload a corpus"
    IMPORT_GOLDEN = "import golden files"
    EDIT_ANY_QUESTION = "edit or delete other people's questions"
    MANAGE_USERS = "manage users and roles"
    TEAM_SETTINGS = "change team settings"
    DECLARE_SYSTEMS = "declare search systems (the server sends requests where they say)"
    ADJUDICATE = "adjudicate disagreements (set final grades)"
    DECLARE_JUDGES = "declare machine judges (the server sends documents where they say)"
    COUNT_FILE_GRADES = "choose whether an imported file's grades count in the consensus"


_VIEWER = frozenset({Can.READ, Can.EXPORT})
_ANNOTATOR = _VIEWER | {Can.WRITE_QUESTION, Can.GRADE, Can.EDIT_OWN_QUESTION, Can.RUN_EVALUATION}
PERMISSIONS: dict[Role, frozenset[Can]] = {Role.VIEWER: _VIEWER, Role.ANNOTATOR: _ANNOTATOR,
                                           Role.ADMIN: frozenset(Can)}


@dataclass(frozen=True)
class Actor:
    """The person behind an action: the name their writes are recorded under, and their role."""

    name: str
    role: Role
    team: bool = False  # signed in to a team deployment (else the local single-user app)

    def can(self, action: Can) -> bool:
        """True when the role allows `action`."""
        return action in PERMISSIONS[self.role]

    def require(self, action: Can) -> None:
        """Raise AccessDenied unless the role allows `action`."""
        if not self.can(action):
            role = f"{'an' if self.role.value[0] in 'aeiou' else 'a'} {self.role.value}"  # an admin, a viewer
            raise AccessDenied(f"{self.name or 'this user'} is {role} and may not {action.value}.",
                               hint="ask an admin for another role if you need it.")

    @property
    def label(self) -> str:
        """"alice@example.org · annotator" for the sidebar."""
        return f"{self.name} · {self.role.value}" if self.team else f"{self.name or '(no name yet)'} · local"


def local_actor(name: str) -> Actor:
    """The one person of a local deployment: may do everything, under the name they typed."""
    return Actor(" ".join((name or "").split()), Role.ADMIN, team=False)
