"""Per-token rate limit (API_RATE_LIMIT, e.g. "120/min"), counted in the shared cache; a
request without a token is counted per client address."""

from django.conf import settings
from rest_framework.throttling import SimpleRateThrottle

from .models import ApiToken


class TokenRateThrottle(SimpleRateThrottle):
    scope = "api"

    def get_rate(self) -> str:
        return settings.API_RATE_LIMIT  # read per request, so a setting override applies

    def get_cache_key(self, request, view) -> str:
        if isinstance(request.auth, ApiToken):
            ident = f"token-{request.auth.pk}"
        else:
            ident = f"ip-{self.get_ident(request)}"
        return f"api-throttle:{ident}"
