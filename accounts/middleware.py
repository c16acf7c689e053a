from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import resolve_url
from django.utils.cache import add_never_cache_headers


class HtmxLoginRedirectMiddleware:
    """An htmx request whose session expired would swap the login page into a fragment (a
    payment status box, say): tell htmx to load the login page as a whole page instead."""

    def __init__(self, get_response):
        self.get_response = get_response
        self.login_path = None

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if getattr(request, "htmx", False) and response.status_code == 302:
            if self.login_path is None:
                self.login_path = resolve_url(settings.LOGIN_URL)
            location = response.get("Location", "")
            if location.startswith(self.login_path):
                redirect = HttpResponse(status=204)
                redirect["HX-Redirect"] = location
                return redirect
        return response


class NoStoreMiddleware:
    """Nothing a logged-in person is shown, and no CSV download, is kept by a browser's cache
    (back button, shared computer) or by a proxy: `Cache-Control: no-store` on every response
    to a request that carries credentials (the session cookie, which every logged-in request
    has, or an Authorization header) and on every CSV. Telling by the cookie costs no query:
    loading the session and the user would add two to pages that need neither (the htmx
    summary). Anonymous pages such as the catalogue stay cacheable, and static files never get
    here (WhiteNoise answers them first)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        has_credentials = (
            settings.SESSION_COOKIE_NAME in request.COOKIES or "HTTP_AUTHORIZATION" in request.META
        )
        if has_credentials or response.get("Content-Type", "").startswith("text/csv"):
            add_never_cache_headers(response)
        return response
