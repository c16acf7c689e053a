"""Operability endpoints — /healthz, /readyz, /metrics (answered by
monitoring.middleware before any other middleware) — and the operators' health page."""

import hmac
import json

from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.shortcuts import render
from django.views.decorators.http import require_GET

from accounts.roles import OPERATORS, role_required

from .queues import outbox_backlog, queue_depths
from .readiness import OK, readiness
from .selectors import networks_health, tasks_health

operator_required = role_required(OPERATORS)
SAFE_METHODS = ("GET", "HEAD")


def _plain(body: bytes | str, *, status: int = 200, content_type: str) -> HttpResponse:
    response = HttpResponse(body, status=status, content_type=content_type)
    response["Cache-Control"] = "no-store"
    response["X-Content-Type-Options"] = "nosniff"
    return response


def _json(data: dict, *, status: int = 200) -> HttpResponse:
    return _plain(json.dumps(data), status=status, content_type="application/json")


def healthz(request: HttpRequest) -> HttpResponse:
    """The process answers; nothing else is touched (no database, no cache)."""
    if request.method not in SAFE_METHODS:
        return HttpResponseNotAllowed(SAFE_METHODS)
    return _json({"status": OK})


def readyz(request: HttpRequest) -> HttpResponse:
    """200 when every part is ready, else 503 naming the failing parts."""
    if request.method not in SAFE_METHODS:
        return HttpResponseNotAllowed(SAFE_METHODS)
    checks = readiness()
    failing = sorted(name for name, status in checks.items() if status != OK)
    body = {"status": "failing" if failing else OK, "failing": failing, "checks": checks}
    return _json(body, status=503 if failing else 200)


def _bearer_token(request: HttpRequest) -> str | None:
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


def metrics(request: HttpRequest) -> HttpResponse:
    """The Prometheus scrape: 404 unless METRICS_ENABLED; a bearer token equal to
    METRICS_TOKEN (401 without one, 403 with another; never open without a token set)."""
    if not settings.METRICS_ENABLED:
        return _plain(b"Not Found", status=404, content_type="text/plain")
    if request.method not in SAFE_METHODS:
        return HttpResponseNotAllowed(SAFE_METHODS)
    given = _bearer_token(request)
    if given is None:
        response = _plain(b"Unauthorized", status=401, content_type="text/plain")
        response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    expected = settings.METRICS_TOKEN or ""
    if not expected or not hmac.compare_digest(given.encode(), expected.encode()):
        return _plain(b"Forbidden", status=403, content_type="text/plain")
    from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

    from .metrics import registry

    return _plain(generate_latest(registry), content_type=CONTENT_TYPE_LATEST)


@operator_required
@require_GET
def ops_health(request: HttpRequest) -> HttpResponse:
    context = {
        "networks": networks_health(),
        "tasks": tasks_health(),
        "queues": queue_depths(),
        "outbox": outbox_backlog(),
        "threshold": settings.TASK_FAILURE_ALERT_THRESHOLD,
        "max_scan_age": settings.WATCHER_MAX_SCAN_AGE_SECONDS,
        "max_lag": settings.WATCHER_MAX_LAG_BLOCKS,
    }
    return render(request, "ops/health.html", context)
