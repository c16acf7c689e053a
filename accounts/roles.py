"""Staff roles are Django groups; one place answers "may this user do that"."""

from functools import wraps

from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.shortcuts import redirect
from django.utils.translation import gettext as _

from .mfa import has_totp

FINANCE = "finance"
OPERATORS = "operators"
STAFF_GROUPS = (OPERATORS, FINANCE)


def remember_staff_roles(user, groups) -> None:
    """Record which of STAFF_GROUPS `user` belongs to, read along with the user itself
    (`accounts.auth_backends`), so `has_role` needs no query for them."""
    user._staff_group_names = frozenset(groups)


def has_role(user, group: str) -> bool:
    """Active members of `group`, and superusers. The staff groups come with the logged-in
    user (`accounts.auth_backends`); otherwise the user's group names are read once per user
    object, so the navigation and a view's guard share one query."""
    if not user.is_authenticated or not user.is_active:
        return False
    if user.is_superuser:
        return True
    if group in STAFF_GROUPS and hasattr(user, "_staff_group_names"):
        return group in user._staff_group_names
    if not hasattr(user, "_group_names"):
        user._group_names = frozenset(user.groups.values_list("name", flat=True))
    return group in user._group_names


def role_required(group: str):
    """A view decorator: members with an authenticator app pass; members without one are sent
    to set it up (staff move money: a password alone is not enough); anyone else logged in gets
    403 and anonymous visitors go to the login page, coming back here afterwards."""

    def decorate(view):
        @wraps(view)
        def guarded(request, *args, **kwargs):
            if not request.user.is_authenticated:
                return redirect_to_login(request.get_full_path())
            if not has_role(request.user, group):
                raise PermissionDenied(f"{group} group only")
            if not has_totp(request.user):
                messages.warning(
                    request, _("Staff pages need a second factor: set up an authenticator app.")
                )
                return redirect("mfa_activate_totp")
            return view(request, *args, **kwargs)

        return guarded

    return decorate
