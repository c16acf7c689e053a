"""`Authorization: Bearer gr_<prefix>_<secret>`: request.user is the token's owner,
request.auth the ApiToken."""

from django.utils.translation import gettext_lazy as _
from rest_framework import authentication, exceptions

from .tokens import TokenRefused, token_authenticate

REFUSALS = {
    TokenRefused.MALFORMED: _(
        "The Authorization header must be “Bearer gr_<prefix>_<secret>”, as the token was shown "
        "when it was created."
    ),
    TokenRefused.UNKNOWN: _("This API token is not known. Create one on your account page."),
    TokenRefused.REVOKED: _("This API token was revoked. Create a new one on your account page."),
    TokenRefused.EXPIRED: _("This API token has expired. Create a new one on your account page."),
}


class BearerTokenAuthentication(authentication.BaseAuthentication):
    keyword = "Bearer"

    def authenticate(self, request):
        header = authentication.get_authorization_header(request)
        if not header:
            return None
        parts = header.split()
        if parts[0].lower() != self.keyword.lower().encode():
            return None  # another scheme: not ours, the request is unauthenticated
        if len(parts) != 2:
            raise exceptions.AuthenticationFailed(REFUSALS[TokenRefused.MALFORMED])
        try:
            raw = parts[1].decode("ascii")
        except UnicodeDecodeError:
            raise exceptions.AuthenticationFailed(REFUSALS[TokenRefused.MALFORMED]) from None
        try:
            token = token_authenticate(raw)
        except TokenRefused as refused:
            raise exceptions.AuthenticationFailed(REFUSALS[refused.reason]) from None
        return token.owner, token

    def authenticate_header(self, request) -> str:
        return f'{self.keyword} realm="api"'
