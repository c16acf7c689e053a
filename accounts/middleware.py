from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import resolve_url


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
