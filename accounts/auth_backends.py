"""The authentication backend: allauth's, with the user's staff roles read in the same query
that loads the logged-in user, along with whether they have an authenticator app (staff pages
need one), so the navigation and the role guards cost no query of their own on each request."""

from functools import cache

from allauth.account.auth_backends import AuthenticationBackend as AllauthBackend
from allauth.mfa.models import Authenticator
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db.models import Exists, OuterRef

from .mfa import remember_totp
from .roles import STAFF_GROUPS, remember_staff_roles
from .statements import CompiledQuery

_ANY_USER_ID = -7_919  # stands for the session's user id while the statement is compiled


def _flag(index: int) -> str:
    return f"_in_staff_group_{index}"


@cache
def _user_with_roles_query() -> CompiledQuery:
    """The user's row and, per staff group, whether they belong to it: the ORM's statement,
    compiled once per process (building it took longer than PostgreSQL takes to run it, on
    every request of a logged-in user)."""
    membership = Group.user_set.through.objects.filter(user_id=OuterRef("pk"))
    totp = Authenticator.objects.filter(user_id=OuterRef("pk"), type=Authenticator.Type.TOTP)
    users = (
        get_user_model()
        ._default_manager.filter(pk=_ANY_USER_ID)
        .annotate(
            **{
                _flag(index): Exists(membership.filter(group__name=group))
                for index, group in enumerate(STAFF_GROUPS)
            },
            _has_totp_flag=Exists(totp),
        )
    )
    return CompiledQuery(users, user_id=_ANY_USER_ID)


def _load(user_id):
    """`user_id` comes from the session, already converted by `django.contrib.auth`."""
    return next(iter(_user_with_roles_query().objects(user_id=user_id)), None)


class AuthenticationBackend(AllauthBackend):
    """Logs in as allauth's does (allauth's adapter prefers a subclass of its backend); loading
    the user of a session also tells which staff groups they are in (one query in all). The
    asynchronous `aget_user` stays ModelBackend's: `has_role` then reads the groups itself."""

    def get_user(self, user_id):
        user = _load(user_id)
        if user is None or not self.user_can_authenticate(user):
            return None
        remember_staff_roles(
            user,
            [group for index, group in enumerate(STAFF_GROUPS) if getattr(user, _flag(index))],
        )
        remember_totp(user, user._has_totp_flag)
        return user
