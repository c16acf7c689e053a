"""The anonymous catalogue answered from the cache, before most of the middleware stack.

An anonymous visitor's catalogue is the same page for everyone of a language (no CSRF token,
the language switch is a link: templates/base.html), so the whole response, body and headers,
is kept per process on the stock version (rental/stock.py), read on every request: a committed
change is on the very next request. This sits right after the session and locale middleware;
a kept response skips the rest (CSRF, authentication, messages, URL resolution, the view).

Only a request that cannot be anyone's nor carry a message takes this way: a GET of the
catalogue's path with no query string, no session cookie (so no user and no message in the
session), no messages cookie and no Authorization header. Everything else, and the first
request at each version, goes through the whole stack; the response kept is the one that stack
produced (its headers as the middleware inside this one set them; the middleware outside adds
its own to both alike), and only when it is a plain 200 for an anonymous visitor that sets no
cookie. What the inner stack checks and this way must still check: the Host header
(ALLOWED_HOSTS, CommonMiddleware's `get_host()`).
"""

from django.conf import settings
from django.contrib.messages.storage.cookie import CookieStorage
from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from django.utils.translation import get_language

from . import stock


class AnonymousCatalogueMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response
        self.path = None  # the catalogue's, on the first request (the URLconf is loaded then)
        # Rules of CommonMiddleware's that this way would skip: then it is never taken.
        self.enabled = not settings.DISALLOWED_USER_AGENTS and not settings.PREPEND_WWW

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if self.path is None:
            self.path = reverse("rental:catalogue")
        if not (
            self.enabled
            and request.path_info == self.path
            and request.method == "GET"
            and not request.META.get("QUERY_STRING")
            and settings.SESSION_COOKIE_NAME not in request.COOKIES
            and CookieStorage.cookie_name not in request.COOKIES
            and "HTTP_AUTHORIZATION" not in request.META
        ):
            return self.get_response(request)
        host = request.get_host()  # DisallowedHost (400) as CommonMiddleware would raise it
        stock_version = stock.version()
        if stock_version is None:
            return self.get_response(request)
        key = ("anonymous catalogue response", get_language(), host, request.is_secure())
        kept = stock.entry(key, stock_version)
        if kept is not None:
            body, headers, session_accessed = kept
            response = HttpResponse(body, headers=headers)
            if session_accessed:  # SessionMiddleware then adds `Vary: Cookie` as it did
                request.session.accessed = True
            return response
        valid_until = stock.holds_until()
        response = self.get_response(request)
        user = getattr(request, "user", None)
        if (
            response.status_code == 200
            and not response.streaming
            and not response.cookies
            and user is not None
            and not user.is_authenticated
            and not request.session.modified
        ):
            kept = (response.content, dict(response.headers), request.session.accessed)
            stock.keep(key, kept, stock_version, valid_until)
        return response
