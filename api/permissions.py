"""Scopes: a view declares `required_scopes = {"GET": "read", "POST": "order"}` (HTTP method
→ scope); a token without that scope gets 403."""

from django.core.exceptions import ImproperlyConfigured
from django.utils.translation import gettext as _
from rest_framework.permissions import BasePermission

from .models import ApiToken

# HEAD and OPTIONS need what GET needs.
_AS_GET = frozenset({"HEAD", "OPTIONS"})


def required_scope(view, method: str) -> str | None:
    scopes = getattr(view, "required_scopes", None)
    if scopes is None:
        raise ImproperlyConfigured(
            f"{type(view).__name__} must declare required_scopes (HTTP method -> scope)."
        )
    if method in _AS_GET and method not in scopes:
        method = "GET"
    return scopes.get(method)


class HasScope(BasePermission):
    message = None

    def has_permission(self, request, view) -> bool:
        token = request.auth
        if not isinstance(token, ApiToken):
            return False  # DRF answers 401 (no credentials) for an unauthenticated request
        method = request.method.upper()
        if not hasattr(view, method.lower()) and method not in _AS_GET:
            return True  # the view answers 405 for a method it does not have
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
