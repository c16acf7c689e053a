"""Answers /healthz, /readyz and /metrics ahead of every other middleware.

Load balancers and Prometheus call these by IP over plain HTTP: ahead of SecurityMiddleware
they are never redirected to HTTPS, and since nothing in their answers depends on the Host
header, they are not refused by ALLOWED_HOSTS either. No session, locale or CSRF work is
done for them. /metrics guards itself (a setting and a bearer token)."""

from . import views

ENDPOINTS = {
    "/healthz": views.healthz,
    "/readyz": views.readyz,
    "/metrics": views.metrics,
}


class OperabilityEndpointsMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        view = ENDPOINTS.get(request.path_info.rstrip("/") or "/")
        if view is None:
            return self.get_response(request)
        return view(request)
