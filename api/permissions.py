"""Scopes: a view declares `required_scopes = {"GET": "read", "POST": "order"}` (HTTP method
→ scope); a token without that scope gets 403.

OPTIONS (DRF's description of the view; it changes nothing) is answered for any valid token:
the actions it lists are checked per method, so it shows only what the token may do. HEAD
needs what GET needs, and a view without GET answers HEAD with 405 like any other method it
does not have."""

from django.core.exceptions import ImproperlyConfigured
from django.utils.translation import gettext as _
from rest_framework.permissions import BasePermission

from .models import ApiToken

# Answered for any authenticated token.
_ANY_SCOPE = frozenset({"OPTIONS"})


def required_scope(view, method: str) -> str | None:
    scopes = getattr(view, "required_scopes", None)
    if scopes is None:
        raise ImproperlyConfigured(
            f"{type(view).__name__} must declare required_scopes (HTTP method -> scope)."
        )
    if method == "HEAD" and method not in scopes:
        method = "GET"
    return scopes.get(method)


class HasScope(BasePermission):
    message = None

    def has_permission(self, request, view) -> bool:
        token = request.auth
        if not isinstance(token, ApiToken):
            return False  # DRF answers 401 (no credentials) for an unauthenticated request
        method = request.method.upper()
        if method in _ANY_SCOPE:
            return True
        # Django gives a view with `get` a `head`; without it the view answers 405.
        if not hasattr(view, method.lower()):
            return True
        scope = required_scope(view, method)
        if scope is None:
            raise ImproperlyConfigured(
                f"{type(view).__name__}.required_scopes has no scope for {method}."
            )
        if scope in token.scope_set:
            return True
        self.message = _(
            "This token lacks the “%(scope)s” scope needed here. Create a token with it on "
            "your account page."
        ) % {"scope": scope}
        return False
